"""memplan inside ExecuTorch's training programs: a model with its loss
exported by ``torch.export.experimental._export_forward_backward`` (one
graph of forward and backward passes), lowered with memplan's
memory-planning algorithm, and run by ``executorch.extension.training``
(``forward_backward``, ``named_gradients``). Checked: the loss and every
gradient equal eager PyTorch's, on two runs of the same program; no two live
tensors share an address; memplan's arenas are no larger than ExecuTorch's
greedy plan for the same tensors.

And the max-pool case (docs/executorch-training.md): ExecuTorch's
``max_pool2d_with_indices_backward`` kernel adds into its output without
zeroing it, so such graphs give wrong gradients whatever the plan; the
adapter warns, and decomposing the op before lowering gives eager's
gradients with memplan's plan.

Skipped, with the reason, when ExecuTorch is not installed (``.ci/run``
installs it)."""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Tuple

import pytest

executorch = pytest.importorskip(
    "executorch", reason="ExecuTorch is not installed: `pip install executorch torch torchvision`"
)
torch = pytest.importorskip("torch")
training = pytest.importorskip(
    "executorch.extension.training",
    reason="this ExecuTorch has no training runtime (executorch.extension.training)",
)

import torch.nn.functional as F  # noqa: E402
from executorch.exir import ExecutorchBackendConfig, to_edge  # noqa: E402
from executorch.exir.memory_planning import (  # noqa: E402
    MemoryPlanningAlgorithmSuite,
    Verifier,
    naive,
)
from executorch.exir.passes import MemoryPlanningPass  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402
from torch._decomp import get_decompositions  # noqa: E402
from torch.export.experimental import _export_forward_backward  # noqa: E402

import memplan.executorch as mx  # noqa: E402
from test_executorch import (  # noqa: E402
    Comparison,
    arenas_no_larger_than_greedy,
    emitted_specs,
    overlaps,
)

MAX_POOL_BACKWARD = torch.ops.aten.max_pool2d_with_indices_backward


class CNN(torch.nn.Module):
    """Three convolutions (two strided), global average pooling, a linear
    classifier and its cross-entropy loss. ``max_pool=True`` puts an
    ``nn.MaxPool2d(2)`` after the first convolution instead of the second's
    stride."""

    def __init__(self, max_pool: bool = False) -> None:
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2) if max_pool else torch.nn.Identity()
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=1 if max_pool else 2, padding=1)
        self.c3 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x: Any, labels: Any) -> Tuple[Any]:
        h = self.pool(F.relu(self.c1(x)))
        h = F.relu(self.c3(F.relu(self.c2(h))))
        return (F.cross_entropy(self.fc(h.mean(dim=(2, 3))), labels),)


class Block(torch.nn.Module):
    """A pre-norm transformer block with plain causal self-attention
    (matrix products and a softmax, no fused kernel) and a GELU MLP."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x: Any, mask: Any) -> Any:
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (
            z.view(b, t, self.heads, d).transpose(1, 2) for z in self.qkv(self.norm1(x)).split(c, dim=2)
        )
        attention = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d)) + mask
        y = (attention.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class LanguageModel(torch.nn.Module):
    """A small decoder-only transformer language model with its loss: token
    and position embeddings, causal blocks, a head, next-token cross
    entropy."""

    def __init__(self, vocab: int = 64, width: int = 32, heads: int = 2, layers: int = 2,
                 context: int = 16) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)
        mask = torch.full((context, context), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, tokens: Any, targets: Any) -> Tuple[Any]:
        t = tokens.shape[1]
        x = self.tokens(tokens) + self.positions.weight[:t]
        for block in self.blocks:
            x = block(x, self.mask[:t, :t])
        logits = self.head(self.norm(x))
        return (F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1)),)


def training_models() -> Dict[str, Any]:
    """name -> (model builder, inputs builder); random weights and data."""
    return {
        "cnn": (CNN, lambda: (torch.randn(2, 3, 16, 16), torch.tensor([1, 7]))),
        "language_model": (
            LanguageModel,
            lambda: (torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16))),
        ),
    }


def export_training(model: Any, inputs: Any, decompose_max_pool: bool = False) -> Any:
    """The joint forward-backward graph of ``model`` (whose forward returns
    the loss); with ``decompose_max_pool``, max-pool's backward decomposed
    into zeros and scatter_add (the fix of docs/executorch-training.md)."""
    exported = _export_forward_backward(torch.export.export(model, inputs, strict=True))
    if decompose_max_pool:
        exported = exported.run_decompositions(get_decompositions([MAX_POOL_BACKWARD]))
    return exported


def lower(exported: Any, algo: Any) -> Any:
    suite = MemoryPlanningAlgorithmSuite(algo_list=[algo])
    return to_edge(exported).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    )


def eager_step(model: Any, inputs: Any) -> Tuple[Any, Dict[str, Any]]:
    """Eager PyTorch's loss and gradients, by parameter name."""
    model.zero_grad()
    loss = model(*inputs)[0]
    loss.backward()
    return loss.detach(), {name: p.grad.clone() for name, p in model.named_parameters()}


