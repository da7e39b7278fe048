"""memplan inside ExecuTorch: real models exported through
``to_edge(torch.export.export(...)).to_executorch(...)`` with memplan's
memory-planning algorithm, checked three ways: (a) no two tensors alive
together share an address (an independent check here, and ExecuTorch's own
``Verifier``), (b) memplan's arenas are no larger than ExecuTorch's greedy
plan for the same tensors, (c) the program runs in ExecuTorch's runtime and
computes what eager PyTorch computes. A deliberately broken plan fails (a)
and (c).

Skipped, with the reason, when ExecuTorch is not installed (``.ci/run``
installs it)."""

from __future__ import annotations

import types
from typing import Any, Dict, List

import pytest

executorch = pytest.importorskip(
    "executorch", reason="ExecuTorch is not installed: `pip install executorch torch torchvision`"
)
torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from executorch.exir import ExecutorchBackendConfig, to_edge  # noqa: E402
from executorch.exir.memory_planning import (  # noqa: E402
    MemoryPlanningAlgorithmSuite,
    Verifier,
    greedy,
)
from executorch.exir.passes import MemoryPlanningPass  # noqa: E402
from executorch.exir.tensor import TensorSpec  # noqa: E402
from executorch.runtime import Runtime  # noqa: E402

import memplan  # noqa: E402
import memplan.executorch as mx  # noqa: E402


class Encoder(torch.nn.Module):
    """A small transformer: two ``nn.TransformerEncoderLayer``s."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(16, 64)
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
            for _ in range(2)
        )
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x: Any) -> Any:
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(dim=1))


def models() -> Dict[str, Any]:
    """Model builders and inputs (random weights: nothing is downloaded;
    small images keep ExecuTorch's portable kernels quick)."""
    image = (1, 3, 64, 64)
    return {
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), image),
        "resnet18": (lambda: torchvision.models.resnet18(), image),
        "transformer": (Encoder, (2, 12, 16)),
    }


class Comparison:
    """A memory-planning algorithm returning memplan's plan after running
    ExecuTorch's greedy on the same tensors (greedy only reads them), so
    that one compilation measures both."""

    __name__ = "memplan_vs_greedy"

    def __init__(self, algo: Any) -> None:
        self.algo = algo
        self.greedy: List[List[int]] = []
        self.memplan: List[List[int]] = []
        self.specs: List[Any] = []

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        self.specs.extend(specs)
        self.greedy.append(greedy(alignment, specs, graph_module, graph_signature, extra_padding).bufsizes)
        result = self.algo(alignment, specs, graph_module, graph_signature, extra_padding)
        self.memplan.append(result.bufsizes)
        return result


def compile_with(model: Any, inputs: Any, algo: Any) -> Any:
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    suite = MemoryPlanningAlgorithmSuite(algo_list=[algo])
    return to_edge(exported).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    )


def emitted_specs(program: Any) -> Dict[int, Any]:
    """The TensorSpecs of the emitted program's graph, by identity."""
    seen: Dict[int, Any] = {}
    for node in program.exported_program().graph_module.graph.nodes:
        spec = node.meta.get("spec")
        for s in spec if isinstance(spec, (list, tuple)) else [spec]:
            if isinstance(s, TensorSpec):
                seen[id(s)] = s
    return seen


def storage_chain(spec: Any) -> set:
    chain = set()
    while spec is not None:
        chain.add(id(spec))
        spec = spec.storage_base
    return chain


def overlaps(specs: List[Any], bufsizes: List[int]) -> List[str]:
    """Independent check: pairs of tensors in the same arena whose
    inclusive lifetimes meet and whose bytes intersect (unless one is
    stored inside the other), and tensors past their arena's end."""
    problems = []
    for s in specs:
        if s.mem_offset + s.allocated_memory > bufsizes[s.mem_id]:
            problems.append(f"tensor at {s.mem_offset} ends past arena {s.mem_id}")
    for i, a in enumerate(specs):
        for b in specs[:i]:
            if a.mem_id != b.mem_id or a.allocated_memory == 0 or b.allocated_memory == 0:
                continue
            live = a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]
            share = (
                a.mem_offset < b.mem_offset + b.allocated_memory
                and b.mem_offset < a.mem_offset + a.allocated_memory
            )
            aliased = id(a) in storage_chain(b) or id(b) in storage_chain(a)
            if live and share and not aliased:
                problems.append(f"{a.lifetime}@{a.mem_offset} and {b.lifetime}@{b.mem_offset}")
    return problems


