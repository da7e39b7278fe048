#!/usr/bin/env bash
# Differential benchmark: memplan's exact search against MiniMalloc's
# reference solver (an oracle in ../shared/reference, never part of memplan)
# on the public challenging files and generated instances of their kind,
# each also time-reversed, row-shuffled, renamed and scaled. Prints, per
# instance, who decided it and memplan's time as a multiple of the
# reference's (same run), then a summary against the target: every
# instance the reference decides within the time limit, memplan decides in
# at most 0.5x its time.
#
# scripts/differential-cpsat.sh does the same against CP-SAT (OR-Tools).
#
# Usage: scripts/differential.sh [EXTRA memplan bench ARGS...]
# Environment:
#   MINIMALLOC      the reference binary (default: built with
#                   ../shared/reference/build-minimalloc.sh)
#   SHARED          the shared directory (default: ../shared beside the repo)
#   TIME_LIMIT      seconds per run, both solvers (default 60)
#   SIZES, SEEDS    generated instances: `memplan generate --kind
#                   challenging` with these buffer counts and seeds
#                   (default "200 250 300 350 400" and "1 2 3 4")
#   TRANSFORMS      copies of every input (default reverse,shuffle,rename,scale)
#   REPEAT          runs under a second are repeated, the median kept (default 5)
# Instances the reference does not decide cost twice the time limit each;
# the default set takes 20 to 60 minutes on two cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$repo/../shared}
time_limit=${TIME_LIMIT:-60}
sizes=${SIZES:-200 250 300 350 400}
seeds=${SEEDS:-1 2 3 4}
transforms=${TRANSFORMS:-reverse,shuffle,rename,scale}
repeat=${REPEAT:-5}

reference=${MINIMALLOC:-}
if [ -z "$reference" ] && [ -x "$shared/reference/build-minimalloc.sh" ]; then
  reference=$("$shared/reference/build-minimalloc.sh" "${MINIMALLOC_BUILD:-/tmp/minimalloc-build}" 2>/dev/null | tail -n 1) || reference=""
fi
if [ -z "$reference" ] || [ ! -x "$reference" ]; then
  echo "differential: skipped: the MiniMalloc reference could not be built (set MINIMALLOC to its binary)"
  exit 0
fi

cargo build --release -q -p memplan-cli --manifest-path "$repo/Cargo.toml"
memplan="$repo/target/release/memplan"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inputs=()
if [ -d "$shared/bench/minimalloc" ]; then
  for f in "$shared"/bench/minimalloc/[A-Z].1048576.csv; do
    [ -e "$f" ] && inputs+=("$f")
  done
else
  echo "differential: $shared/bench/minimalloc is absent: generated instances only"
fi
for n in $sizes; do
  for s in $seeds; do
    f="$work/challenging-$n-$s.1048576.csv"
    "$memplan" generate --kind challenging --buffers "$n" --seed "$s" -o "$f"
    inputs+=("$f")
  done
done

copies=()
[ -n "$transforms" ] && copies=(--transforms "$transforms")
echo "reference: $reference; time limit ${time_limit} s; copies: ${transforms:-none}"
"$memplan" bench --reference "$reference" --time-limit "$time_limit" \
  --repeat "$repeat" "${copies[@]}" "$@" "${inputs[@]}"
