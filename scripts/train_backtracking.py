#!/usr/bin/env python3
"""Trains tela's learned backtracking (TelaMalloc §6) and writes the shipped model.

    target/tools/learn/bin/python scripts/train_backtracking.py LABELS.csv...
        [--out crates/memplan/src/solvers/tela/backtracking_model.json]
        [--trees 100] [--depth 4] [--rate 0.1] [--seed 0]

LABELS.csv come from the oracle harness (TelaMalloc §6.3; one row per
candidate target, every level of the path, of a recorded major backtrack,
its features and its pointwise score; by default the score is recomputed
from the minimum target M alone, --score valid: 10 at M, down to 5 at the
root, 0 below M):

    MEMPLAN_LABELS=labels.csv MEMPLAN_LABELS_KINDS=perfect,challenging \\
    MEMPLAN_LABELS_SEEDS=101:115 MEMPLAN_LABELS_MIX=0.5 cargo test -p memplan \\
        --release --lib backtracking_labels -- --ignored

(the shipped model's exact collection runs are in docs/solvers.md,
"Learned backtracking"; the model depends only on the labels and --seed,
not on the order of the files).

A gradient-boosted regression forest (scikit-learn, fixed seed) learns the
score from the features; its trees are written as plain JSON (the feature
names, the base score, and per tree the arrays feature, threshold, left,
right, value, leaves having left = -1 and values scaled by the learning
rate), which the library compiles in and evaluates itself. Also prints the
ranking quality on a validation fifth of the groups of targets (a group:
the instance, its capacity factor and the backtrack's number, which two
files of different stages can share, so that a group may hold two
backtracks; the count of backtracks, by file, is printed beside): how
often the best-scored target is valid (scores above 0), against the
default target, and the mean score of the target taken for a grid of
thresholds and depth weights (a guide only: the shipped defaults come
from tela runs, docs/solvers.md).

Setup (once, into a tool venv under target/, outside the repository's
dependencies):

  python3 -m venv target/tools/learn
  target/tools/learn/bin/pip install scikit-learn
"""

import argparse
import csv
import json
import random
import sys

FEATURES = [
    "size", "lifetime", "contention", "offset", "level", "distance",
    "log_distance", "in_conflicts", "jumps_here", "subtree_backtracks",
    "same_phase", "backtracks", "is_default", "in_conflict_set",
    "rank_from_deepest", "depth", "holes_margin", "holes_depth",
]