def run(program: Any, inputs: Any) -> Any:
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    return method.execute(inputs)[0]


def same_outputs(got: Any, want: Any) -> bool:
    scale = float(want.abs().max())
    return bool(scale > 0 and torch.allclose(got, want, rtol=1e-4, atol=1e-4 * scale))


def arenas_no_larger_than_greedy(comparison: Any, program: Any) -> List[int]:
    """Asserts that memplan's arenas are no larger than greedy's, arena by
    arena, and that `program` uses memplan's; returns its arena sizes."""
    bufsizes = list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
    assert comparison.memplan and len(comparison.memplan) == len(comparison.greedy)
    for ours, theirs in zip(comparison.memplan, comparison.greedy):
        assert len(ours) == len(theirs)
        assert all(o <= t for o, t in zip(ours, theirs)), (ours, theirs)
    assert bufsizes == comparison.memplan[-1]
    return bufsizes


@pytest.mark.parametrize("name", list(models()))
def test_model_plans_run_and_beat_or_match_greedy(name: str) -> None:
    build, shape = models()[name]
    torch.manual_seed(0)
    model = build().eval()
    inputs = (torch.randn(*shape),)
    comparison = Comparison(mx.algorithm(time_limit=2.0))
    program = compile_with(model, inputs, comparison)
    # (b) memplan's arenas are no larger than greedy's, arena by arena, and
    # the program uses memplan's.
    bufsizes = arenas_no_larger_than_greedy(comparison, program)
    report = list(comparison.algo.reports)[-1]
    assert report and all(r.makespan >= r.max_load for r in report)
    assert sum(r.tensors for r in report) > 50

    # (a) no two live tensors share an address: our own check over the
    # tensors planned (as the emitted program has them), and ExecuTorch's
    # Verifier.
    emitted = emitted_specs(program)
    specs = [s for s in comparison.specs if id(s) in emitted]
    assert len(specs) > 50 and all(s.mem_offset is not None for s in specs)
    assert overlaps(specs, bufsizes) == []
    ep = program.exported_program()
    # It raises on a conflict; it counts the pairs of tensors reusing storage.
    assert Verifier(ep.graph_module, True, True, True, ep.graph_signature).verify_storage_reuse() > 0

    # (c) the program runs and computes what eager PyTorch computes.
    with torch.no_grad():
        want = model(*inputs)
    got = run(program, inputs)
    assert same_outputs(got, want), float((got - want).abs().max())


def test_a_broken_plan_is_caught() -> None:
    """Every tensor at offset 0: the checks above must fail on it."""
    torch.manual_seed(0)
    model = Encoder().eval()
    inputs = (torch.randn(2, 12, 16),)

    planned: List[Any] = []

    def broken(alignment, specs, graph_module, graph_signature, extra_padding=0):
        specs = list(specs)
        planned.extend(specs)
        result = mx.memplan_algorithm(alignment, specs, graph_module, graph_signature, extra_padding)
        for alloc in result.spec_dict.values():
            alloc.mem_offset = 0
            alloc.mem_obj_id = 0
        result.bufsizes = [0] + [max(s.allocated_memory for s in result.spec_dict)] * (
            len(result.bufsizes) - 1
        )
        return result

    broken.__name__ = "broken"
    program = compile_with(model, inputs, broken)
    bufsizes = list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
    assert overlaps(planned, bufsizes) != []
    ep = program.exported_program()
    with pytest.raises(Exception, match="storage overlap"):
        Verifier(ep.graph_module, True, True, True, ep.graph_signature).verify_storage_reuse()
    with torch.no_grad():
        want = model(*inputs)
    assert not same_outputs(run(program, inputs), want)


