"""memplan against ExecuTorch's greedy memory planner on real models.

Each model (random weights: nothing is downloaded) is exported with
``torch.export`` and lowered with ``to_edge(...).to_executorch(...)``; the
memory-planning pass calls one algorithm that runs ExecuTorch's ``greedy``
and memplan on the same tensors (with the same alignment, arenas and
aliases) and keeps memplan's plan. Prints a Markdown table: tensors planned,
greedy's arena, memplan's, the max load (no plan can be smaller), the saving
and the planning times.

With ``--training``, the models are training graphs instead: a model with
its loss exported by ``torch.export.experimental._export_forward_backward``
(forward and backward in one graph), lowered twice (keeping memplan's plan,
then greedy's) and run twice each by ``executorch.extension.training``; the
table adds whether each plan's loss and gradients equal eager PyTorch's
(docs/executorch-training.md). Its planning times are the fastest of five
runs of each algorithm on the same tensors.

    pip install ./crates/memplan-py executorch torch torchvision
    python crates/memplan-py/bench/executorch_models.py [--time-limit 1] [--models resnet18,gpt]
    python crates/memplan-py/bench/executorch_models.py --training [--models train_lm_4x128]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.nn.functional as F
import torchvision
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy
from executorch.exir.passes import MemoryPlanningPass
from executorch.extension.training import _load_for_executorch_for_training_from_buffer
from torch._decomp import get_decompositions
from torch.export.experimental import _export_forward_backward

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


class TrainingCNN(torch.nn.Module):
    """A CNN with its cross-entropy loss: four 3x3 convolutions (the middle
    ones strided, or, with ``max_pool``, the first of them replaced by an
    ``nn.MaxPool2d(2)`` and a convolution), global average pooling, a
    linear classifier."""

    def __init__(self, max_pool: bool = False) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2) if max_pool else torch.nn.Identity()
        self.c2 = torch.nn.Conv2d(16, 32, 3, stride=1 if max_pool else 2, padding=1)
        self.c3 = torch.nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.c4 = torch.nn.Conv2d(64, 64, 3, padding=1)
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> Tuple[torch.Tensor]:
        h = self.pool(F.relu(self.c1(x)))
        h = F.relu(self.c4(F.relu(self.c3(F.relu(self.c2(h))))))
        return (F.cross_entropy(self.fc(h.mean(dim=(2, 3))), labels),)


class TrainingMLP(torch.nn.Module):
    """784-512-256-10 with ReLUs and its cross-entropy loss."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256),
            torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> Tuple[torch.Tensor]:
        return (F.cross_entropy(self.layers(x), labels),)


