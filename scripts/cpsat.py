#!/usr/bin/env python3
"""CP-SAT as an oracle for memplan problems (outside the library).

Reads a memplan problem CSV (docs/formats.md: columns id, lower, upper,
size, and optionally alignment, offset, gaps, hint; names case-insensitive,
MiniMalloc's aliases accepted), writes the plain CP-SAT model of it and
solves it with Google OR-Tools:

- every buffer of positive size is one rectangle per stretch of its
  lifetime where it occupies memory: a fixed interval in time and a
  variable interval in address, [offset, offset + size) (a gap window
  `lo-hi@wlo:whi` occupies [offset + wlo, offset + whi) during its
  stretch); all rectangles of a buffer share its offset variable;
- the offset is `alignment * k` for an integer k, or fixed by the
  `offset` column;
- one AddNoOverlap2D over every rectangle;
- at a capacity (`--capacity C`, a decision): every offset + size <= C;
  without one, minimise the makespan (the largest offset + size).

Zero-size buffers take no rectangle: offset 0 (or their fixed offset), as
memplan gives them. The `hint` column is ignored (the plain model) and the
`pool` column is refused.

Prints one JSON line:
  {"file", "buffers", "capacity", "status", "decided", "found", "makespan",
   "lower_bound", "proven", "time", "wall_time", "workers", "time_limit"}
where status is CP-SAT's (OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN,
MODEL_INVALID); "decided" is whether the question was answered (at a
capacity: a plan within it, or a proof that none exists; minimising: the
optimum proven); "found" whether a plan was found; "proven" whether the
answer is proven (INFEASIBLE or OPTIMAL); "time" is the solver's own wall
time (CP-SAT's `WallTime()`: model loading, presolve and search, parsing
of the CSV and building of the model excluded) and "wall_time" the time of
the whole Solve call.

With `--plan OUT.csv` it writes the plan found (columns id,offset, which
`memplan validate PROBLEM OUT.csv` reads).

Setup (once, into a tool venv under target/, outside the repository's
sources):
  python3 -m venv target/tools/cpsat
  target/tools/cpsat/bin/pip install ortools
  target/tools/cpsat/bin/python scripts/cpsat.py examples/small.csv

Exit status: 0 when the model was solved (whatever the answer), 2 on a bad
input (a message on stderr), 3 when ortools is not installed.
"""

import argparse
import csv
import json
import sys
import time

ALIASES = {
    "id": "id",
    "buffer": "id",
    "buffer_id": "id",
    "lower": "lower",
    "start": "lower",
    "begin": "lower",
    "upper": "upper",
    "end": "upper",
    "size": "size",
    "alignment": "alignment",
    "offset": "offset",
    "gaps": "gaps",
    "hint": "hint",
    "pool": "pool",
}


class InputError(Exception):
    pass


def parse_int(text, where, column):
    t = text.strip()
    if t.startswith("+"):
        t = t[1:]
    if not t.isdigit() or not t.isascii():
        raise InputError(f"{where}: column `{column}`: expected a non-negative integer, got `{text}`")
    value = int(t)
    if value >= 2**64:
        raise InputError(f"{where}: column `{column}`: {text} does not fit in 64 bits")
    return value


def to_half_open(lower, upper, lifetimes):
    """[start, end) of a lifetime (or a gap) given in `lifetimes`."""
    if lifetimes == "inclusive":
        return lower, upper + 1
    return lower, upper  # half-open; exclusive (lo, hi) conflicts as [lo, hi)