def executorch_steps(program: Any, inputs: Any, runs: int = 2) -> List[Tuple[Any, Dict[str, Any]]]:
    """The loss and gradients of ``runs`` runs of the training program on
    the same inputs (no optimizer step: each run must give the same)."""
    module = training._load_for_executorch_for_training_from_buffer(program.buffer)
    steps = []
    for _ in range(runs):
        outputs = module.forward_backward("forward", inputs)
        gradients = {name: g.clone() for name, g in module.named_gradients().items()}
        steps.append((outputs[0].clone(), gradients))
    return steps


def close(got: Any, want: Any) -> bool:
    scale = max(float(want.abs().max()), 1e-6)
    return bool(got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-5 * scale))


def mismatches(step: Tuple[Any, Dict[str, Any]], want: Tuple[Any, Dict[str, Any]]) -> List[str]:
    """Names (``loss`` or a parameter's) whose ExecuTorch value differs from eager's."""
    (loss, grads), (want_loss, want_grads) = step, want
    assert sorted(grads) == sorted(want_grads), (sorted(grads), sorted(want_grads))
    bad = [] if close(loss, want_loss) else ["loss"]
    return bad + [name for name in want_grads if not close(grads[name], want_grads[name])]


def no_accumulating_kernel_warning(record: List[Any]) -> bool:
    return not any(issubclass(w.category, mx.AccumulatingKernelWarning) for w in record)


@pytest.mark.parametrize("name", list(training_models()))
def test_training_graph_gives_eager_gradients_in_no_more_memory_than_greedy(name: str) -> None:
    build, make_inputs = training_models()[name]
    torch.manual_seed(0)
    model = build()
    inputs = make_inputs()
    comparison = Comparison(mx.algorithm(time_limit=1.0))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        program = lower(export_training(model, inputs), comparison)
    assert no_accumulating_kernel_warning(record)
    # memplan's arenas, used by the program, are no larger than greedy's.
    bufsizes = arenas_no_larger_than_greedy(comparison, program)
    report = list(comparison.algo.reports)[-1]
    assert sum(r.tensors for r in report) > 50  # forward and backward tensors

    # No two live tensors share an address (our check, ExecuTorch's Verifier).
    emitted = emitted_specs(program)
    specs = [s for s in comparison.specs if id(s) in emitted]
    assert len(specs) > 50 and overlaps(specs, bufsizes) == []
    ep = program.exported_program()
    assert Verifier(ep.graph_module, True, True, True, ep.graph_signature).verify_storage_reuse() > 0

    # The loss and every parameter's gradient equal eager PyTorch's, on
    # each of two runs (the second starts from the first's leftovers).
    want = eager_step(model, inputs)
    assert len(want[1]) == len(list(model.parameters())) > 4
    for step in executorch_steps(program, inputs):
        assert mismatches(step, want) == []


def test_max_pool_backward_kernel_adds_into_its_output() -> None:
    """The cause of the max-pool case, in a program of one operator with
    ExecuTorch's naive plan (no two tensors share memory): each run adds
    the gradient to what the output's memory held, so the first run (on
    memory zeroed at load) is right and the second gives twice the
    gradient, the third three times. No plan can make it right."""

    class PoolBackward(torch.nn.Module):
        def forward(self, grad: Any, x: Any, indices: Any) -> Any:
            return MAX_POOL_BACKWARD(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)

    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    _, indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    grad = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    want = PoolBackward()(grad, x, indices)
    assert want.sum() == 10 and (want != 0).sum() == 4
    exported = torch.export.export(PoolBackward(), (grad, x, indices))
    with pytest.warns(mx.AccumulatingKernelWarning, match="max_pool2d_with_indices_backward"):
        lower(exported, mx.memplan_algorithm)
    program = lower(exported, naive)
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    runs = [method.execute((grad, x, indices))[0].clone() for _ in range(3)]
    assert [torch.equal(got, k * want) for k, got in enumerate(runs, start=1)] == [True] * 3


def test_max_pool_training_graph_needs_the_decomposition() -> None:
    """A CNN with max-pool: lowered as exported, the gradients of the layers
    below the pool differ from eager PyTorch's (and memplan warns); with
    max-pool's backward decomposed before lowering, memplan's plan gives
    eager's loss and gradients on every run, in no more memory than
    greedy's."""
    torch.manual_seed(0)
    model = CNN(max_pool=True)
    inputs = (torch.randn(2, 3, 16, 16), torch.tensor([1, 7]))
    want = eager_step(model, inputs)

    with pytest.warns(mx.AccumulatingKernelWarning):
        program = lower(export_training(model, inputs), mx.algorithm(time_limit=0.5))
    wrong = set()
    for step in executorch_steps(program, inputs):
        wrong.update(mismatches(step, want))
    # Below the pool: c1's weight and bias; above it, all right.
    assert wrong == {"c1.weight", "c1.bias"}

    comparison = Comparison(mx.algorithm(time_limit=0.5))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        program = lower(export_training(model, inputs, decompose_max_pool=True), comparison)
    assert no_accumulating_kernel_warning(record)
    for ours, theirs in zip(comparison.memplan, comparison.greedy):
        assert all(o <= t for o, t in zip(ours, theirs)), (ours, theirs)
    for step in executorch_steps(program, inputs):
        assert mismatches(step, want) == []