class Block(torch.nn.Module):
    """A pre-norm block with plain causal self-attention (matrix products
    and a softmax, no fused kernel) and a GELU MLP."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (z.view(b, t, self.heads, d).transpose(1, 2)
                   for z in self.qkv(self.norm1(x)).split(c, dim=2))
        attention = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d)) + mask
        y = (attention.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class TrainingLM(torch.nn.Module):
    """A decoder-only language model with its next-token cross-entropy loss:
    token and position embeddings, causal blocks, a head."""

    def __init__(self, vocab: int = 512, width: int = 128, heads: int = 4,
                 layers: int = 4, context: int = 64) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)
        mask = torch.full((context, context), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> Tuple[torch.Tensor]:
        t = tokens.shape[1]
        x = self.tokens(tokens) + self.positions.weight[:t]
        for block in self.blocks:
            x = block(x, self.mask[:t, :t])
        logits = self.head(self.norm(x))
        return (F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1)),)


def images() -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))


#: name -> (builder, example inputs, decompose max-pool's backward first)
TRAINING: Dict[str, Tuple[Callable[[], torch.nn.Module], Callable[[], Any], bool]] = {
    "train_mlp": (TrainingMLP, lambda: (torch.randn(32, 784), torch.randint(0, 10, (32,))), False),
    "train_cnn": (TrainingCNN, images, False),
    "train_cnn_maxpool": (lambda: TrainingCNN(max_pool=True), images, False),
    "train_cnn_maxpool_decomposed": (lambda: TrainingCNN(max_pool=True), images, True),
    "train_lm_4x128": (TrainingLM, lambda: (torch.randint(0, 512, (4, 64)),
                                            torch.randint(0, 512, (4, 64))), False),
    "train_lm_4x256": (lambda: TrainingLM(vocab=1000, width=256, context=128),
                       lambda: (torch.randint(0, 1000, (1, 128)),
                                torch.randint(0, 1000, (1, 128))), False),
}


class Both:
    """Runs greedy, then memplan, on the same tensors; keeps memplan's plan
    (or greedy's, with ``keep="greedy"``). With ``repeat`` > 1 each runs
    that many times and its fastest time is kept (the plans are the
    same each time: the last is used)."""

    __name__ = "greedy_then_memplan"

    def __init__(self, time_limit: float, keep: str = "memplan", repeat: int = 1) -> None:
        self.memplan = memplan.executorch.algorithm(time_limit=time_limit)
        self.keep = keep
        self.repeat = repeat
        self.calls: List[Dict[str, Any]] = []

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        greedy_seconds = memplan_seconds = float("inf")
        for _ in range(self.repeat):
            started = time.perf_counter()
            theirs = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
            greedy_seconds = min(greedy_seconds, time.perf_counter() - started)
            started = time.perf_counter()
            ours = self.memplan(alignment, specs, graph_module, graph_signature, extra_padding)
            memplan_seconds = min(memplan_seconds, time.perf_counter() - started)
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
        return theirs if self.keep == "greedy" else ours


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


def lower(exported: Any, both: Both) -> Any:
    suite = MemoryPlanningAlgorithmSuite(algo_list=[both])
    return to_edge(exported).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    )


def measure_training(name: str, time_limit: float) -> Dict[str, Any]:
    """Plans a training graph (keeping memplan's plan, then greedy's) and
    runs each program twice against eager PyTorch's loss and gradients;
    ``memplan_wrong``/``greedy_wrong`` name what differs."""
    build, example, decompose = TRAINING[name]
    torch.manual_seed(0)
    model = build()
    inputs = example()
    exported = _export_forward_backward(torch.export.export(model, inputs, strict=True))
    if decompose:
        exported = exported.run_decompositions(
            get_decompositions([torch.ops.aten.max_pool2d_with_indices_backward]))
    loss = model(*inputs)[0]
    loss.backward()
    want = {n: p.grad for n, p in model.named_parameters()}

    def wrong(program: Any) -> List[str]:
        module = _load_for_executorch_for_training_from_buffer(program.buffer)
        bad = set()
        for _ in range(2):
            got = module.forward_backward("forward", inputs)[0]
            if not torch.allclose(got, loss.detach(), rtol=1e-4, atol=1e-6):
                bad.add("loss")
            grads = module.named_gradients()
            for n, g in want.items():
                scale = max(float(g.abs().max()), 1e-6)
                if not torch.allclose(grads[n], g, rtol=1e-4, atol=1e-5 * scale):
                    bad.add(n)
        return sorted(bad)

    total: Dict[str, Any] = {}
    for keep in ["memplan", "greedy"]:
        both = Both(time_limit, keep=keep, repeat=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", memplan.executorch.AccumulatingKernelWarning)
            program = lower(exported, both)
        planned = sum(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
        measured = {key: sum(c[key] for c in both.calls) for key in both.calls[0] if key != "optimal"}
        measured["optimal"] = all(c["optimal"] for c in both.calls)
        assert planned == measured[keep], (planned, measured)
        if keep == "memplan":
            total = measured
        total[f"{keep}_wrong"] = wrong(program)
    return total


def mib(n: int) -> str:
    return f"{n:,} ({n / 2**20:.2f} MiB)"


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=1.0,
                        help="memplan's time limit per arena, seconds (default 1)")
    parser.add_argument("--training", action="store_true",
                        help="measure training graphs (and their gradients) instead: "
                        + ", ".join(TRAINING))
    parser.add_argument("--models", default=None,
                        help="comma-separated, among: " + ", ".join(MODELS)
                        + " (or, with --training, among the training graphs)")
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"memplan {memplan.__version__}, --time-limit {args.time_limit}\n")
    if args.training:
        training_table(args.models or ",".join(TRAINING), args.time_limit)
        return
    args.models = args.models or ",".join(MODELS)
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


def training_table(names: str, time_limit: float) -> None:
    def verdict(bad: List[str]) -> str:
        return "yes" if not bad else "no: " + ", ".join(bad)

    print("| training graph | tensors | ExecuTorch greedy (bytes) | memplan (bytes) | max load (bytes) "
          "| saving | memplan time | greedy time | gradients = eager, memplan's plan "
          "| gradients = eager, greedy's plan |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names.split(","):
        t = measure_training(name, time_limit)
        saving = (t["greedy"] - t["memplan"]) / t["greedy"] if t["greedy"] else 0.0
        optimal = " (optimal)" if t["optimal"] else ""
        print(f"| {name} | {t['tensors']} | {mib(t['greedy'])} | {mib(t['memplan'])}{optimal} "
              f"| {mib(t['max_load'])} | {saving:.1%} | {t['memplan_seconds'] * 1000:.0f} ms "
              f"| {t['greedy_seconds'] * 1000:.0f} ms | {verdict(t['memplan_wrong'])} "
              f"| {verdict(t['greedy_wrong'])} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