def spec(shape, lifetime, mem_id=None, dtype=None) -> Any:
    s = TensorSpec(dtype or torch.float32, torch.Size(shape))
    s.lifetime = list(lifetime)
    s.mem_id = mem_id
    return s


def test_arenas_aliases_padding_and_bufsizes_as_greedy() -> None:
    """Hand-made TensorSpecs: two arenas (unspecified -> 1), a tensor
    stored inside another, zero-size tensors, arena starts kept for
    submodules, extra padding; bufsizes in greedy's convention."""

    def make() -> List[Any]:
        a = spec([10], [0, 3])  # 40 bytes -> 48 at alignment 16
        b = spec([4], [2, 5])  # 16
        c = spec([6], [4, 8])  # 24 -> 32
        d = spec([0], [1, 9])  # zero-size
        e = spec([8], [0, 2], mem_id=3)  # arena 3: 32
        f = spec([8], [1, 4], mem_id=3)
        view = spec([2], [1, 2])  # stored inside a, 8 bytes in
        view.storage_base = a
        view.storage_base_offset = 16
        return [a, b, c, d, e, f, view]

    module = types.SimpleNamespace(input_mem_buffer_sizes=[0, 64])
    ours_specs = make()
    ours = mx.memplan_algorithm(16, ours_specs, module, None, 8)
    theirs = greedy(16, make(), module, None, 8)
    assert len(ours.bufsizes) == len(theirs.bufsizes) == 4
    assert ours.bufsizes[0] == 0 and ours.bufsizes[2] == 0
    # Arena 1 starts at 64; a (48) and b (16) meet, c (32) meets b: 64 + 64
    # bytes + 8 padding. Arena 3: two 32-byte tensors that meet, + 8.
    assert ours.bufsizes[1] == 64 + 64 + 8
    assert ours.bufsizes[3] == 64 + 8
    assert all(o <= t for o, t in zip(ours.bufsizes, theirs.bufsizes))
    a, b, c, d, e, f, view = ours_specs
    alloc = ours.spec_dict
    assert {alloc[s].mem_id for s in (a, b, c, d, view)} == {1}
    assert {alloc[s].mem_id for s in (e, f)} == {3}
    assert all(alloc[s].mem_offset >= 64 and alloc[s].mem_offset % 16 == 0 for s in (a, b, c, d))
    assert alloc[d].mem_offset == 64  # zero-size: the arena's start
    assert alloc[view].mem_offset == alloc[a].mem_offset + 16
    assert alloc[view].mem_obj_id == alloc[a].mem_obj_id
    # Tensors whose addresses overlap share an object id; others do not.
    for x in (a, b, c):
        for y in (a, b, c):
            rx = range(alloc[x].mem_offset, alloc[x].mem_offset + x.allocated_memory)
            ry = range(alloc[y].mem_offset, alloc[y].mem_offset + y.allocated_memory)
            if set(rx) & set(ry):
                assert alloc[x].mem_obj_id == alloc[y].mem_obj_id
    # Apply as the suite does, then check with our own checker.
    for s, r in alloc.items():
        s.mem_id, s.mem_offset, s.mem_obj_id = r.mem_id, r.mem_offset, r.mem_obj_id
    assert overlaps(ours_specs, ours.bufsizes) == []
    assert [s.alignment for s in ours_specs] == [16] * 7  # realigned


def test_nothing_to_plan_and_bad_specs() -> None:
    module = types.SimpleNamespace()
    assert mx.memplan_algorithm(16, [], module, None, 0).bufsizes == [0, 0]
    assert greedy(16, [], module, None, 0).bufsizes == [0, 0]
    s = spec([4], [0, 1])
    s.lifetime = [None, None]
    with pytest.raises(memplan.InputError, match="no lifetime"):
        mx.memplan_algorithm(16, [s], module, None, 0)
    with pytest.raises(memplan.InputError, match="solver"):
        mx.algorithm(solver="nonsense")


