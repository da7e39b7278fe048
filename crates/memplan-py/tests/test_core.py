"""The core Python API: values, errors, NumPy and list input, zero sizes,
CSV files, cancellation. Every plan is checked by an independent pairwise
check written here, besides memplan's own validator."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import memplan

SOLVERS = ["auto", "greedy", "search", "boxing", "tela"]


def assert_valid(sizes, starts, ends, offsets, *, inclusive=False, alignments=None, capacity=None):
    """Independent check: no two buffers alive at the same time share an
    address (zero-size buffers share none), offsets aligned, within the
    capacity."""
    sizes = [int(s) for s in sizes]
    offsets = [int(o) for o in offsets]
    ends = [int(e) + 1 if inclusive else int(e) for e in ends]
    starts = [int(s) for s in starts]
    n = len(sizes)
    assert len(offsets) == n
    for i in range(n):
        if alignments is not None:
            a = alignments if isinstance(alignments, int) else int(alignments[i])
            assert offsets[i] % a == 0, f"buffer {i} misaligned"
        if capacity is not None:
            assert offsets[i] + sizes[i] <= capacity
        for j in range(i):
            live = starts[i] < ends[j] and starts[j] < ends[i]
            share = (
                sizes[i] > 0
                and sizes[j] > 0
                and offsets[i] < offsets[j] + sizes[j]
                and offsets[j] < offsets[i] + sizes[i]
            )
            assert not (live and share), f"buffers {j} and {i} overlap"


# The first-fit note's example (inclusive lifetimes): optimum 37 = max load.
NOTE = dict(
    sizes=[10, 5, 8, 4, 6, 12],
    starts=[1, 2, 1, 4, 3, 5],
    ends=[5, 6, 3, 7, 8, 9],
)


def test_solve_values_and_result_fields():
    r = memplan.solve(**NOTE, lifetimes="inclusive")
    assert (r.makespan, r.max_load, r.lower_bound, r.optimal) == (37, 37, 37, True)
    assert r.fragmentation == 0
    assert r.offsets.dtype == np.uint64
    assert r.offsets.shape == (6,)
    assert not r.offsets.flags.writeable
    assert r.solver.startswith("auto/")
    assert r.seconds >= 0 and r.timed_out is False and r.stopped is None
    assert r.capacity is None
    assert isinstance(r.counters, dict)
    assert int((r.offsets + np.array(NOTE["sizes"], dtype=np.uint64)).max()) == 37
    assert_valid(**NOTE, offsets=r.offsets, inclusive=True)
    # The plan object is the same plan, validated by memplan's validator.
    assert r.plan.makespan == 37 and r.plan.offsets.tolist() == r.offsets.tolist()
    r.plan.validate()
    s = r.plan.stats()
    assert (s.buffers, s.max_load, s.makespan, s.fragmentation) == (6, 37, 37, 0)
    assert "makespan=37" in repr(r)


def test_half_open_and_inclusive_lifetimes_differ():
    # [0, 2) and [2, 4) never meet; [0, 2] and [2, 4] meet at 2.
    half = memplan.solve([8, 8], [0, 2], [2, 4])
    assert half.makespan == 8 and half.offsets.tolist() == [0, 0]
    incl = memplan.solve([8, 8], [0, 2], [2, 4], lifetimes="inclusive")
    assert incl.makespan == 16
    excl = memplan.solve([8, 8], [0, 2], [2, 4], lifetimes="exclusive")
    assert excl.makespan == 8


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_gives_a_valid_plan(solver):
    rng = np.random.default_rng(7)
    n = 60
    starts = rng.integers(0, 40, n)
    ends = starts + rng.integers(1, 15, n)
    sizes = rng.integers(1, 100, n)
    alignments = rng.choice([1, 2, 4, 8], n)
    r = memplan.solve(sizes, starts, ends, alignments=alignments, solver=solver, time_limit=0.3)
    assert_valid(sizes, starts, ends, r.offsets, alignments=alignments)
    assert r.max_load <= r.lower_bound <= r.makespan
    assert r.solver.split("/")[0] in (solver, "auto")
    assert r.plan.stats().max_load == r.max_load


def test_lists_and_numpy_arrays_of_any_integer_dtype_agree():
    base = memplan.solve(**NOTE, lifetimes="inclusive", solver="greedy")
    for dtype in [np.uint64, np.int64, np.int32, np.uint32, np.int16, np.uint8]:
        arrays = {k: np.array(v, dtype=dtype) for k, v in NOTE.items()}
        r = memplan.solve(**arrays, lifetimes="inclusive", solver="greedy")
        assert r.offsets.tolist() == base.offsets.tolist(), dtype
    # Non-contiguous views are read in place.
    wide = {k: np.repeat(np.array(v, dtype=np.int64), 2)[::2] for k, v in NOTE.items()}
    assert not wide["sizes"].flags.c_contiguous
    r = memplan.solve(**wide, lifetimes="inclusive", solver="greedy")
    assert r.offsets.tolist() == base.offsets.tolist()
    # Tuples, ranges and NumPy scalars in lists too.
    r = memplan.solve(tuple(NOTE["sizes"]), [np.int64(s) for s in NOTE["starts"]],
                      NOTE["ends"], lifetimes="inclusive", solver="greedy")
    assert r.offsets.tolist() == base.offsets.tolist()


def test_alignments_scalar_or_per_buffer_and_fixed_offsets():
    r = memplan.solve([3, 5, 7], [0, 0, 0], [2, 2, 2], alignments=16)
    assert all(o % 16 == 0 for o in r.offsets.tolist())
    # 7 at 0, 5 at 16, 3 at 32: the best any order can do.
    assert r.makespan == 35 and r.optimal
    r = memplan.solve([3, 5, 7], [0, 0, 0], [2, 2, 2], alignments=[1, 8, 1],
                      offsets=[None, 64, -1])
    assert r.offsets[1] == 64 and r.offsets[1] % 8 == 0
    assert_valid([3, 5, 7], [0, 0, 0], [2, 2, 2], r.offsets)
    # NumPy offsets: negative means free.
    r = memplan.solve([3, 5], [0, 0], [2, 2], offsets=np.array([-1, 40]))
    assert r.offsets[1] == 40


def test_zero_size_buffers():
    sizes = [8, 0, 8, 0, 8]
    starts = [0, 1, 2, 0, 5]
    ends = [4, 3, 6, 9, 9]
    for solver in SOLVERS:
        r = memplan.solve(sizes, starts, ends, alignments=[1, 64, 1, 1, 1],
                          offsets=[None, None, None, 4, None], solver=solver, time_limit=0.2)
        assert r.offsets[1] == 0, solver
        assert r.offsets[3] == 4, solver  # fixed inside a live buffer: no conflict
        assert r.max_load == 16 and r.makespan == 16 and r.optimal, solver
        assert_valid(sizes, starts, ends, r.offsets)
    p = memplan.Problem(sizes, starts, ends)
    assert p.stats().zero_size == 2 and p.stats().min_size == 0
    # A zero-size buffer sitting inside a live one is valid.
    memplan.Plan(p, [0, 4, 8, 4, 0]).validate()
    only = memplan.solve([0, 0], [0, 0], [1, 1], capacity=0)
    assert only.offsets.tolist() == [0, 0] and only.makespan == 0


def test_zero_size_random_property():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 25))
        starts = rng.integers(0, 20, n)
        ends = starts + rng.integers(1, 8, n)
        sizes = rng.integers(0, 9, n) * rng.integers(0, 2, n)
        r = memplan.solve(sizes, starts, ends, time_limit=0.1)
        assert all(r.offsets[i] == 0 for i in range(n) if sizes[i] == 0)
        assert_valid(sizes, starts, ends, r.offsets)
        keep = sizes > 0
        if keep.any():
            alone = memplan.solve(sizes[keep], starts[keep], ends[keep], time_limit=0.1)
            assert alone.max_load == r.max_load
            if alone.optimal and r.optimal:
                assert alone.makespan == r.makespan


@pytest.mark.parametrize(
    "kwargs, field, index, message",
    [
        (dict(sizes=[1, -2], starts=[0, 0], ends=[1, 1]), "sizes", 1, "sizes[1]: must not be negative, got -2"),
        (dict(sizes=[1, 2.5], starts=[0, 0], ends=[1, 1]), "sizes", 1, "sizes[1]: expected an integer, got 2.5"),
        (dict(sizes=[1, 2], starts=[0, 0], ends=[1]), "ends", None, "ends: has 1 values, `sizes` has 2"),
        (dict(sizes=[1, 2], starts=[0, 3], ends=[1, 3]), "ends", 1, "ends[1]: empty lifetime: start 3, end 3 is empty under half-open semantics"),
        (dict(sizes=[1], starts=[0], ends=[2**64 - 1], lifetimes="inclusive"), "ends", 0, "overflows 64 bits"),
        (dict(sizes=[1], starts=[0], ends=[2**64]), "ends", 0, "ends[0]: 18446744073709551616 does not fit in an unsigned 64-bit integer"),
        (dict(sizes=np.array([1.0]), starts=[0], ends=[1]), "sizes", None, "sizes: expected an integer, got an array of dtype float64"),
        (dict(sizes=np.ones((2, 2), dtype=np.int64), starts=[0], ends=[1]), "sizes", None, "2-dimensional"),
        (dict(sizes=[1, 1], starts=[0, 0], ends=[2, 2], alignments=[1, 0]), "alignments", 1, "alignments[1]: alignment must be positive, got 0"),
        (dict(sizes=[1], starts=[0], ends=[2], alignments=8, offsets=[4]), "offsets", 0, "offsets[0]: fixed offset 4 is not a multiple of alignment 8"),
        (dict(sizes=[8, 8], starts=[0, 0], ends=[2, 2], offsets=[0, 4]), "offsets", 1, "offsets[1]: fixed buffer `1` overlaps fixed buffer `0` (index 0) in time and address"),
        (dict(sizes=[1, 1], starts=[0, 0], ends=[1, 1], ids=["a", "a"]), "ids", 1, "ids[1]: duplicate id `a` (first at index 0)"),
        (dict(sizes=[1], starts=[0], ends=[1], ids=[3]), "ids", 0, "ids[0]: expected a string"),
        (dict(sizes=[1], starts=[0], ends=[1], lifetimes="closed"), "lifetimes", None, "lifetimes: unknown lifetime convention `closed` (expected one of `half-open`, `inclusive`, `exclusive`)"),
        (dict(sizes=[1], starts=[0], ends=[1], solver="magic"), "solver", None, "solver: unknown solver `magic` (expected one of `auto`, `greedy`, `search`, `boxing`, `tela`), or a greedy variant `greedy/ORDER/FIT`"),
        (dict(sizes=[1], starts=[0], ends=[1], order="random"), "order", None, "order: unknown order `random` (expected one of"),
        (dict(sizes=[1], starts=[0], ends=[1], fit="worst-fit"), "fit", None, "fit: unknown fit `worst-fit` (expected one of"),
        (dict(sizes=[1], starts=[0], ends=[1], preorders=["xyz"]), "preorders", None, "preorders: unknown preorder `xyz` (expected one of"),
        (dict(sizes=[1], starts=[0], ends=[1], time_limit=-1.0), "time_limit", None, "time_limit: expected a finite number of seconds >= 0, got -1"),
        (dict(sizes=[1], starts=[0], ends=[1], time_limit=float("nan")), "time_limit", None, "time_limit"),
    ],
)
def test_bad_input_names_the_field_and_index(kwargs, field, index, message):
    with pytest.raises(memplan.InputError) as info:
        memplan.solve(**kwargs)
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, memplan.Error)
    assert message in str(e)
    assert (e.field, e.index) == (field, index)


def test_not_found_with_a_capacity():
    with pytest.raises(memplan.NotFound) as info:
        memplan.solve([8, 8], [0, 0], [2, 2], capacity=10)
    e = info.value
    assert e.proven_infeasible and e.capacity == 10 and e.best_makespan == 16
    assert e.max_load == 16 and "proven infeasible" in str(e)
    assert not isinstance(e, ValueError)
    # A heuristic's plan that does not fit proves nothing: greedy on a
    # perfect instance at the max load.
    p = memplan.generate("perfect", 60, seed=2)
    tight = p.with_capacity(p.max_load)
    with pytest.raises(memplan.NotFound) as info:
        tight.solve(solver="greedy")
    assert not info.value.proven_infeasible
    assert info.value.best_makespan > p.max_load
    # ... while the exact search finds the perfect plan.
    r = tight.solve(solver="search", time_limit=20)
    assert r.makespan == p.max_load and r.capacity == p.max_load
    r.plan.validate()


def test_the_head_start_leaves_the_answer_unchanged():
    # A perfect packing at its max load, beyond the greedy variants: the
    # search's exact fill decides it, with or without the head start.
    p = memplan.generate("perfect", 120, seed=2)
    tight = p.with_capacity(p.max_load)
    plans = []
    for head_start in [True, False]:
        r = tight.solve(head_start=head_start, time_limit=10)
        r.plan.validate()
        assert r.makespan == p.max_load and r.solver == "auto/search"
        plans.append(r.offsets.tolist())
    assert plans[0] == plans[1]


def test_every_cli_option_is_accepted():
    p = memplan.generate("random", 80, seed=5)
    runs = [
        dict(solver="greedy", order=o, fit=f)
        for o in ["size", "area", "lifetime", "start", "contention"]
        for f in ["first-fit", "best-fit", "skyline"]
    ] + [
        dict(solver="search", preorders=["wat", "area"], round_robin=True, rerank_parts=False, canonical=False,
             section_inference=False, effective_height=False, dominance=False,
             dynamic_order=False, decompose=False, hatless=False, exact_fill=False,
             time_limit=0.2),
        dict(solver="boxing", iterations=3, target_fragmentation=5.0, size_classes=False, seed=9),
        dict(solver="tela", step_limit=1000, time_limit=0.2),
        dict(solver="tela", step_limit=1000, learned_backtracking=True, learned_threshold=30,
             learned_depth_weight=20, time_limit=0.2),
        dict(solver="tela", step_limit=1000, learned_backtracking=True, learned_jump=True,
             learned_threshold=85, time_limit=0.2),
        dict(solver="auto", time_limit=0),
        dict(solver="auto", head_start=False, time_limit=1),
    ]
    for kwargs in runs:
        r = p.solve(**kwargs)
        r.plan.validate()
        assert r.makespan >= p.max_load, kwargs
    assert p.solve(solver="greedy", order="area", fit="best-fit").solver == "greedy/area/best-fit"
    with pytest.raises(memplan.InputError, match="learned_depth_weight"):
        p.solve(solver="tela", learned_backtracking=True, learned_depth_weight=101)


def test_same_seed_same_plan():
    p = memplan.generate("random", 300, seed=11)
    a = p.solve(solver="boxing", iterations=5, seed=3, time_limit=None)
    b = p.solve(solver="boxing", iterations=5, seed=3, time_limit=None)
    assert a.offsets.tolist() == b.offsets.tolist()


def test_problem_properties_and_csv_round_trip(tmp_path: Path):
    p = memplan.Problem([4, 0, 6], [1, 2, 0], [3, 2, 5], alignments=[1, 1, 2],
                        offsets=[None, None, 8], ids=["a", "z", "c"], lifetimes="inclusive")
    assert len(p) == 3 and p.ids == ["a", "z", "c"] and p.lifetimes == "inclusive"
    assert p.starts.tolist() == [1, 2, 0] and p.ends.tolist() == [3, 2, 5]
    assert p.sizes.tolist() == [4, 0, 6] and p.alignments.tolist() == [1, 1, 2]
    assert p.fixed_offsets == [None, None, 8]
    assert p.max_load == 10 and p.capacity is None
    s = p.stats()
    assert (s.buffers, s.max_load, s.total_size, s.min_size, s.max_size) == (3, 10, 10, 0, 6)
    assert (s.time_start, s.time_end, s.fixed, s.aligned, s.zero_size) == (0, 6, 1, 1, 1)
    path = tmp_path / "p.csv"
    p.to_csv(path)
    text = path.read_text()
    assert text.splitlines()[0] == "id,lower,upper,size,alignment,offset"
    q = memplan.Problem.from_csv(str(path), lifetimes="inclusive", capacity=64)
    assert q.ids == p.ids and q.starts.tolist() == p.starts.tolist() and q.capacity == 64
    r = q.solve()
    plan_path = tmp_path / "plan.csv"
    r.plan.to_csv(plan_path)
    back = memplan.Plan.from_csv(q, plan_path)
    assert back.offsets.tolist() == r.offsets.tolist()
    back.validate()
    r.plan.to_csv(tmp_path / "at.csv", start_address=1024)
    at = memplan.Plan.from_csv(q, tmp_path / "at.csv")
    assert [int(x) for x in at.offsets] == [int(o) + 1024 for o in r.offsets]
    with pytest.raises(memplan.InputError, match="start_address"):
        r.plan.to_csv(tmp_path / "bad.csv", start_address=3)
    assert not (tmp_path / "bad.csv").exists()


def test_csv_errors_name_file_line_and_column(tmp_path: Path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size\na,0,2,4\nb,0,2,4k\n")
    with pytest.raises(memplan.InputError) as info:
        memplan.Problem.from_csv(bad)
    e = info.value
    assert str(e) == f"{bad}:3: column `size`: expected a non-negative integer, got `4k`"
    assert (e.path, e.line, e.field, e.index) == (str(bad), 3, "size", None)
    with pytest.raises(memplan.InputError, match="cannot read file"):
        memplan.Problem.from_csv(tmp_path / "missing.csv")
    good = tmp_path / "good.csv"
    good.write_text("id,lower,upper,size\na,0,4,8\nb,2,6,8\n")
    p = memplan.Problem.from_csv(good)
    plan = tmp_path / "plan.csv"
    plan.write_text("id,offset\na,0\n")
    with pytest.raises(memplan.InputError, match="no offset for buffer `b`"):
        memplan.Plan.from_csv(p, plan)


def test_invalid_plans_name_the_buffers():
    p = memplan.Problem([8, 8, 8], [0, 2, 5], [4, 6, 9], alignments=[1, 4, 1], capacity=16)
    memplan.Plan(p, [0, 8, 0]).validate()
    p.validate([0, 8, 0])
    with pytest.raises(memplan.InvalidPlan) as info:
        memplan.Plan(p, [0, 4, 0]).validate()
    assert info.value.buffers == [0, 1] and isinstance(info.value, ValueError)
    assert "alive at the same time and share addresses" in str(info.value)
    with pytest.raises(memplan.InvalidPlan, match="not a multiple of alignment 4") as info:
        p.validate([0, 10, 0])
    assert info.value.buffers == [1]
    with pytest.raises(memplan.InvalidPlan, match="past the capacity 16"):
        p.validate([0, 8, 16])
    with pytest.raises(memplan.InputError, match="offsets: has 2 values for 3 buffers"):
        memplan.Plan(p, [0, 8])


def test_keyboard_interrupt_cancels_a_long_solve():
    p = memplan.generate("random", 2000, seed=1)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # Boxing iterations without a time limit: minutes, unless cancelled.
        p.solve(solver="boxing", iterations=2**32 - 1, time_limit=None)
    elapsed = time.monotonic() - started
    timer.join()
    assert elapsed < 5, elapsed
    # The next solve works as usual.
    assert memplan.solve([1], [0], [1]).makespan == 1


def test_the_gil_is_released_while_solving():
    p = memplan.generate("random", 2000, seed=1)
    counted = []

    def count():
        n, end = 0, time.monotonic() + 0.4
        while time.monotonic() < end:
            n += 1
        counted.append(n)

    thread = threading.Thread(target=count)
    thread.start()
    r = p.solve(solver="boxing", iterations=2**32 - 1, time_limit=0.6)
    thread.join()
    # The other thread ran throughout: with the GIL held it would count
    # only in the gaps of the 20 ms signal polls.
    assert counted[0] > 10_000
    assert r.timed_out and r.stopped == "time_limit" and not r.optimal
    r.plan.validate()


def test_generate_kinds():
    for kind in ["random", "perfect", "layered", "trace"]:
        p = memplan.generate(kind, 100, seed=1)
        assert len(p) == 100
    assert memplan.generate("layered", 100, seed=1).ids == memplan.generate("layered", 100, seed=1).ids
    with pytest.raises(memplan.InputError, match="kind"):
        memplan.generate("fractal", 10)


def test_version_and_exports():
    assert memplan.__version__
    for name in memplan.__all__:
        assert hasattr(memplan, name), name


def test_docstring_examples():
    import doctest

    result = doctest.testmod(memplan)
    assert result.attempted > 0 and result.failed == 0


def test_gaps_let_buffers_share_addresses(tmp_path: Path):
    # `saved` is idle during [3, 7): `tmp` fits in its addresses; `shrink`
    # keeps only [0, 2) of its 6 bytes during [12, 16): `late` sits on it.
    sizes, starts, ends = [4, 4, 6, 4], [0, 3, 10, 12], [10, 7, 16, 16]
    gaps = ["3-7", None, [(12, 16, 0, 2)], []]
    p = memplan.Problem(sizes, starts, ends, gaps=gaps, ids=["saved", "tmp", "shrink", "late"])
    assert p.gaps == [[(3, 7)], [], [(12, 16, 0, 2)], []]
    assert p.max_load == 6 and p.stats().gaps == 2
    assert memplan.Problem(sizes, starts, ends).max_load == 10
    for solver in ("auto", "greedy", "search"):
        r = memplan.solve(sizes, starts, ends, gaps=gaps, solver=solver)
        assert (r.makespan, r.optimal) == (6, True), solver
        p.validate(r.offsets)
    for solver in ("boxing", "tela"):
        r = p.solve(solver=solver)
        assert r.makespan >= 10 and r.lower_bound == 6, solver
        p.validate(r.offsets)
    p.validate([0, 0, 0, 2])
    with pytest.raises(memplan.InvalidPlan) as info:
        p.validate([0, 0, 0, 1])
    assert info.value.buffers == [2, 3]
    # The gaps round-trip through CSV, in the problem's semantics.
    path = tmp_path / "gaps.csv"
    p.to_csv(path)
    assert path.read_text().splitlines()[:2] == ["id,lower,upper,size,gaps", "saved,0,10,4,3-7"]
    assert memplan.Problem.from_csv(path).gaps == p.gaps
    q = memplan.Problem([4, 4], [0, 3], [9, 6], gaps=[[(3, 6)], None], lifetimes="inclusive")
    assert q.gaps == [[(3, 6)], []] and q.max_load == 4


@pytest.mark.parametrize(
    "gaps, message",
    [
        (["1-4", None], "gaps[0]: gap `1-4` is outside the lifetime 2-10"),
        ([None, "3-x"], "gaps[1]: gap `3-x`: expected `lo-hi` or `lo-hi@wlo:whi`"),
        ([[(3, 5, 0, 9)], None], "gaps[0]: gap `3-5@0:9`: the window must satisfy"),
        ([[(3, 6), (5, 8)], None], "gaps[0]: gaps `3-6` and `5-8` overlap"),
        ([[(3,)], None], "gaps[0]: expected a (lo, hi) or (lo, hi, wlo, whi) tuple, got 1 values"),
        ([5, None], "gaps[0]: expected None, a string"),
        (["3-4"], "gaps: has 1 values, `sizes` has 2"),
    ],
)
def test_bad_gaps_name_the_buffer(gaps, message):
    with pytest.raises(memplan.InputError) as info:
        memplan.Problem([8, 4], [2, 0], [10, 4], gaps=gaps)
    assert message in str(info.value)
    assert info.value.field == "gaps"


def test_hints_are_tried_first_and_counted():
    # First fit would put buffer 0 at 0 and buffer 1 at 8: the hints swap them.
    sizes, starts, ends = [8, 8, 8], [0, 1, 4], [4, 3, 6]
    r = memplan.solve(sizes, starts, ends, hints=[8, 0, None], solver="greedy")
    assert r.offsets.tolist() == [8, 0, 0]
    assert (r.hints, r.hints_kept) == (2, 2)
    assert_valid(sizes, starts, ends, r.offsets)
    r = memplan.solve(sizes, starts, ends, hints=np.array([8, 0, -1]), solver="greedy", ignore_hints=True)
    assert r.offsets.tolist() == [0, 8, 0]
    assert (r.hints, r.hints_kept) == (2, 0)
    p = memplan.Problem(sizes, starts, ends, hints=[8, -1, None])
    assert p.hints.tolist() == [8, -1, -1]
    assert memplan.Problem(sizes, starts, ends).hints is None


def test_stable_keeps_hints_within_a_makespan():
    sizes, starts, ends = [8, 8, 16], [0, 1, 4], [4, 3, 6]
    p = memplan.Problem(sizes, starts, ends, hints=[0, 0, 8])
    r = p.solve(solver="greedy", stable=True, stable_makespan=24)
    assert_valid(sizes, starts, ends, r.offsets)
    assert r.makespan <= 24
    assert (r.hints, r.hints_kept) == (3, 2)
    assert r.counters["hints_bound"] == 2
    r = p.solve(solver="greedy", stable=True, stable_makespan=16)
    assert r.hints_kept == 1 and r.makespan == 16
    with pytest.raises(memplan.NotFound):
        p.solve(solver="greedy", stable=True, stable_makespan=15)
    with pytest.raises(memplan.InputError, match="stable_makespan"):
        p.solve(stable_makespan=16)


def test_replanning_with_old_offsets_keeps_them():
    p = memplan.generate("layered", 300, seed=4)
    first = p.solve(time_limit=0.3)
    hinted = memplan.Problem(p.sizes, p.starts, p.ends, hints=first.offsets)
    r = hinted.solve(time_limit=0.3, stable=True, stable_makespan=first.makespan)
    r.plan.validate()
    assert r.hints_kept == 300 and r.makespan <= first.makespan


def test_bad_hints_name_the_buffer(tmp_path):
    with pytest.raises(memplan.InputError) as e:
        memplan.Problem([8, 8], [0, 0], [2, 2], alignments=4, hints=[0, 6])
    assert (e.value.field, e.value.index) == ("hints", 1)
    assert "not a multiple of alignment 4" in str(e.value)
    with pytest.raises(memplan.InputError, match="hints"):
        memplan.Problem([8, 8], [0, 0], [2, 2], hints=[0])
    path = tmp_path / "in.csv"
    path.write_text("id,lower,upper,size,hint\na,0,2,8,-3\n")
    with pytest.raises(memplan.InputError) as e:
        memplan.Problem.from_csv(str(path))
    assert (e.value.line, e.value.field) == (2, "hint")
    path.write_text("id,lower,upper,size,hint\na,0,2,8,16\nb,0,2,8,-1\n")
    p = memplan.Problem.from_csv(str(path))
    assert p.hints.tolist() == [16, -1]
    assert p.solve(solver="greedy").offsets.tolist() == [16, 0]


def test_solve_pools_fills_the_fast_pool_first_and_pins():
    # Four buffers of 8 alive together; the fast pool holds two.
    sizes, starts, ends = [8, 8, 8, 8], [0, 0, 0, 0], [4, 4, 4, 4]
    pools = [("fast", 16), ("slow", 64, 8)]
    for strategy in ["fastest-first", "guided"]:
        r = memplan.solve_pools(sizes, starts, ends, pools, strategy=strategy, time_limit=0.2)
        names = r.pool_names
        assert names.count("fast") == 2 and names.count("slow") == 2
        assert r.pools.tolist() == [0 if n == "fast" else 1 for n in names]
        for pool, cap in [("fast", 16), ("slow", 64)]:
            idx = [i for i, n in enumerate(names) if n == pool]
            assert_valid(
                [sizes[i] for i in idx],
                [starts[i] for i in idx],
                [ends[i] for i in idx],
                [r.offsets[i] for i in idx],
                capacity=cap,
            )
        # Spilled: two buffers of 8 bytes for 4 steps outside the first pool.
        assert r.spill == [64]
        assert r.spill_bound[0] <= 64
        assert [u["buffers"] for u in r.usage] == [2, 2]
        assert r.usage[0]["pool"] == "fast"
        assert r.strategy in ("fastest-first", "guided")
    # Pinned: buffer 3 must go to slow, buffer 0 to fast.
    r = memplan.solve_pools(sizes, starts, ends, pools, pins=["fast", None, "", "slow"])
    assert r.pool_names[0] == "fast" and r.pool_names[3] == "slow"
    assert r.offsets[3] % 8 == 0


def test_solve_pools_errors():
    sizes, starts, ends = [8, 32], [0, 0], [4, 4]
    with pytest.raises(memplan.PoolsNotFound) as e:
        memplan.solve_pools(sizes, starts, ends, [("fast", 16)], time_limit=0.1)
    assert e.value.proven_infeasible
    with pytest.raises(memplan.InputError, match=r"pins\[1\]: unknown pool `tcm`") as e:
        memplan.solve_pools(sizes, starts, ends, [("fast", 64)], pins=[None, "tcm"])
    assert (e.value.field, e.value.index) == ("pins", 1)
    with pytest.raises(memplan.InputError, match=r"pools\[0\]"):
        memplan.solve_pools(sizes, starts, ends, [("fast", -1)])
    with pytest.raises(memplan.InputError, match="pools"):
        memplan.solve_pools(sizes, starts, ends, [("fast", 64), ("fast", 64)])
    with pytest.raises(memplan.InputError, match="strategy"):
        memplan.solve_pools(sizes, starts, ends, [("fast", 64)], strategy="best")
