"""memplan against ExecuTorch's greedy memory planner on real models.

Each model (random weights: nothing is downloaded) is exported with
``torch.export`` and lowered with ``to_edge(...).to_executorch(...)``; the
memory-planning pass calls one algorithm that runs ExecuTorch's ``greedy``
and memplan on the same tensors (with the same alignment, arenas and
aliases) and keeps memplan's plan. Prints a Markdown table: tensors planned,
greedy's arena, memplan's, the max load (no plan can be smaller), the saving
and the planning times.

    pip install ./crates/memplan-py executorch torch torchvision
    python crates/memplan-py/bench/executorch_models.py [--time-limit 1] [--models resnet18,gpt]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import torch
import torchvision
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy
from executorch.exir.passes import MemoryPlanningPass

import memplan.executorch


class GPT(torch.nn.Module):
    """A small decoder-only transformer: token and position embeddings,
    pre-norm causal self-attention blocks, a language-model head."""

    def __init__(self, vocab: int = 1000, width: int = 256, heads: int = 4,
                 layers: int = 4, context: int = 128) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                             batch_first=True, norm_first=True)
            for _ in range(layers)
        )
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        length = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(length))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(length)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


def encoder() -> torch.nn.Module:
    """A BERT-base-like encoder stack, 4 layers of width 256."""
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)


IMAGE = (1, 3, 224, 224)

#: name -> (builder, example input)
MODELS: Dict[str, Tuple[Callable[[], torch.nn.Module], Callable[[], Any]]] = {
    "mobilenet_v2": (torchvision.models.mobilenet_v2, lambda: torch.randn(*IMAGE)),
    "mobilenet_v3_small": (torchvision.models.mobilenet_v3_small, lambda: torch.randn(*IMAGE)),
    "resnet18": (torchvision.models.resnet18, lambda: torch.randn(*IMAGE)),
    "resnet50": (torchvision.models.resnet50, lambda: torch.randn(*IMAGE)),
    "efficientnet_b0": (torchvision.models.efficientnet_b0, lambda: torch.randn(*IMAGE)),
    "squeezenet1_1": (torchvision.models.squeezenet1_1, lambda: torch.randn(*IMAGE)),
    "densenet121": (torchvision.models.densenet121, lambda: torch.randn(*IMAGE)),
    "vit_b_16": (torchvision.models.vit_b_16, lambda: torch.randn(*IMAGE)),
    "encoder_4x256": (encoder, lambda: torch.randn(1, 128, 256)),
    "gpt_4x256": (GPT, lambda: torch.randint(0, 1000, (1, 128))),
}


class Both:
    """Runs greedy, then memplan, on the same tensors; keeps memplan's."""

    __name__ = "greedy_then_memplan"

    def __init__(self, time_limit: float) -> None:
        self.memplan = memplan.executorch.algorithm(time_limit=time_limit)
        self.calls: List[Dict[str, Any]] = []

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        started = time.perf_counter()
        theirs = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
        greedy_seconds = time.perf_counter() - started
        started = time.perf_counter()
        ours = self.memplan(alignment, specs, graph_module, graph_signature, extra_padding)
        memplan_seconds = time.perf_counter() - started
        self.calls.append(
            dict(
                tensors=len(specs),
                greedy=sum(theirs.bufsizes),
                memplan=sum(ours.bufsizes),
                max_load=sum(r.max_load for r in self.memplan.reports[-1]),
                optimal=all(r.optimal for r in self.memplan.reports[-1]),
                greedy_seconds=greedy_seconds,
                memplan_seconds=memplan_seconds,
            )
        )
        return ours


def measure(name: str, time_limit: float) -> Dict[str, Any]:
    build, example = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    inputs = (example(),)
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    both = Both(time_limit)
    suite = MemoryPlanningAlgorithmSuite(algo_list=[both])
    program = to_edge(exported).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    )
    planned = list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
    total = {key: sum(c[key] for c in both.calls) for key in both.calls[0] if key != "optimal"}
    total["optimal"] = all(c["optimal"] for c in both.calls)
    assert sum(planned) == total["memplan"], (planned, total)
    return total


def mib(n: int) -> str:
    return f"{n:,} ({n / 2**20:.2f} MiB)"


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=1.0,
                        help="memplan's time limit per arena, seconds (default 1)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated, among: " + ", ".join(MODELS))
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"memplan {memplan.__version__}, --time-limit {args.time_limit}\n")
    print("| model | tensors | ExecuTorch greedy (bytes) | memplan (bytes) | max load (bytes) "
          "| saving | memplan time | greedy time |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        t = measure(name, args.time_limit)
        saving = (t["greedy"] - t["memplan"]) / t["greedy"] if t["greedy"] else 0.0
        optimal = " (optimal)" if t["optimal"] else ""
        print(f"| {name} | {t['tensors']} | {mib(t['greedy'])} | {mib(t['memplan'])}{optimal} "
              f"| {mib(t['max_load'])} | {saving:.1%} | {t['memplan_seconds'] * 1000:.0f} ms "
              f"| {t['greedy_seconds'] * 1000:.0f} ms |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
