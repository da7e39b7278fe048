#!/usr/bin/env bash
# Scale figures of issue 14, printed (not checked: timings depend on the
# machine's load, so run it on an idle one and read the load average it
# prints first).
#
#   scripts/scale.sh [SIZES] [KINDS] [SOLVERS] [LIMITS]
#
# defaults: SIZES=10000,1000000,5000000 KINDS=random,layered
# SOLVERS=greedy,search,tela,boxing,auto LIMITS=0.01,0.1,1
#
# For each instance (generated once into target/scale/):
# 1. `sort` on the file against the greedy solve (the JSON's `seconds`,
#    reading and writing excluded) and the ratio (target: at most 3);
#    peak RSS of the greedy run per buffer (/usr/bin/time; target: at most
#    200 bytes at 1M);
# 2. each solver at each time limit: the solve time, its overrun past the
#    limit against max(5% of it, 50 ms), the makespan (a longer limit must
#    never give a worse one);
# 3. Ctrl-C and SIGTERM: SIGINT, then SIGTERM, sent DELAY after the read
#    ends (the read time measured by `memplan stats`), and the JSON's
#    `stop_latency`, the time from the signal to the solver's return
#    (target: at most 100 ms), for greedy and auto. Environment: SIGNALS
#    (default "INT TERM"), DELAYS (default "0.1 0.5" seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-10000,1000000,5000000}
kinds=${2:-random,layered}
solvers=${3:-greedy,search,tela,boxing,auto}
limits=${4:-0.01,0.1,1}
cargo build --release -q -p memplan-cli
memplan=target/release/memplan
dir=target/scale
mkdir -p "$dir"
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
now() { date +%s.%N; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for kind in ${kinds//,/ }; do
  for n in ${sizes//,/ }; do
    file=$dir/$kind-$n.csv
    [ -f "$file" ] || "$memplan" generate --kind "$kind" --buffers "$n" --seed 1 -o "$file" >/dev/null
    echo "== $kind $n"
    # 1. Greedy against sort, and memory.
    t0=$(now); sort "$file" >/dev/null; t1=$(now)
    sort_s=$(echo "$t1 - $t0" | bc -l)
    t0=$(now); "$memplan" stats "$file" >/dev/null; t1=$(now)
    read_s=$(echo "$t1 - $t0" | bc -l)
    out=$(/usr/bin/time -f 'rss %M' "$memplan" solve "$file" --solver greedy --json -o /dev/null 2>&1)
    solve=$(field seconds <<<"$out" | head -1)
    rss=$(sed -n 's/^rss \([0-9]*\)$/\1/p' <<<"$out")
    printf 'sort %.3f s, read (stats) %.3f s, greedy solve %.3f s = %.2f x sort, peak RSS %d MB = %.0f B/buffer\n' \
      "$sort_s" "$read_s" "$solve" "$(echo "$solve / $sort_s" | bc -l)" $((rss / 1024)) "$(echo "$rss * 1024 / $n" | bc -l)"
    # 2. Time limits.
    printf '%-8s %6s %8s %8s %-4s %s\n' solver limit solve over ok makespan
    for solver in ${solvers//,/ }; do
      for limit in ${limits//,/ }; do
        out=$("$memplan" solve "$file" --solver "$solver" --time-limit "$limit" --json -o /dev/null 2>/dev/null || true)
        solve=$(field seconds <<<"$out")
        over=$(echo "${solve:-0} - $limit" | bc -l)
        slack=$(echo "m = $limit * 0.05; if (m < 0.05) m = 0.05; m" | bc -l)
        ok=$(echo "$over <= $slack" | bc -l)
        [ "$ok" = 1 ] && ok=ok || ok=OVER
        printf '%-8s %6s %8.3f %8.3f %-4s %s\n' "$solver" "$limit" "${solve:-0}" "$over" "$ok" "$(field makespan <<<"$out")"
      done
    done
    # 3. Ctrl-C (SIGINT) and SIGTERM, DELAY after the read (as `stats`
    #    measures it; a signal that comes during the read exits at once,
    #    without a plan).
    for signal in ${SIGNALS:-INT TERM}; do
      for solver in greedy auto; do
        for delay in ${DELAYS:-0.1 0.5}; do
          "$memplan" solve "$file" --solver "$solver" --time-limit 60 --json -o /dev/null >"$dir/int.json" 2>/dev/null &
          pid=$!
          sleep "$(echo "$read_s + $delay" | bc -l)"
          kill -"$signal" "$pid" 2>/dev/null || true
          wait "$pid" || true
          latency=$(field stop_latency <"$dir/int.json")
          printf 'SIG%-4s %-6s %4s s after the read: solve %s s, stopped %s, makespan %s, solver returned %s s after the signal\n' \
            "$signal" "$solver" "$delay" "$(field seconds <"$dir/int.json")" "$(field stopped <"$dir/int.json")" \
            "$(field makespan <"$dir/int.json")" "${latency:-(signal during the read)}"
        done
      done
    done
  done
done
