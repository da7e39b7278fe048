"""One request through the three interfaces: `memplan solve --json` (the
command line), `memplan.solve` (Python) and `memplan_solve` (the C library,
through ctypes) give the same plan and the same report, for every solver,
with and without a time limit, a capacity, hints and pools.

The command line and the C library are found in the Cargo target directory
(the newer of `target/release` and `target/debug`), or at `$MEMPLAN_CLI` and
`$MEMPLAN_CAPI_LIB`; without them the tests skip with a notice (`.ci/run`
builds both before it runs the Python tests).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

import memplan

ROOT = Path(__file__).resolve().parents[3]


def _find(env: str, name: str) -> Optional[Path]:
    given = os.environ.get(env)
    if given:
        return Path(given)
    # The newest build, so that a stale profile is never tested.
    built = [ROOT / "target" / p / name for p in ("release", "debug")]
    built = [path for path in built if path.exists()]
    return max(built, key=lambda path: path.stat().st_mtime, default=None)


CLI = _find("MEMPLAN_CLI", "memplan")
LIB = _find("MEMPLAN_CAPI_LIB", "libmemplan.so")


def _require() -> None:
    if CLI is None or LIB is None:
        message = (
            "skipped: the memplan binary and libmemplan.so were not found in target/ "
            "(set MEMPLAN_CLI and MEMPLAN_CAPI_LIB, or build them with "
            "`cargo build -p memplan-cli -p memplan-capi`)"
        )
        print(message, file=sys.stderr)
        pytest.skip(message)


# Fields that measure the run rather than describe its answer.
TIMING = ("seconds", "check_seconds", "stop_latency")


def _answer(report: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in report.items() if k not in TIMING}


class Instance:
    """A small problem with aligned, fixed and hinted buffers."""

    def __init__(self, hints: bool) -> None:
        self.sizes = [64, 32, 48, 16, 64, 32, 8, 40]
        self.starts = [0, 1, 2, 3, 5, 6, 7, 2]
        self.ends = [4, 5, 7, 9, 8, 10, 9, 6]
        self.alignments = [1, 16, 1, 8, 1, 1, 4, 8]
        self.offsets: List[Optional[int]] = [None, None, None, None, None, None, None, 200]
        self.hints: Optional[List[Optional[int]]] = (
            [0, None, 64, None, 96, None, None, None] if hints else None
        )
        self.pins: List[Optional[str]] = [None, None, "slow", None, None, None, None, "slow"]

    def csv(self, path: Path, pins: bool = False) -> Path:
        header = ["id", "lower", "upper", "size", "alignment", "offset"]
        if self.hints is not None:
            header.append("hint")
        if pins:
            header.append("pool")
        rows = [",".join(header)]
        for i, size in enumerate(self.sizes):
            row = [
                f"b{i}",
                str(self.starts[i]),
                str(self.ends[i]),
                str(size),
                str(self.alignments[i]),
                "" if self.offsets[i] is None else str(self.offsets[i]),
            ]
            if self.hints is not None:
                row.append("" if self.hints[i] is None else str(self.hints[i]))
            if pins:
                row.append(self.pins[i] or "")
            rows.append(",".join(row))
        path.write_text("\n".join(rows) + "\n")
        return path


POOLS = [("fast", 160, 16), ("slow", 4096, 8)]


def _cli(args: Sequence[str]) -> Dict[str, Any]:
    assert CLI is not None
    done = subprocess.run(
        [str(CLI), *args, "--json", "--quiet"], capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    line = done.stdout.strip().splitlines()[-1]
    return json.loads(line)


class CApi:
    """The C library through ctypes: a problem, options and a solve."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        self.lib = lib
        u64 = ctypes.c_uint64
        for name, args in {
            "memplan_problem_new": [ctypes.c_int32, ctypes.c_void_p],
            "memplan_problem_add_buffers": [
                ctypes.c_void_p,
                ctypes.c_size_t,
                ctypes.POINTER(u64),
                ctypes.POINTER(u64),
                ctypes.POINTER(u64),
            ],
            "memplan_problem_set_alignment": [ctypes.c_void_p, ctypes.c_size_t, u64],
            "memplan_problem_set_fixed_offset": [ctypes.c_void_p, ctypes.c_size_t, u64],
            "memplan_problem_set_hint": [ctypes.c_void_p, ctypes.c_size_t, u64],
            "memplan_problem_set_pool": [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t],
            "memplan_options_set_solver": [ctypes.c_void_p, ctypes.c_char_p],
            "memplan_options_set_time_limit": [ctypes.c_void_p, ctypes.c_double],
            "memplan_options_set_capacity": [ctypes.c_void_p, u64],
            "memplan_options_set_seed": [ctypes.c_void_p, u64],
            "memplan_pools_add": [ctypes.c_void_p, ctypes.c_char_p, u64, u64],
            "memplan_solve": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p],
            "memplan_solve_pools": [
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_void_p,
            ],
            "memplan_solution_json": [
                ctypes.c_void_p,
                ctypes.c_char_p,
                ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_size_t),
            ],
            "memplan_pool_solution_json": [
                ctypes.c_void_p,
                ctypes.c_char_p,
                ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_size_t),
            ],
            "memplan_solution_offsets": [ctypes.c_void_p, ctypes.POINTER(u64), ctypes.c_size_t],
        }.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ctypes.c_int32

    def ok(self, status: int, what: str) -> None:
        assert status == 0, f"{what}: status {status}"

    def problem(self, inst: Instance, pins: bool = False) -> ctypes.c_void_p:
        p = ctypes.c_void_p()
        self.ok(self.lib.memplan_problem_new(0, ctypes.byref(p)), "problem_new")
        n = len(inst.sizes)
        arr = ctypes.c_uint64 * n
        self.ok(
            self.lib.memplan_problem_add_buffers(
                p, n, arr(*inst.sizes), arr(*inst.starts), arr(*inst.ends)
            ),
            "add_buffers",
        )
        for i in range(n):
            self.ok(self.lib.memplan_problem_set_alignment(p, i, inst.alignments[i]), "align")
            if inst.offsets[i] is not None:
                self.ok(self.lib.memplan_problem_set_fixed_offset(p, i, inst.offsets[i]), "fix")
            if inst.hints is not None and inst.hints[i] is not None:
                self.ok(self.lib.memplan_problem_set_hint(p, i, inst.hints[i]), "hint")
            if pins and inst.pins[i] is not None:
                pool = [name for name, _, _ in POOLS].index(inst.pins[i])
                self.ok(self.lib.memplan_problem_set_pool(p, i, pool), "pool")
        return p

    def options(
        self, solver: str, time_limit: Optional[float], capacity: Optional[int]
    ) -> ctypes.c_void_p:
        o = ctypes.c_void_p()
        self.ok(self.lib.memplan_options_new(ctypes.byref(o)), "options_new")
        self.ok(self.lib.memplan_options_set_solver(o, solver.encode()), "solver")
        if time_limit is not None:
            self.ok(self.lib.memplan_options_set_time_limit(o, time_limit), "time_limit")
        if capacity is not None:
            self.ok(self.lib.memplan_options_set_capacity(o, capacity), "capacity")
        return o

    def json(self, getter: Any, solution: ctypes.c_void_p) -> Dict[str, Any]:
        length = ctypes.c_size_t()
        getter(solution, None, 0, ctypes.byref(length))
        buffer = ctypes.create_string_buffer(length.value + 1)
        self.ok(getter(solution, buffer, length.value + 1, ctypes.byref(length)), "json")
        return json.loads(buffer.value.decode())

    def solve(
        self, inst: Instance, solver: str, time_limit: Optional[float], capacity: Optional[int]
    ) -> Any:
        """The report, or the status of a solve that found no plan."""
        p = self.problem(inst)
        o = self.options(solver, time_limit, capacity)
        s = ctypes.c_void_p()
        status = self.lib.memplan_solve(p, o, ctypes.byref(s))
        try:
            if status != 0:
                return status
            report = self.json(self.lib.memplan_solution_json, s)
            n = len(inst.sizes)
            offsets = (ctypes.c_uint64 * n)()
            self.ok(self.lib.memplan_solution_offsets(s, offsets, n), "offsets")
            report["offsets"] = list(offsets)
            return report
        finally:
            self.lib.memplan_solution_free(s)
            self.lib.memplan_options_free(o)
            self.lib.memplan_problem_free(p)

    def solve_pools(self, inst: Instance, time_limit: Optional[float]) -> Dict[str, Any]:
        p = self.problem(inst, pins=True)
        o = self.options("auto", time_limit, None)
        pools = ctypes.c_void_p()
        self.ok(self.lib.memplan_pools_new(ctypes.byref(pools)), "pools_new")
        for name, capacity, alignment in POOLS:
            self.ok(self.lib.memplan_pools_add(pools, name.encode(), capacity, alignment), "add")
        s = ctypes.c_void_p()
        try:
            self.ok(self.lib.memplan_solve_pools(p, pools, o, ctypes.byref(s)), "solve_pools")
            return self.json(self.lib.memplan_pool_solution_json, s)
        finally:
            self.lib.memplan_pool_solution_free(s)
            self.lib.memplan_pools_free(pools)
            self.lib.memplan_options_free(o)
            self.lib.memplan_problem_free(p)


