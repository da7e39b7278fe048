#!/usr/bin/env python3
"""Held-out evaluation of tela's learned backtracking (TelaMalloc §7.3's table).

    scripts/tela_learned_eval.py POPULATION.csv [--memplan BIN] [--dir DIR]
        [--step-limit 100000] [--long-tail 1000] [--learned-args "..."]
        [--reuse-default] [--solver-seeds A:B] [--out eval.csv]

POPULATION.csv is the output of scripts/tela_population.py (its instances
written to --dir, the same as the population's --dir): every configuration
the exact search proved feasible is decided by tela twice, with the
default backtracking and with `--learned-backtracking` (plus
--learned-args), within the same step budget (with --reuse-default, the default run is
the population's own, made with the same step limit and no extra tela
flags: only the learned one runs). The model must not have
seen these instances: the shipped one is trained on perfect and
challenging instances of seeds 101 and above (see docs/solvers.md), so a
population of seeds 1-10 is held out, and its layered, trace and random
kinds are unseen kinds.

Prints, in the paper's form: the long-tail inputs (default: no plan, or
more than --long-tail major backtracks), how many of them improved (fewer
major backtracks, or a plan where the default found none), timeouts turned
into successes, inputs with 10x fewer major backtracks; and among all
inputs, those that got worse (no plan where the default found one, or more
than 10x its major backtracks, counted only above 100). With
--solver-seeds A:B, every input runs at each of tela's seeds A to B, and
the counts are of (input, seed) runs: the steps tela takes to a plan vary
by orders of magnitude with its restart noise, so one run per input is a
draw. Standard library only.
"""

import argparse
import collections
import csv
import json
import os
import subprocess


def tela(args, path, capacity, seed, extra):
    cmd = [args.memplan, "solve", path, "--solver", "tela", "--capacity", str(capacity),
           "--step-limit", str(args.step_limit), "--time-limit", "60", "--json",
           "--seed", str(seed)] + extra
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    d = json.loads(out.stdout)
    k = d.get("counters", {})
    return d.get("status") == "ok", k.get("major_backtracks", 0), k.get("steps", 0), d.get("seconds")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("population", help="population CSVs, comma-separated")
    ap.add_argument("--memplan", default="target/release/memplan")
    ap.add_argument("--dir", required=True, help="the population's instances")
    ap.add_argument("--step-limit", type=int, default=100_000)
    ap.add_argument("--long-tail", type=int, default=1000)
    ap.add_argument("--default-args", default="", help="flags of both runs")
    ap.add_argument("--learned-args", default="")
    ap.add_argument("--reuse-default", action="store_true",
                    help="the default run from the population's row")
    ap.add_argument("--solver-seeds", default="0:0",
                    help="tela's --seed values, inclusive A:B; every input runs at each, "
                         "and each (input, seed) pair counts as one run")
    ap.add_argument("--out", default="tela_learned_eval.csv")
    args = ap.parse_args()
    lo, _, hi = args.solver_seeds.partition(":")
    solver_seeds = range(int(lo), int(hi or lo) + 1)
    if args.reuse_default and list(solver_seeds) != [0]:
        ap.error("--reuse-default takes the population's runs, made with --seed 0")

    rows = []
    for population in args.population.split(","):
        rows += [r for r in csv.DictReader(open(population))
                 if r["search"] in ("ok", "constructed")]
    out = []
    c = collections.Counter()
    runs = [(r, seed) for r in rows for seed in solver_seeds]
    for r, seed in runs:
        path = os.path.join(args.dir, f"{r['kind']}_{r['buffers']}_{r['seed']}.csv")
        base = args.default_args.split()
        if args.reuse_default:
            d = (r["tela"] == "ok", int(r["major_backtracks"] or 0), int(r["steps"] or 0),
                 r["seconds"])
        else:
            d = tela(args, path, r["capacity"], seed, base)
        l = tela(args, path, r["capacity"], seed, base + ["--learned-backtracking"]
                 + args.learned_args.split())
        tail = not d[0] or d[1] > args.long_tail
        worse = (d[0] and not l[0]) or (l[1] > 10 * d[1] and l[1] > 100)
        c["runs" if len(solver_seeds) > 1 else "inputs"] += 1
        c["worse"] += worse
        if tail:
            c["long tail"] += 1
            c["long tail: timeouts"] += not d[0]
            c["improved"] += (l[0] and not d[0]) or (l[0] and l[1] < d[1])
            c["timeouts turned into successes"] += l[0] and not d[0]
            c["10x fewer backtracks"] += d[0] and l[0] and 10 * l[1] <= d[1]
        c["plans found (default)"] += d[0]
        c["plans found (learned)"] += l[0]
        c["steps (default)"] += d[2]
        c["steps (learned)"] += l[2]
        out.append({**{k: r[k] for k in ("kind", "buffers", "seed", "factor", "capacity")},
                    "solver_seed": seed, "default_found": int(d[0]), "default_major": d[1], "default_steps": d[2],
                    "learned_found": int(l[0]), "learned_major": l[1], "learned_steps": l[2],
                    "long_tail": int(tail), "worse": int(worse)})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    for k, v in c.items():
        print(f"{k}: {v}")
    for r in out:
        if r["worse"]:
            print("worse:", {k: r[k] for k in ("kind", "buffers", "seed", "factor",
                  "solver_seed", "default_major", "learned_found", "learned_major")})


if __name__ == "__main__":
    main()