def read_problem(path, lifetimes):
    """The buffers of a problem CSV: a list of dicts with id, start, end,
    size, alignment, offset (or None) and gaps [(start, end, wlo, whi)]."""
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from e
    with handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise InputError(f"{path}: empty file (expected a header row)")
    header = [c.strip().lower() for c in rows[0]]
    columns = {}
    for i, name in enumerate(header):
        if name not in ALIASES:
            raise InputError(f"{path}:1: unknown column `{rows[0][i].strip()}`")
        canonical = ALIASES[name]
        if canonical in columns:
            raise InputError(f"{path}:1: column `{canonical}` given twice")
        columns[canonical] = i
    for needed in ("id", "lower", "upper", "size"):
        if needed not in columns:
            raise InputError(f"{path}:1: missing column `{needed}`")
    buffers = []
    seen = set()
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        where = f"{path}:{line}"
        if len(row) != len(header):
            raise InputError(f"{where}: expected {len(header)} cells, got {len(row)}")

        def cell(name):
            return row[columns[name]].strip() if name in columns else ""

        if cell("pool"):
            raise InputError(f"{where}: column `pool`: pools are not modelled (plan one pool at a time)")
        ident = cell("id")
        if not ident:
            raise InputError(f"{where}: column `id`: empty id")
        if ident in seen:
            raise InputError(f"{where}: column `id`: duplicate id `{ident}`")
        seen.add(ident)
        lower = parse_int(cell("lower"), where, "lower")
        upper = parse_int(cell("upper"), where, "upper")
        start, end = to_half_open(lower, upper, lifetimes)
        if end <= start:
            raise InputError(f"{where}: empty lifetime {lower}-{upper} ({lifetimes})")
        size = parse_int(cell("size"), where, "size")
        alignment = parse_int(cell("alignment"), where, "alignment") if cell("alignment") else 1
        if alignment == 0:
            raise InputError(f"{where}: column `alignment`: must be at least 1")
        offset = parse_int(cell("offset"), where, "offset") if cell("offset") else None
        if offset is not None and offset % alignment:
            raise InputError(f"{where}: column `offset`: {offset} is not a multiple of the alignment {alignment}")
        gaps = []
        for entry in cell("gaps").split():
            span, _, window = entry.partition("@")
            lo, sep, hi = span.partition("-")
            if not sep:
                raise InputError(f"{where}: column `gaps`: gap `{entry}`: expected lo-hi or lo-hi@wlo:whi")
            g0, g1 = to_half_open(parse_int(lo, where, "gaps"), parse_int(hi, where, "gaps"), lifetimes)
            if not (start <= g0 < g1 <= end):
                raise InputError(f"{where}: column `gaps`: gap `{entry}` is empty or outside the lifetime")
            wlo, whi = 0, 0
            if window:
                a, sep, b = window.partition(":")
                if not sep:
                    raise InputError(f"{where}: column `gaps`: gap `{entry}`: expected a window wlo:whi")
                wlo, whi = parse_int(a, where, "gaps"), parse_int(b, where, "gaps")
                if not (wlo < whi <= size):
                    raise InputError(
                        f"{where}: column `gaps`: gap `{entry}`: the window must satisfy "
                        f"0 <= wlo < whi <= size ({size})"
                    )
            gaps.append((g0, g1, wlo, whi))
        gaps.sort()
        for a, b in zip(gaps, gaps[1:]):
            if b[0] < a[1]:
                raise InputError(f"{where}: column `gaps`: gaps overlap")
        buffers.append(
            {"id": ident, "start": start, "end": end, "size": size,
             "alignment": alignment, "offset": offset, "gaps": gaps}
        )
    return buffers


def stretches(b):
    """(start, end, lo, hi): the rectangles of buffer b, its addresses
    [offset + lo, offset + hi) during [start, end)."""
    out = []
    t = b["start"]
    for g0, g1, wlo, whi in b["gaps"]:
        if t < g0:
            out.append((t, g0, 0, b["size"]))
        if whi > wlo:
            out.append((g0, g1, wlo, whi))
        t = g1
    if t < b["end"]:
        out.append((t, b["end"], 0, b["size"]))
    return out


def max_load(buffers):
    events = {}
    for b in buffers:
        for s, e, lo, hi in stretches(b):
            events[s] = events.get(s, 0) + (hi - lo)
            events[e] = events.get(e, 0) - (hi - lo)
    load = peak = 0
    for t in sorted(events):
        load += events[t]
        peak = max(peak, load)
    return peak


