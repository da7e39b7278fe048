#!/usr/bin/env bash
# Byte-identical plans before and after a change (issue 15): runs two
# memplan binaries on the shared benchmark files and generated instances,
# every solver with a fixed seed and a work budget (--effort, the clock only
# a far safety cap, so that the load of the machine cannot change a plan),
# and compares the sha256 of the plan files.
#
#   scripts/same-plans.sh BEFORE_BINARY AFTER_BINARY
#
# Environment: SHARED (default ../shared), EFFORT (default 0.2), SOLVERS
# (default "greedy search tela boxing auto"). A binary of an older commit:
#   git worktree add /tmp/before REV && cargo build --release \
#     --manifest-path /tmp/before/Cargo.toml -p memplan-cli
# Exit status 1 when a plan differs (or one binary fails where the other
# does not).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/timing-common.sh
before=${1:?usage: same-plans.sh BEFORE_BINARY AFTER_BINARY}
after=${2:?usage: same-plans.sh BEFORE_BINARY AFTER_BINARY}
shared=${SHARED:-../shared}
effort=${EFFORT:-0.2}
solvers=${SOLVERS:-greedy search tela boxing auto}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shared_inputs same-plans
for kind in random perfect layered trace challenging; do
  f="$work/$kind.csv"
  "$after" generate --kind "$kind" --buffers 300 --seed 7 -o "$f"
  inputs+=("$f")
done

same=0
differ=0
nothing=0
printf '%-22s %-7s %-16s %-16s %s\n' file solver before after verdict
for f in "${inputs[@]}"; do
  name=$(basename "$f" .csv)
  n=$(($(wc -l < "$f") - 1))
  for solver in $solvers; do
    # Exact search and tela beyond a few thousand buffers: skipped as in
    # auto (they do not scale there).
    if [ "$n" -gt 5000 ] && { [ "$solver" = search ] || [ "$solver" = tela ]; }; then continue; fi
    args=(solve "$f" --solver "$solver" --seed 1 --quiet)
    [ "$solver" != greedy ] && args+=(--effort "$effort" --time-limit 600)
    if [ "$solver" = tela ]; then
      # Tela decides capacities: at 1.05 times the max load.
      load=$("$after" stats "$f" --json | sed -n 's/.*"max_load":\([0-9]*\).*/\1/p')
      args+=(--capacity $((load + load / 20)))
    fi
    sb=$("$before" "${args[@]}" -o "$work/b.csv" >/dev/null 2>&1 && sha256sum "$work/b.csv" | cut -c1-16 || echo failed)
    sa=$("$after" "${args[@]}" -o "$work/a.csv" >/dev/null 2>&1 && sha256sum "$work/a.csv" | cut -c1-16 || echo failed)
    rm -f "$work/b.csv" "$work/a.csv"
    if [ "$sb" = failed ] && [ "$sa" = failed ]; then verdict="no plan from either (e.g. not found within the capacity)"; nothing=$((nothing + 1))
    elif [ "$sb" = "$sa" ]; then verdict=same; same=$((same + 1)); else verdict=DIFFERENT; differ=$((differ + 1)); fi
    printf '%-22s %-7s %-16s %-16s %s\n' "$name" "$solver" "$sb" "$sa" "$verdict"
  done
done
echo "$same identical, $differ different, $nothing without a plan from either"
[ "$differ" -eq 0 ]
