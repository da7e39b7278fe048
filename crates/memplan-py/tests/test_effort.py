"""Work budgets (``effort``): the same plan on every run, whatever the
machine's load; the search's schedule switches; bad budgets refused."""

from __future__ import annotations

import numpy as np
import pytest

import memplan

from test_core import assert_valid


def instance(n: int = 120, seed: int = 5):
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 200, n)
    ends = starts + rng.integers(1, 40, n)
    sizes = rng.integers(1, 64, n) * 16
    return sizes, starts, ends


@pytest.mark.parametrize("solver", ["auto", "search", "boxing"])
def test_an_effort_gives_the_same_plan_every_run(solver):
    sizes, starts, ends = instance()
    runs = [
        memplan.solve(sizes, starts, ends, solver=solver, effort=0.05, time_limit=60.0, seed=3)
        for _ in range(3)
    ]
    for r in runs:
        assert_valid(sizes, starts, ends, r.offsets)
        assert r.stopped is None
    assert all(np.array_equal(r.offsets, runs[0].offsets) for r in runs)


def test_schedules_and_reranking_give_valid_plans_at_the_same_optimum():
    sizes, starts, ends = instance(60, 9)
    makespans = set()
    for round_robin in (False, True):
        for rerank_parts in (False, True):
            r = memplan.solve(sizes, starts, ends, solver="search", effort=0.2, time_limit=60.0,
                              round_robin=round_robin, rerank_parts=rerank_parts)
            assert_valid(sizes, starts, ends, r.offsets)
            if r.optimal:
                makespans.add(r.makespan)
    assert len(makespans) <= 1


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), 2e9])
def test_bad_efforts_are_refused_by_name(bad):
    sizes, starts, ends = instance(5)
    with pytest.raises(ValueError, match="effort"):
        memplan.solve(sizes, starts, ends, effort=bad)
