#!/usr/bin/env bash
# Auto with a capacity, before and after a change: runs two memplan
# binaries' `auto` on the shared benchmark files and generated families at
# capacities just above the max load (where its tela member matters: auto
# runs tela only with a capacity), with a fixed seed and a work budget
# (--effort; the clock only a far safety cap), and compares the answers:
# a plan within the capacity or none, its makespan, and the plan's sha256.
#
#   scripts/auto-capacity.sh BEFORE_BINARY AFTER_BINARY
#
# Environment: SHARED (default ../shared), EFFORT (default 0.2), FACTORS
# (capacities in percent of the max load, default "100 101 102 103 105"),
# KINDS (generated families, default "random perfect layered trace
# challenging"), SIZES (their buffer counts, default "300 1000"), SEEDS
# (default "1 2 3"). Prints one line per run (verdict same, better,
# different plan of the same makespan, or WORSE) and exits with status 1
# if any run is worse (no plan where before had one, or a higher makespan).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/timing-common.sh
before=${1:?usage: auto-capacity.sh BEFORE_BINARY AFTER_BINARY}
after=${2:?usage: auto-capacity.sh BEFORE_BINARY AFTER_BINARY}
shared=${SHARED:-../shared}
effort=${EFFORT:-0.2}
factors=${FACTORS:-100 101 102 103 105}
kinds=${KINDS:-random perfect layered trace challenging}
sizes=${SIZES:-300 1000}
seeds=${SEEDS:-1 2 3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shared_inputs auto-capacity
for kind in $kinds; do
  for n in $sizes; do
    for seed in $seeds; do
      f="$work/${kind}_${n}_$seed.csv"
      "$after" generate --kind "$kind" --buffers "$n" --seed "$seed" -o "$f"
      inputs+=("$f")
    done
  done
done

# "found MAKESPAN SHA FOUND_BY" or "none REASON".
answer() {
  local bin=$1 f=$2 capacity=$3 out=$work/plan.csv json
  rm -f "$out"
  json=$("$bin" solve "$f" --capacity "$capacity" --seed 1 --effort "$effort" \
    --time-limit 600 --json -o "$out" 2>/dev/null || true)
  if [ -s "$out" ] && [ "$(echo "$json" | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p')" = ok ]; then
    echo "found $(echo "$json" | sed -n 's/.*"makespan":\([0-9]*\).*/\1/p') $(sha256sum "$out" | cut -c1-16) $(echo "$json" | sed -n 's/.*"solver":"\([^"]*\)".*/\1/p')"
  else
    echo "none $(echo "$json" | sed -n 's/.*"reason":"\([^"]*\)".*/\1/p' | tr ' ' _)"
  fi
}

same=0 better=0 other=0 worse=0
for f in "${inputs[@]}"; do
  name=$(basename "$f" .csv)
  load=$("$after" stats "$f" --json | sed -n 's/.*"max_load":\([0-9]*\).*/\1/p')
  for pct in $factors; do
    capacity=$((load * pct / 100))
    read -r bs bm bh bw <<<"$(answer "$before" "$f" "$capacity")"
    read -r as am ah aw <<<"$(answer "$after" "$f" "$capacity")"
    if [ "$bs $bm $bh" = "$as $am $ah" ] || [ "$bs $as" = "none none" ]; then verdict=same; same=$((same + 1))
    elif [ "$bs" = none ] && [ "$as" = found ]; then verdict="better (plan found by $aw)"; better=$((better + 1))
    elif [ "$as" = none ] || { [ "$bs" = found ] && [ "$am" -gt "$bm" ]; }; then verdict=WORSE; worse=$((worse + 1))
    elif [ "$am" -lt "$bm" ]; then verdict="better (makespan $bm -> $am, by $aw)"; better=$((better + 1))
    else verdict="different plan, same makespan ($bw -> $aw)"; other=$((other + 1)); fi
    printf '%-24s %4s%% %-8s %-12s %-8s %-12s %s\n' "$name" "$pct" "$bs" "${bm:-}" "$as" "${am:-}" "$verdict"
  done
done
echo "$same same, $better better, $other different plans of the same makespan, $worse worse"
[ "$worse" -eq 0 ]
