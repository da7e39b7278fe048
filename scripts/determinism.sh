#!/usr/bin/env bash
# Determinism check (issue 17): runs `memplan solve FILE` (default auto,
# default effort and seed) RUNS times on an idle machine, then RUNS times
# beside BUSY CPU-bound processes, and prints the sha256 of every plan, the
# makespan, whether the run was cut by the clock (`stopped`), and whether
# all plans of a file are byte-identical.
#
#   scripts/determinism.sh [FILES...] [-- EXTRA SOLVE ARGS...]
#
# Environment: RUNS (default 6), BUSY (default 2). Default files: the
# shared E and D challenging files (with --capacity from their names
# dropped: auto minimises), iopddl S_1 and somas resnet50, when present.
# "Idle" means only what else runs on the machine: check `uptime`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-6}
busy=${BUSY:-2}
shared=${SHARED:-../shared}
files=()
extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  files+=("$1"); shift
done
if [ ${#files[@]} -eq 0 ]; then
  for f in "$shared"/bench/minimalloc/E.1048576.csv "$shared"/bench/minimalloc/D.1048576.csv \
           "$shared"/bench/iopddl/S_1.csv "$shared"/bench/somas/resnet50.csv; do
    if [ -e "$f" ]; then files+=("$f"); else echo "determinism: $f is absent: skipped"; fi
  done
fi
[ ${#files[@]} -gt 0 ] || { echo "determinism: no input"; exit 0; }
cargo build --release -q -p memplan-cli
memplan=target/release/memplan
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }

printf '%-18s %-5s %3s %-64s %9s %7s %s\n' file load run sha256 makespan seconds stopped
verdict=0
for f in "${files[@]}"; do
  name=$(basename "$f" .csv)
  sums=()
  for load in idle busy; do
    if [ "$load" = busy ]; then
      for _ in $(seq "$busy"); do (while :; do :; done) & pids+=($!); done
    fi
    for r in $(seq "$runs"); do
      json=$("$memplan" solve "$f" -o "$work/plan.csv" --json --quiet "${extra[@]}")
      sum=$(sha256sum "$work/plan.csv" | cut -d' ' -f1)
      sums+=("$sum")
      printf '%-18s %-5s %3s %-64s %9s %7.3f %s\n' "$name" "$load" "$r" "$sum" \
        "$(echo "$json" | field makespan)" "$(echo "$json" | field seconds)" \
        "$(echo "$json" | field stopped)"
    done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    pids=()
  done
  distinct=$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)
  if [ "$distinct" -eq 1 ]; then
    echo "$name: all $((2 * runs)) plans identical"
  else
    echo "$name: $distinct distinct plans in $((2 * runs)) runs"
    verdict=1
  fi
done
exit $verdict