def test_memory_planning_pass_helper() -> None:
    p = mx.memory_planning_pass()
    assert isinstance(p, MemoryPlanningPass)
    assert mx.memplan_algorithm.__name__ == "memplan"


def test_pools_share_tensors_out_among_arenas_with_capacities() -> None:
    """Arenas as memories with capacities (banked planning): a fast arena 1
    too small for everything, a slow arena 2; a tensor pinned to 2 stays
    there; every arena within its capacity, no overlaps."""

    def make() -> List[Any]:
        a = spec([16], [0, 3])  # 64 bytes
        b = spec([16], [1, 4])  # 64
        c = spec([16], [2, 5])  # 64
        d = spec([4], [0, 9], mem_id=2)  # pinned to the slow arena
        view = spec([2], [1, 2])
        view.storage_base = a
        view.storage_base_offset = 16
        return [a, b, c, d, view]

    module = types.SimpleNamespace(input_mem_buffer_sizes=[0, 16])
    for strategy in ["fastest-first", "guided"]:
        algo = mx.algorithm(pools=[(1, 16 + 128 + 8), (2, 4096)], pool_strategy=strategy, time_limit=0.2)
        specs = make()
        result = algo(16, specs, module, None, 8)
        alloc = result.spec_dict
        a, b, c, d, view = specs
        assert alloc[d].mem_id == 2
        # Arena 1 holds 128 bytes from its start 16: two of a, b, c (all
        # three meet at time 2).
        in_fast = [s for s in (a, b, c) if alloc[s].mem_id == 1]
        assert len(in_fast) == 2
        assert result.bufsizes[1] <= 16 + 128 + 8 and result.bufsizes[2] <= 4096
        assert alloc[view].mem_id == alloc[a].mem_id
        assert alloc[view].mem_offset == alloc[a].mem_offset + 16
        for s, r in alloc.items():
            s.mem_id, s.mem_offset, s.mem_obj_id = r.mem_id, r.mem_offset, r.mem_obj_id
        assert overlaps(specs, result.bufsizes) == []
        report = list(algo.reports)[-1]
        assert {r.mem_id for r in report} == {1, 2}
        assert all(r.solver.startswith("pools/") for r in report)
    # Too small for the pinned tensors: PoolsNotFound; unknown mem_id and bad pools: InputError.
    tiny = mx.algorithm(pools=[(1, 64), (2, 64)], time_limit=0.1)
    with pytest.raises(memplan.PoolsNotFound):
        tiny(16, [spec([64], [0, 3], mem_id=2)], types.SimpleNamespace(), None, 0)
    with pytest.raises(memplan.InputError, match="mem_id 3"):
        tiny(16, [spec([4], [0, 3], mem_id=3)], types.SimpleNamespace(), None, 0)
    with pytest.raises(memplan.InputError, match="pools"):
        mx.algorithm(pools=[(0, 64)])


def test_a_model_runs_with_two_arenas() -> None:
    """The encoder with a fast arena of half its greedy size and a big slow
    one: the program verifies and runs, and computes what PyTorch does."""
    torch.manual_seed(0)
    model = Encoder().eval()
    inputs = (torch.randn(2, 12, 16),)
    single = Comparison(mx.algorithm(time_limit=0.5))
    compile_with(model, inputs, single)
    fast = single.memplan[-1][1] // 2
    comparison = Comparison(mx.algorithm(pools=[(1, fast), (2, 1 << 30)], time_limit=0.5))
    program = compile_with(model, inputs, comparison)
    bufsizes = list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)
    assert len(bufsizes) == 3 and 0 < bufsizes[1] <= fast and bufsizes[2] > 0
    emitted = emitted_specs(program)
    specs = [s for s in comparison.specs if id(s) in emitted]
    assert overlaps(specs, bufsizes) == []
    ep = program.exported_program()
    Verifier(ep.graph_module, True, True, True, ep.graph_signature).verify_storage_reuse()
    with torch.no_grad():
        want = model(*inputs)
    assert same_outputs(run(program, inputs), want)
