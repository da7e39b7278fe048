#!/usr/bin/env python3
"""The search on perfect packings whose bottom buffers are pre-placed at 0.

    scripts/floor-bench.py BEFORE_BINARY AFTER_BINARY [--dir DIR]
        [--sizes 300,500,1000] [--seeds 1:10] [--time-limit 10]

For every size and seed: generates a perfect packing (`memplan generate
--kind perfect`), plans it with the search (`--effort 2`, by the AFTER
binary), and writes a copy in which the buffers at offset 0 of that plan
are fixed there (the `offset` column): a floor of fixed buffers at offset
0, under which a plan of the max load still exists. Then both binaries
decide that copy at its max load (`--solver search --capacity`, the time
limit), and the script prints one line per instance and the plans found
and seconds of each. Standard library only.
"""

import argparse
import csv
import json
import os
import subprocess


def decide(binary, path, capacity, limit):
    out = subprocess.run(
        [binary, "solve", path, "--solver", "search", "--capacity", str(capacity),
         "--time-limit", str(limit), "--json"],
        capture_output=True, text=True, check=False)
    d = json.loads(out.stdout)
    return d.get("status") == "ok", d.get("seconds") or 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--dir", default="target/floor-bench")
    ap.add_argument("--sizes", default="300,500,1000")
    ap.add_argument("--seeds", default="1:10")
    ap.add_argument("--time-limit", type=float, default=10)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    total = {"before": [0, 0.0], "after": [0, 0.0]}
    for n in (int(x) for x in args.sizes.split(",")):
        for seed in range(lo, hi + 1):
            src = os.path.join(args.dir, f"perfect-{n}-{seed}.csv")
            plan = os.path.join(args.dir, f"perfect-{n}-{seed}.plan.csv")
            dst = os.path.join(args.dir, f"floor-{n}-{seed}.csv")
            subprocess.run([args.after, "generate", "--kind", "perfect", "--buffers", str(n),
                            "--seed", str(seed), "-o", src], check=True, capture_output=True)
            subprocess.run([args.after, "solve", src, "--solver", "search", "--effort", "2",
                            "-o", plan], check=True, capture_output=True)
            at_zero = {r["id"] for r in csv.DictReader(open(plan)) if int(r["offset"]) == 0}
            rows = list(csv.DictReader(open(src)))
            with open(dst, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]) + ["offset"])
                w.writeheader()
                for r in rows:
                    w.writerow({**r, "offset": "0" if r["id"] in at_zero else ""})
            # The generator's perfect packings have a max load of 64 per buffer.
            capacity = 64 * n
            line = [f"{n}", f"{seed}", f"{len(at_zero)} fixed"]
            for name, binary in (("before", args.before), ("after", args.after)):
                found, seconds = decide(binary, dst, capacity, args.time_limit)
                total[name][0] += found
                total[name][1] += seconds
                line.append(f"{name}: {'plan' if found else 'none'} {seconds:.3f} s")
            print(", ".join(line), flush=True)
    for name, (found, seconds) in total.items():
        print(f"{name}: {found} plans, {seconds:.1f} s")


if __name__ == "__main__":
    main()
