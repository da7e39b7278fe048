"""The max-pool case of ExecuTorch training graphs, step by step
(docs/executorch-training.md, "The max-pool case").

1. One operator, ``max_pool2d_with_indices_backward``, planned by
   ExecuTorch's ``naive`` (no sharing) and run three times: the output
   grows by one gradient each run (the kernel adds into its output).
2. A small CNN with ``nn.MaxPool2d`` exported for training, planned by
   ``naive``, ``greedy``, memplan, memplan with the pool's gradient given
   memory of its own for the whole graph ("isolated"), and the three after
   decomposing the op; each program run three times: the largest error of
   each parameter's gradient against eager PyTorch's.
3. For greedy's and memplan's plans, the earlier tensors whose bytes the
   pool's gradient reuses.

    pip install ./crates/memplan-py executorch torch torchvision
    python crates/memplan-py/bench/executorch_max_pool.py
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.nn.functional as F
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy, naive
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.tensor import TensorSpec
from executorch.extension.training import _load_for_executorch_for_training_from_buffer
from executorch.runtime import Runtime
from torch._decomp import get_decompositions
from torch.export.experimental import _export_forward_backward

import memplan.executorch

MAX_POOL_BACKWARD = torch.ops.aten.max_pool2d_with_indices_backward


def lower(exported: Any, algo: Callable[..., Any]) -> Any:
    suite = MemoryPlanningAlgorithmSuite(algo_list=[algo])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", memplan.executorch.AccumulatingKernelWarning)
        return to_edge(exported).to_executorch(
            ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
        )


class PoolBackward(torch.nn.Module):
    def forward(self, grad: torch.Tensor, x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        return MAX_POOL_BACKWARD(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)


def one_operator() -> None:
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    _, indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    grad = torch.ones(1, 1, 2, 2)
    print("1. max_pool2d_with_indices_backward alone, naive plan (no sharing)")
    print("eager", PoolBackward()(grad, x, indices).flatten().tolist())
    program = lower(torch.export.export(PoolBackward(), (grad, x, indices)), naive)
    print(program.exported_program().graph_module.graph)
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    for run in range(3):
        print(f"run {run + 1}", method.execute((grad, x, indices))[0].flatten().tolist())


class Net(torch.nn.Module):
    """Conv2d(1, 4), ReLU, MaxPool2d(2), Conv2d(4, 4), ReLU, Linear, and
    the cross-entropy loss."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.c2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> Tuple[torch.Tensor]:
        h = F.relu(self.c2(self.pool(F.relu(self.c1(x)))))
        return (F.cross_entropy(self.fc(h.flatten(1)), labels),)


def pool_gradient_specs(graph_module: Any) -> List[Any]:
    """The TensorSpecs of max-pool backward's outputs (its ``grad_input``)."""
    return [
        node.kwargs["grad_input"].meta["spec"]
        for node in graph_module.graph.nodes
        if "max_pool2d_with_indices_backward" in str(node.target)
    ]


def isolated(alignment, specs, graph_module, graph_signature, extra_padding=0):
    """memplan, with the pool's gradient alive over the whole graph: memory
    of its own, shared with no other tensor."""
    specs = list(specs)
    end = max(s.lifetime[1] for s in specs)
    for spec in pool_gradient_specs(graph_module):
        spec.lifetime = [0, end]
    return memplan.executorch.memplan_algorithm(alignment, specs, graph_module, graph_signature, extra_padding)


isolated.__name__ = "isolated"


def training_cnn() -> None:
    torch.manual_seed(0)
    model = Net()
    inputs = (torch.randn(2, 1, 8, 8), torch.tensor([0, 2]))
    model(*inputs)[0].backward()
    want = {name: p.grad for name, p in model.named_parameters()}
    print("\n2. A CNN with max-pool, exported for training; largest gradient error per run")
    print("eager's largest gradient entries:", {n: round(float(g.abs().max()), 4) for n, g in want.items()})
    joint = _export_forward_backward(torch.export.export(model, inputs, strict=True))
    decomposed = joint.run_decompositions(get_decompositions([MAX_POOL_BACKWARD]))
    plans: Dict[str, Tuple[Any, Any]] = {
        "naive": (joint, naive),
        "greedy": (joint, greedy),
        "memplan": (joint, memplan.executorch.memplan_algorithm),
        "memplan, isolated": (joint, isolated),
        "naive, decomposed": (decomposed, naive),
        "greedy, decomposed": (decomposed, greedy),
        "memplan, decomposed": (decomposed, memplan.executorch.memplan_algorithm),
    }
    programs = {}
    for label, (exported, algo) in plans.items():
        program = lower(exported, algo)
        programs[label] = program
        module = _load_for_executorch_for_training_from_buffer(program.buffer)
        arena = list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
        for run in range(3):
            module.forward_backward("forward", inputs)
            got = module.named_gradients()
            errors = {n: f"{float((got[n] - g).abs().max()):.2g}" for n, g in want.items()}
            print(f"{label:20} arena {arena} run {run + 1}: {errors}")

    print("\n3. Earlier tensors whose bytes the pool's gradient reuses")
    for label in ["greedy", "memplan"]:
        graph_module = programs[label].exported_program().graph_module
        names: Dict[int, List[str]] = {}
        specs: Dict[int, Any] = {}
        for node in graph_module.graph.nodes:
            spec = node.meta.get("spec")
            for s in spec if isinstance(spec, (list, tuple)) else [spec]:
                if isinstance(s, TensorSpec) and s.mem_offset is not None:
                    names.setdefault(id(s), []).append(node.name)
                    specs[id(s)] = s
        for target in pool_gradient_specs(graph_module):
            start, end = target.mem_offset, target.mem_offset + target.allocated_memory
            print(f"{label}: the pool's gradient, lifetime {target.lifetime}, bytes [{start}, {end})")
            for key, s in specs.items():
                if s is target or s.lifetime[1] >= target.lifetime[0]:
                    continue
                if s.mem_offset < end and start < s.mem_offset + s.allocated_memory:
                    print(f"    {'/'.join(names[key])}: lifetime {s.lifetime}, "
                          f"bytes [{s.mem_offset}, {s.mem_offset + s.allocated_memory})")


if __name__ == "__main__":
    one_operator()
    training_cnn()