def _plan_offsets(path: Path) -> List[int]:
    lines = path.read_text().splitlines()
    at = lines[0].split(",").index("offset")
    return [int(line.split(",")[at]) for line in lines[1:]]


SOLVERS = ["auto", "greedy", "search", "boxing", "tela"]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("time_limit", [None, 5.0])
@pytest.mark.parametrize("capacity", [None, 264, 100])
@pytest.mark.parametrize("hints", [False, True])
def test_one_request_one_report(
    tmp_path: Path, solver: str, time_limit: Optional[float], capacity: Optional[int], hints: bool
) -> None:
    _require()
    assert LIB is not None
    inst = Instance(hints)
    problem_csv = inst.csv(tmp_path / "p.csv")
    plan_csv = tmp_path / "plan.csv"
    args = ["solve", str(problem_csv), "--solver", solver, "-o", str(plan_csv)]
    if time_limit is not None:
        args += ["--time-limit", str(time_limit)]
    if capacity is not None:
        args += ["--capacity", str(capacity)]
    cli = _cli(args)

    try:
        result = memplan.solve(
            inst.sizes,
            inst.starts,
            inst.ends,
            alignments=inst.alignments,
            offsets=inst.offsets,
            ids=[f"b{i}" for i in range(len(inst.sizes))],
            hints=inst.hints,
            capacity=capacity,
            solver=solver,
            time_limit=time_limit,
        )
        result.plan.validate()  # the independent validator
        py: Dict[str, Any] = json.loads(result.to_json())
        py_offsets: Optional[List[int]] = result.offsets.tolist()
    except memplan.NotFound as e:
        py = json.loads(e.report)
        py_offsets = None

    c = CApi(LIB).solve(inst, solver, time_limit, capacity)

    if cli["status"] == "ok":
        assert _answer(py) == _answer(cli)
        assert isinstance(c, dict), f"C status {c} where the CLI found a plan"
        c_offsets = c.pop("offsets")
        assert _answer(c) == _answer(cli)
        assert py_offsets == _plan_offsets(plan_csv) == c_offsets
        if capacity is not None:
            assert cli["makespan"] <= capacity
        assert cli["lower_bound"] >= cli["max_load"]
        assert cli["hints"] == (3 if hints else 0)
    else:
        assert cli["status"] == "not_found"
        assert capacity is not None
        assert _answer(py) == _answer(cli)
        if capacity < cli["max_load"]:
            assert cli["reason"] == "proven infeasible"
        # MEMPLAN_INFEASIBLE when proven, else MEMPLAN_NOT_FOUND.
        assert c == (2 if cli["reason"] == "proven infeasible" else 1)