def load(paths):
    """The labelled rows; a row cut short (a collection stopped while
    writing) is skipped."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                try:
                    [float(r[k]) for k in FEATURES + ["score"]]
                except (TypeError, ValueError):
                    continue
                r["file"] = path
                rows.append(r)
    return rows


def valid_score(r):
    """The score of a target by the minimum target M alone: 10 at M, down
    to 5 at the root, 0 below M (the deepest valid target is best)."""
    x, m = int(r["target"]), int(r["minimum"])
    return 0.0 if x > m else 10.0 - 5.0 * (m - x) / (m + 1)


def event_key(r):
    return (r["kind"], r["buffers"], r["seed"], r["factor"], r["event"])


def export(model, rate):
    trees = []
    for est in model.estimators_[:, 0]:
        t = est.tree_
        trees.append({
            "feature": [int(max(f, 0)) for f in t.feature],
            "threshold": [float(x) for x in t.threshold],
            "left": [int(x) for x in t.children_left],
            "right": [int(x) for x in t.children_right],
            "value": [float(v[0][0]) * rate for v in t.value],
        })
    base = float(model.init_.constant_[0][0])
    return {"features": FEATURES, "base": base, "trees": trees}


def evaluate(model, events):
    """Share of events whose top-scored target is valid (score > 0), and the
    same for the default target."""
    good = default_good = 0
    for rows in events.values():
        x = [[float(r[f]) for f in FEATURES] for r in rows]
        pred = model.predict(x)
        top = max(range(len(rows)), key=lambda i: (pred[i], int(rows[i]["target"])))
        good += float(rows[top]["score"]) > 0
        default = [r for r in rows if r["target"] == r["default"]]
        default_good += bool(default) and float(default[0]["score"]) > 0
    n = max(len(events), 1)
    return good / n, default_good / n


def choice_quality(model, events, threshold, weight):
    """Mean label score of the target the search would take on `events`
    with `threshold` (tenths of a point) and depth weight `weight`
    (percent), as the library does (TelaMalloc §6.5): the best weighted
    score if at least the threshold, else the default target; and the
    share of events where that is not the default."""
    total = learned = 0.0
    for rows in events.values():
        x = [[float(r[f]) for f in FEATURES] for r in rows]
        pred = model.predict(x)
        depth = float(rows[0]["target"]) + 1
        depth = max(depth, max(float(r["target"]) for r in rows) + 1)
        best = None
        for i, r in enumerate(rows):
            # `distance` is (depth - target) / depth, a feature.
            w = pred[i] * (1 - weight / 100 * float(r["distance"]))
            if best is None or w >= best[0]:
                best = (w, i)
        default = [r for r in rows if r["target"] == r["default"]]
        if best is not None and best[0] >= threshold / 10:
            chosen = rows[best[1]]
        elif default:
            chosen = default[0]
        else:
            continue
        total += float(chosen["score"])
        learned += chosen["target"] != chosen["default"]
    n = max(len(events), 1)
    return total / n, learned / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labels", nargs="+")
    ap.add_argument("--out", default="crates/memplan/src/solvers/tela/backtracking_model.json")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--rate", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--score", choices=("paper", "valid"), default="valid",
                    help="the targets' scores: by the minimum target alone (valid, the "
                         "shipped model's), or the harness's (paper: between the best and "
                         "minimum targets, §6.4)")
    args = ap.parse_args()
    try:
        from sklearn.ensemble import GradientBoostingRegressor
    except ImportError:
        sys.exit("train_backtracking.py: scikit-learn is not installed: python3 -m venv "
                 "target/tools/learn && target/tools/learn/bin/pip install scikit-learn")

    rows = load(args.labels)
    if args.score == "valid":
        for r in rows:
            r["score"] = str(valid_score(r))
    events = {}
    for r in rows:
        events.setdefault(event_key(r), []).append(r)
    keys = sorted(events)
    random.Random(args.seed).shuffle(keys)
    held = set(keys[: len(keys) // 5])

    def fit(selected):
        x = [[float(r[f]) for f in FEATURES] for k in selected for r in events[k]]
        y = [float(r["score"]) for k in selected for r in events[k]]
        m = GradientBoostingRegressor(n_estimators=args.trees, max_depth=args.depth,
                                      learning_rate=args.rate, random_state=args.seed)
        m.fit(x, y)
        return m

    check = fit([k for k in keys if k not in held])
    validation = {k: events[k] for k in held}
    ours, default = evaluate(check, validation)
    backtracks = len({(r["file"],) + event_key(r) for r in rows})
    print(f"{len(rows)} targets of {backtracks} major backtracks, in {len(events)} groups; "
          f"validation fifth of the groups: top-scored target valid {ours:.1%}, "
          f"default target valid {default:.1%}")
    # The threshold and the depth weight, on the validation fifth: the
    # mean label score of the target taken (the default's alone: threshold
    # above 100).
    grid = [(t, w) for t in (0, 30, 50, 70, 80, 85, 90) for w in (0, 25, 50, 75)]
    base, _ = choice_quality(check, validation, 1000, 0)
    print(f"validation: default backtracking, mean score of the target taken {base:.2f}")
    tuned = []
    for t, w in grid:
        q, share = choice_quality(check, validation, t, w)
        tuned.append((q, -t, -w))
        print(f"  --learned-threshold {t:3} --learned-depth-weight {w:3}: "
              f"mean score {q:.2f}, learned target taken at {share:.0%}")
    q, t, w = max(tuned)
    print(f"best on validation: --learned-threshold {-t} --learned-depth-weight {-w} "
          f"(mean score {q:.2f})")
    model = fit(keys)
    with open(args.out, "w") as f:
        json.dump(export(model, args.rate), f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {args.out}: {args.trees} trees of depth {args.depth}")


if __name__ == "__main__":
    main()
