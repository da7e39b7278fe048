#!/usr/bin/env python3
"""Finds tela's long tail among generated instances the exact search proves feasible.

    scripts/tela_population.py [--memplan BIN] [--kinds K,...] [--buffers N,...]
        [--seeds A:B] [--factors F,...] [--search-effort E] [--step-limit S]
        [--long-tail B] [--tela-args "..."] [--out runs.csv] [--dir DIR]

Issue 39, item 1 (the population of TelaMalloc §6 and §7.3): for every
generator kind, buffer count and seed, every capacity factor times the max
load (`memplan stats`). A configuration enters the population when the
exact search (`--solver search`, bounded by `--effort`, the node budget,
with a safety time cap) finds a plan within the capacity, i.e. proves it
feasible, or when the generator's own plan proves it (`--constructed`: a
perfect packing's makespan is its max load, so every factor from 1.00 is
feasible; a challenging instance has a plan within 1 MiB, so every
capacity of at least 1 MiB is; the search is not run on them). Tela then decides it within a step budget (`--step-limit`; its
counters do not depend on the machine's load) and the run is in the long
tail when it finds no plan or backtracks more than `--long-tail` times
(major backtracks, the paper's measure; 1,000 by default).

Writes one CSV row per configuration (kind, buffers, seed, factor,
capacity, the search's status, tela's status, steps, major and minor
backtracks, restarts, seconds; why no plan, if none) and prints the counts per kind. Standard
library only; deterministic for its arguments (the instances and both
solvers' work budgets are seeded, times aside).
"""

import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile

# The capacity of the generator's known plan of a challenging instance
# (memplan::generate::CHALLENGING_CAPACITY, 1 MiB).
CHALLENGING_CAPACITY = 1 << 20


def run_json(cmd):
    """Runs a memplan command with --json; its JSON answer (also on a
    non-zero exit, which means "no plan")."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"{' '.join(cmd)}: {out.stderr.strip()}")


def seeds_of(spec):
    lo, _, hi = spec.partition(":")
    return range(int(lo), int(hi or lo) + 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memplan", default="target/release/memplan")
    ap.add_argument("--kinds", default="perfect,challenging,layered,trace,random")
    ap.add_argument("--buffers", default="50,100,200")
    ap.add_argument("--seeds", default="1:10", help="inclusive range A:B")
    ap.add_argument("--factors", default="1.00,1.02,1.05,1.10,1.15")
    ap.add_argument("--search-effort", default="0.2",
                    help="the exact search's work budget (--effort)")
    ap.add_argument("--search-time-cap", default="10")
    ap.add_argument("--step-limit", type=int, default=100_000)
    ap.add_argument("--long-tail", type=int, default=1000,
                    help="major backtracks above which a run is long-tail")
    ap.add_argument("--tela-args", default="", help="extra tela flags")
    ap.add_argument("--constructed", action="store_true",
                    help="perfect and challenging instances proven feasible by "
                         "their generator's plan, not by the search")
    ap.add_argument("--out", default="tela_population.csv")
    ap.add_argument("--dir", default=None, help="where instances are written")
    args = ap.parse_args()

    workdir = args.dir or tempfile.mkdtemp(prefix="tela_population_")
    os.makedirs(workdir, exist_ok=True)
    factors = [float(f) for f in args.factors.split(",")]
    rows = []
    counts = collections.defaultdict(collections.Counter)
    for kind in args.kinds.split(","):
        for n in (int(b) for b in args.buffers.split(",")):
            for seed in seeds_of(args.seeds):
                path = os.path.join(workdir, f"{kind}_{n}_{seed}.csv")
                subprocess.run(
                    [args.memplan, "generate", "--kind", kind, "--buffers",
                     str(n), "--seed", str(seed), "-o", path],
                    check=True, capture_output=True)
                load = run_json([args.memplan, "stats", path, "--json"])["max_load"]
                for factor in factors:
                    capacity = int(load * factor)
                    if args.constructed and (
                            kind == "perfect"
                            or (kind == "challenging" and capacity >= CHALLENGING_CAPACITY)):
                        search = {"status": "constructed"}
                    else:
                        search = run_json(
                            [args.memplan, "solve", path, "--solver", "search",
                             "--capacity", str(capacity), "--effort",
                             args.search_effort, "--time-limit",
                             args.search_time_cap, "--json"])
                    c = counts[kind]
                    c["configurations"] += 1
                    row = {"kind": kind, "buffers": n, "seed": seed,
                           "factor": factor, "capacity": capacity,
                           "search": search.get("status")}
                    if search.get("status") not in ("ok", "constructed"):
                        c["not proven feasible"] += 1
                        rows.append(row)
                        continue
                    c["feasible"] += 1
                    tela = run_json(
                        [args.memplan, "solve", path, "--solver", "tela",
                         "--capacity", str(capacity), "--step-limit",
                         str(args.step_limit), "--time-limit", "60", "--json"]
                        + args.tela_args.split())
                    k = tela.get("counters", {})
                    found = tela.get("status") == "ok"
                    major = k.get("major_backtracks", 0)
                    tail = not found or major > args.long_tail
                    row.update(tela=tela.get("status"), reason=tela.get("reason"),
                               steps=k.get("steps"),
                               major_backtracks=major,
                               minor_backtracks=k.get("minor_backtracks"),
                               restarts=k.get("restarts"),
                               seconds=tela.get("seconds"), long_tail=int(tail))
                    c["tela found"] += found
                    c["tela not found"] += not found
                    c[f"> {args.long_tail} backtracks"] += found and major > args.long_tail
                    c["long tail"] += tail
                    rows.append(row)
                print(f"{kind} {n} {seed}: {dict(counts[kind])}", file=sys.stderr)
    fields = ["kind", "buffers", "seed", "factor", "capacity", "search", "tela",
              "reason", "steps", "major_backtracks", "minor_backtracks", "restarts",
              "seconds", "long_tail"]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    total = collections.Counter()
    for kind, c in counts.items():
        print(f"{kind}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
        total.update(c)
    print("all: " + ", ".join(f"{k} {v}" for k, v in total.items()))


if __name__ == "__main__":
    main()
