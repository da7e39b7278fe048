#!/usr/bin/env bash
# Measures how promptly `memplan solve` stops on a signal (issue 14: at most
# 100 ms at any size after the read): for each kind, size, solver and delay,
# starts `memplan solve --json` without a time limit, sends the signal DELAY
# seconds after the start, and prints from the JSON when the signal came
# into the solve (`seconds - stop_latency`; negative: during the read, which
# is not cut), the latency from the signal to the solver's return, the
# makespan returned and whether the latency is within 100 ms, then the
# seconds the request's independent check of the plan took after the
# solver's return (before the plan is written).
#
#   scripts/stop-latency.sh [SIZES] [DELAYS] [SOLVERS] [KINDS] [SIGNAL]
#
# defaults: SIZES=1000000,5000000 DELAYS=1,2.5,4 (seconds after the start)
# SOLVERS=greedy,greedy/contention/skyline,search,tela,boxing,auto
# KINDS=random,layered,trace SIGNAL=INT. Instances are cached in
# target/time-limits/. Timings depend on the machine's load: run it on an
# idle one, and read `uptime` beside the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/timing-common.sh
sizes=${1:-1000000,5000000}
delays=${2:-1,2.5,4}
solvers=${3:-greedy,greedy/contention/skyline,search,tela,boxing,auto}
kinds=${4:-random,layered,trace}
sig=${5:-INT}
cargo build --release -q -p memplan-cli
memplan=${MEMPLAN:-target/release/memplan}
dir=target/time-limits
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
printf '%-8s %9s %-26s %3s %6s %9s %8s %16s %-14s %s\n' kind buffers solver sig delay in-solve latency makespan verdict check
for kind in ${kinds//,/ }; do
  for n in ${sizes//,/ }; do
    file=$(instance "$kind" "$n")
    for solver in ${solvers//,/ }; do
      solver_args "$solver"
      for delay in ${delays//,/ }; do
        "$memplan" solve "$file" "${args[@]}" --json -q -o "$out/plan.csv" >"$out/json" 2>/dev/null &
        pid=$!
        sleep "$delay"
        kill -"$sig" "$pid" 2>/dev/null || true
        wait "$pid" || true
        json=$(cat "$out/json")
        seconds=$(field seconds <<<"$json")
        latency=$(field stop_latency <<<"$json")
        makespan=$(field makespan <<<"$json")
        check=$(field check_seconds <<<"$json")
        if [ -z "$latency" ] || [ "$latency" = null ]; then
          printf '%-8s %9s %-26s %3s %6s %9s %8s %16s %-14s %s\n' "$kind" "$n" "$solver" "$sig" "$delay" - - "${makespan:--}" "finished first" "${check:--}"
          continue
        fi
        into=$(echo "$seconds - $latency" | bc -l)
        verdict=$(echo "$latency <= 0.1" | bc -l)
        [ "$verdict" = 1 ] && verdict=ok || verdict=SLOW
        printf '%-8s %9s %-26s %3s %6s %9.3f %8.3f %16s %-14s %.3f\n' "$kind" "$n" "$solver" "$sig" "$delay" "$into" "$latency" "$makespan" "$verdict" "$check"
      done
    done
  done
done
