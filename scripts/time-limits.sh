#!/usr/bin/env bash
# Checks that `--time-limit` holds for every solver at scale (issue 14):
# for each kind and size, generates an instance, runs
# `memplan solve --solver S --time-limit LIMIT --json` and prints the solve
# time the JSON reports (reading and writing excluded), the wall time of
# the whole command, the overrun past the limit and whether it is within
# max(5% of the limit, 50 ms).
#
#   scripts/time-limits.sh [SIZES] [LIMIT] [SOLVERS] [KINDS]
#
# defaults: SIZES=10000,1000000,5000000 LIMIT=1
# SOLVERS=greedy,greedy/area/best-fit,greedy/contention/skyline,search,tela,boxing,auto,auto-capacity
# KINDS=random,layered,trace. `auto-capacity` is auto with --capacity at
# 1.02 times the max load (search, tela and boxing race for a plan).
# Instances are cached in target/time-limits/. Timings depend on the
# machine's load: run it on an idle one.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/timing-common.sh
sizes=${1:-10000,1000000,5000000}
limit=${2:-1}
solvers=${3:-greedy,greedy/area/best-fit,greedy/contention/skyline,search,tela,boxing,auto,auto-capacity}
kinds=${4:-random,layered,trace}
cargo build --release -q -p memplan-cli
memplan=target/release/memplan
dir=target/time-limits
mkdir -p "$dir"
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
printf '%-8s %9s %-26s %6s %8s %8s %8s %s\n' kind buffers solver limit solve wall over verdict
for kind in ${kinds//,/ }; do
  for n in ${sizes//,/ }; do
    file=$(instance "$kind" "$n")
    for solver in ${solvers//,/ }; do
      solver_args "$solver"
      case $solver in
        auto-capacity)
          load=$("$memplan" stats "$file" --json | field max_load)
          args=(--solver auto --capacity $((load * 102 / 100)))
          ;;
      esac
      start=$(date +%s.%N)
      out=$("$memplan" solve "$file" "${args[@]}" --time-limit "$limit" --json -o /dev/null 2>/dev/null || true)
      end=$(date +%s.%N)
      solve=$(field seconds <<<"$out")
      wall=$(echo "$end - $start" | bc -l)
      over=$(echo "${solve:-0} - $limit" | bc -l)
      slack=$(echo "m = $limit * 0.05; if (m < 0.05) m = 0.05; m" | bc -l)
      verdict=$(echo "$over <= $slack" | bc -l)
      [ "$verdict" = 1 ] && verdict=ok || verdict=OVER
      [ -z "$solve" ] && verdict="no result: $out"
      printf '%-8s %9s %-26s %6s %8.3f %8.3f %8.3f %s\n' "$kind" "$n" "$solver" "$limit" "${solve:-0}" "$wall" "$over" "$verdict"
    done
  done
done