def main():
    parser = argparse.ArgumentParser(
        description="Solve a memplan problem CSV with OR-Tools CP-SAT (the plain "
        "NoOverlap2D model) and print one JSON line."
    )
    parser.add_argument("problem", help="problem CSV (docs/formats.md)")
    parser.add_argument("--capacity", type=int, help="decide whether a plan fits this capacity (default: minimise)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds (CP-SAT's max_time_in_seconds; default 20)")
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT search workers (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="CP-SAT random seed (default 0)")
    parser.add_argument("--lifetimes", choices=["half-open", "inclusive", "exclusive"], default="half-open",
                        help="lifetime convention of the file (default half-open, as memplan)")
    parser.add_argument("--plan", metavar="OUT.csv", help="write the plan found (id,offset)")
    parser.add_argument("--log", action="store_true", help="print CP-SAT's search log on stderr")
    args = parser.parse_args()
    if args.capacity is not None and args.capacity < 0:
        parser.error("--capacity must be non-negative")
    if not args.time_limit >= 0:
        parser.error("--time-limit must be non-negative")
    if args.workers < 1:
        parser.error("--workers must be at least 1")

    try:
        from ortools.sat.python import cp_model
    except ImportError:
        print(
            "cpsat.py: ortools is not installed: python3 -m venv target/tools/cpsat && "
            "target/tools/cpsat/bin/pip install ortools, then run this script with "
            "target/tools/cpsat/bin/python",
            file=sys.stderr,
        )
        return 3

    try:
        buffers = read_problem(args.problem, args.lifetimes)
    except InputError as e:
        print(f"cpsat.py: {e}", file=sys.stderr)
        return 2

    capacity = args.capacity
    load = max_load(buffers)
    # Every offset lies below this bound: the capacity, or (minimising)
    # the plan stacking every buffer above the fixed ones.
    fixed_top = max((b["offset"] + b["size"] for b in buffers if b["offset"] is not None), default=0)
    free_sum = sum(b["size"] + b["alignment"] - 1 for b in buffers if b["offset"] is None)
    horizon = capacity if capacity is not None else fixed_top + free_sum

    result = {
        "file": args.problem,
        "buffers": len(buffers),
        "capacity": capacity,
        "max_load": load,
        "status": None,
        "decided": False,
        "found": False,
        "makespan": None,
        "lower_bound": None,
        "proven": False,
        "time": 0.0,
        "wall_time": 0.0,
        "workers": args.workers,
        "time_limit": args.time_limit,
    }

    model = cp_model.CpModel()
    offsets = {}
    x_intervals, y_intervals = [], []
    trivially_infeasible = False
    for b in buffers:
        size, align = b["size"], b["alignment"]
        if b["offset"] is not None:
            offset = model.NewConstant(b["offset"])
            if capacity is not None and b["offset"] + size > capacity:
                trivially_infeasible = True
        elif size == 0:
            offset = model.NewConstant(0)
        elif horizon < size:
            trivially_infeasible = True
            offset = model.NewConstant(0)
        else:
            k = model.NewIntVar(0, (horizon - size) // align, f"k_{b['id']}")
            offset = k if align == 1 else align * k
        offsets[b["id"]] = offset
        if size == 0:
            continue
        for s, e, lo, hi in stretches(b):
            x_intervals.append(model.NewFixedSizeIntervalVar(s, e - s, f"t_{b['id']}_{s}"))
            y_intervals.append(model.NewFixedSizeIntervalVar(offset + lo, hi - lo, f"a_{b['id']}_{s}"))
    model.AddNoOverlap2D(x_intervals, y_intervals)
    makespan = None
    if capacity is None:
        makespan = model.NewIntVar(0, max(horizon, fixed_top), "makespan")
        for b in buffers:
            model.Add(makespan >= offsets[b["id"]] + b["size"])
        model.Minimize(makespan)

    if trivially_infeasible:
        # A fixed buffer above the capacity, or one larger than it.
        result.update(status="INFEASIBLE", decided=True, proven=True)
        print(json.dumps(result))
        return 0

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = args.time_limit
    solver.parameters.num_workers = args.workers
    solver.parameters.random_seed = args.seed
    solver.parameters.log_search_progress = args.log
    started = time.monotonic()
    status = solver.Solve(model)
    result["wall_time"] = round(time.monotonic() - started, 4)
    result["time"] = round(solver.WallTime(), 4)
    result["status"] = solver.StatusName(status)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    result["found"] = found
    result["proven"] = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    if capacity is not None:
        result["decided"] = found or status == cp_model.INFEASIBLE
    else:
        result["decided"] = status == cp_model.OPTIMAL
        if found:
            result["lower_bound"] = max(int(solver.BestObjectiveBound()), load)
    if found:
        values = {i: solver.Value(o) for i, o in offsets.items()}
        result["makespan"] = max((values[b["id"]] + b["size"] for b in buffers), default=0)
        if args.plan:
            with open(args.plan, "w", newline="", encoding="utf-8") as out:
                w = csv.writer(out, lineterminator="\n")
                w.writerow(["id", "offset"])
                for b in buffers:
                    w.writerow([b["id"], values[b["id"]]])
    elif capacity is not None and status == cp_model.INFEASIBLE:
        result["lower_bound"] = capacity + 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
