#!/usr/bin/env python3
"""Adds gaps to a problem file, for measuring what gaps are worth.

    scripts/gaps.py IN.csv OUT.csv [--fraction F] [--seed S] [--window]

Every buffer of IN.csv (half-open lifetimes, no `gaps` column) whose lifetime
spans at least 4 time units gets, with probability F (default 0.5), one gap
over the middle half of its lifetime: idle (`lo-hi`), or with --window
keeping its lowest quarter (`lo-hi@0:q`, q = max(1, size // 4)). Buffers of
size 0 never get a window. The other columns are copied as they are, so
IN.csv is exactly the hull problem of OUT.csv. Standard library only;
deterministic for a seed.
"""

import argparse
import csv
import random


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--window", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(args.input, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    names = [h.lower() for h in header]
    if "gaps" in names:
        raise SystemExit(f"{args.input}: already has a gaps column")
    lower = names.index("lower") if "lower" in names else names.index("start")
    upper = names.index("upper") if "upper" in names else names.index("end")
    size = names.index("size")
    out = [header + ["gaps"]]
    gapped = 0
    for row in body:
        lo, hi, s = int(row[lower]), int(row[upper]), int(row[size])
        cell = ""
        if hi - lo >= 4 and rng.random() < args.fraction:
            a, b = lo + (hi - lo) // 4, hi - (hi - lo) // 4
            cell = f"{a}-{b}"
            if args.window and s > 0:
                cell += f"@0:{max(1, s // 4)}"
            gapped += 1
        out.append(row + [cell])
    with open(args.output, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(out)
    print(f"{args.output}: {gapped} of {len(body)} buffers gapped")


if __name__ == "__main__":
    main()