@pytest.mark.parametrize("time_limit", [None, 5.0])
def test_one_pooled_request_one_report(tmp_path: Path, time_limit: Optional[float]) -> None:
    _require()
    assert LIB is not None
    inst = Instance(hints=False)
    problem_csv = inst.csv(tmp_path / "p.csv", pins=True)
    pools_csv = tmp_path / "pools.csv"
    pools_csv.write_text(
        "pool,capacity,alignment\n" + "".join(f"{n},{c},{a}\n" for n, c, a in POOLS)
    )
    args = ["solve", str(problem_csv), "--pools", str(pools_csv)]
    if time_limit is not None:
        args += ["--time-limit", str(time_limit)]
    cli = _cli(args)
    assert cli["status"] == "ok"
    result = memplan.solve_pools(
        inst.sizes,
        inst.starts,
        inst.ends,
        POOLS,
        pins=inst.pins,
        alignments=inst.alignments,
        offsets=inst.offsets,
        ids=[f"b{i}" for i in range(len(inst.sizes))],
        time_limit=time_limit,
    )
    py = json.loads(result.to_json())
    c = CApi(LIB).solve_pools(inst, time_limit)
    assert _answer(py) == _answer(cli) == _answer(c)
    assert [p["name"] for p in cli["pools"]] == ["fast", "slow"]


def test_the_defaults_are_the_same_everywhere() -> None:
    """No time limit by default, in Python as on the command line and in C:
    the search runs to its end (its report says it was not stopped)."""
    _require()
    inst = Instance(hints=False)
    result = memplan.solve(
        inst.sizes, inst.starts, inst.ends, alignments=inst.alignments, offsets=inst.offsets
    )
    report = json.loads(result.to_json())
    assert report["solver"].startswith("auto")
    assert report["stopped"] is None
    huge = memplan.solve(inst.sizes, inst.starts, inst.ends, solver="greedy", time_limit=1e13)
    assert huge.stopped is None


def test_names_come_from_one_registry() -> None:
    """Python's name tables are the library's, the ones the command line
    offers."""
    assert memplan.SOLVERS == ("auto", "greedy", "search", "boxing", "tela")
    assert memplan.LIFETIMES == ("half-open", "inclusive", "exclusive")
    assert memplan.FITS == ("first-fit", "best-fit", "skyline")
    assert "challenging" in memplan.KINDS and "guided" in memplan.STRATEGIES
    _require()
    assert CLI is not None
    help_text = subprocess.run(
        [str(CLI), "solve", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for names in (memplan.SOLVERS, memplan.ORDERS, memplan.FITS, memplan.PREORDERS):
        for name in names:
            assert name in help_text, name
    problem = memplan.generate("challenging", 20, seed=1)
    assert problem.capacity == 1 << 20
