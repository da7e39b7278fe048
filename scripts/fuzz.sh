#!/usr/bin/env bash
# Runs the mutation fuzzer of the CSV readers and of solving small
# instances (crates/memplan/tests/fuzz.rs) for longer than the test suite
# does: SECONDS per seed (default 60), seeds 0..SEEDS-1 (default 4).
# A panic fails the run and saves the input under target/tmp/fuzz-failures/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
seeds=${2:-4}
cargo test --release -p memplan --test fuzz --no-run
for seed in $(seq 0 $((seeds - 1))); do
  MEMPLAN_FUZZ_SECONDS=$seconds MEMPLAN_FUZZ_SEED=$seed \
    cargo test --release -q -p memplan --test fuzz -- --nocapture
done
