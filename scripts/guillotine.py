#!/usr/bin/env python3
"""Guillotine packings with chosen cut granularities, and transformed copies.

Cuts the rectangle [0, TIME) x [0, WIDTH) (time x address) by guillotine
cuts, each on a multiple of --time-grid (a cut across time) or of
--address-grid (a cut across addresses), until it has --buffers pieces:
every piece is one buffer, and the pieces tile the rectangle, so the
instance has a plan of makespan WIDTH, its max load (zero slack at every
instant). `memplan generate --kind perfect` cuts on a grid of 1 in both;
this script makes the other granularities (finer in time and coarser in
address, and the reverse) and answer-preserving copies:

  --transform reverse   time reversed (lower' = TIME - upper)
  --transform scale     sizes and the capacity times 3
  --transform shuffle   rows shuffled and ids renamed

Writes a memplan problem CSV (id,lower,upper,size; half-open lifetimes)
named by the caller; the capacity to ask is printed on stdout (WIDTH, or
3 x WIDTH scaled). No dependency beyond the standard library.

  scripts/guillotine.py --buffers 350 --time-grid 1 --address-grid 1024 \\
      --seed 4 -o g.csv
"""

import argparse
import csv
import random
import sys


def pieces(n, time, width, time_grid, address_grid, rng):
    """Guillotine cuts of [0, time) x [0, width) into up to n pieces
    (start, end, offset, size), a piece drawn by area each time, cut
    across its longer side (in grid cells) three times in five."""
    out = [(0, time, 0, width)]
    stuck = 0
    while len(out) < n and stuck < 10000:
        areas = [(e - s) * w for (s, e, _, w) in out]
        k = rng.choices(range(len(out)), weights=areas)[0]
        s, e, o, w = out[k]
        time_cells = (e - s) // time_grid
        address_cells = w // address_grid
        can_time = time_cells >= 2
        can_address = address_cells >= 2
        if not (can_time or can_address):
            stuck += 1
            continue
        longer_is_time = time_cells >= address_cells
        if can_time and can_address:
            by_time = (rng.random() < 0.6) == longer_is_time
        else:
            by_time = can_time
        if by_time:
            cut = s + time_grid * rng.randrange(1, time_cells)
            out[k] = (s, cut, o, w)
            out.append((cut, e, o, w))
        else:
            cut = address_grid * rng.randrange(1, address_cells)
            out[k] = (s, e, o, cut)
            out.append((s, e, o + cut, w - cut))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--buffers", type=int, required=True)
    ap.add_argument("--time", type=int, default=None, help="default 16 x buffers x time grid")
    ap.add_argument("--width", type=int, default=1 << 20, help="the capacity (default 1 MiB)")
    ap.add_argument("--time-grid", type=int, default=1)
    ap.add_argument("--address-grid", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transform", choices=["reverse", "scale", "shuffle"], action="append", default=[])
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.buffers < 1 or a.time_grid < 1 or a.address_grid < 1 or a.width < a.address_grid:
        sys.exit("guillotine.py: --buffers, the grids and --width must be positive, width >= address grid")
    time = a.time if a.time is not None else 16 * a.buffers * a.time_grid
    rng = random.Random(a.seed)
    rows = [(s, e, w) for (s, e, _, w) in pieces(a.buffers, time, a.width, a.time_grid, a.address_grid, rng)]
    capacity = a.width
    for t in a.transform:
        if t == "reverse":
            rows = [(time - e, time - s, w) for (s, e, w) in rows]
        elif t == "scale":
            rows = [(s, e, 3 * w) for (s, e, w) in rows]
            capacity *= 3
        elif t == "shuffle":
            rng.shuffle(rows)
    ids = list(range(len(rows)))
    if "shuffle" in a.transform:
        rng.shuffle(ids)
    with open(a.output, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "lower", "upper", "size"])
        for i, (s, e, w) in zip(ids, rows):
            out.writerow([f"g{i}", s, e, w])
    print(capacity)


if __name__ == "__main__":
    main()
