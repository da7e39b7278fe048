#!/usr/bin/env bash
# Differential benchmark against CP-SAT (issue 40): for each instance, at a
# capacity, runs `memplan solve --capacity C --time-limit T --json` and the
# plain CP-SAT model (scripts/cpsat.py, 2 workers) one after the other,
# REPEAT times each, and prints a table of both decisions, the median solve
# times (parsing excluded: memplan's reported `seconds`, CP-SAT's own wall
# time) and memplan's time over CP-SAT's. Every plan found is checked by
# `memplan validate`. scripts/differential.sh does the same against the
# MiniMalloc reference.
#
# Usage: scripts/differential-cpsat.sh [FILES...] [-- EXTRA memplan solve ARGS...]
# Environment:
#   MEMPLAN       the memplan binary (default: built, target/release/memplan)
#   CPSAT_PYTHON  a python with ortools (default target/tools/cpsat/bin/python;
#                 make it with: python3 -m venv target/tools/cpsat &&
#                 target/tools/cpsat/bin/pip install ortools)
#   TIME_LIMIT    seconds per run, both solvers (default 20)
#   REPEAT        runs of each solver per instance, median kept (default 3)
#   WORKERS       CP-SAT workers (default 2)
#   LIFETIMES     the files' lifetime convention (default half-open)
#   CAPACITY      the capacity of every instance (default: the file's name
#                 `NAME.CAPACITY.csv`, else its max load from `memplan stats`)
#   SIZES, SEEDS  without FILES: `memplan generate --kind perfect` with these
#                 buffer counts and seeds (default "50 300" and "1 2")
# An instance undecided by both costs REPEAT x 2 x TIME_LIMIT seconds.
# Decisions: `fits` (a plan within the capacity, validated), `infeasible`
# (proven), `-` (undecided within the limit). A disagreement (one proves
# infeasible what the other fits) is reported and makes the exit status 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
time_limit=${TIME_LIMIT:-20}
repeat=${REPEAT:-3}
workers=${WORKERS:-2}
python=${CPSAT_PYTHON:-$repo/target/tools/cpsat/bin/python}
lifetimes=(--lifetimes "${LIFETIMES:-half-open}")

files=()
extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  files+=("$1"); shift
done

if [ ! -x "$python" ] || ! "$python" -c 'import ortools.sat.python.cp_model' 2>/dev/null; then
  echo "differential-cpsat: skipped: no python with ortools at $python (python3 -m venv target/tools/cpsat && target/tools/cpsat/bin/pip install ortools, or set CPSAT_PYTHON)"
  exit 0
fi

memplan=${MEMPLAN:-}
if [ -z "$memplan" ]; then
  cargo build --release -q -p memplan-cli --manifest-path "$repo/Cargo.toml"
  memplan="$repo/target/release/memplan"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ${#files[@]} -eq 0 ]; then
  for n in ${SIZES:-50 300}; do
    for s in ${SEEDS:-1 2}; do
      f="$work/perfect-$n-$s.csv"
      "$memplan" generate --kind perfect --buffers "$n" --seed "$s" -o "$f"
      files+=("$f")
    done
  done
fi

# The median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# A field of a JSON line.
field() { python3 -c 'import json, sys; v = json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"; }

echo "CP-SAT: $("$python" -c 'import ortools; print(ortools.__version__)') with $workers workers; time limit ${time_limit} s; median of $repeat; memplan solve ${extra[*]:-(auto)}"
printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' instance buffers capacity memplan "memplan s" CP-SAT "CP-SAT s" "memplan / CP-SAT"
printf '|---|---|---|---|---|---|---|---|\n'
status=0
for f in "${files[@]}"; do
  name=$(basename "$f" .csv)
  capacity=${CAPACITY:-}
  if [ -z "$capacity" ]; then
    suffix=${name##*.}
    if [ "$suffix" != "$name" ] && [[ $suffix =~ ^[0-9]+$ ]]; then
      capacity=$suffix
    else
      capacity=$(field "$("$memplan" stats "$f" "${lifetimes[@]}" --json)" max_load)
    fi
  fi
  buffers=$(($(grep -cv '^[[:space:]]*$' "$f") - 1))
  m_times=() c_times=() m_dec="" c_dec=""
  for ((r = 0; r < repeat; r++)); do
    # memplan (a not-found answer exits with a non-zero status).
    out=$("$memplan" solve "$f" --capacity "$capacity" --time-limit "$time_limit" --json \
      "${lifetimes[@]}" -o "$work/memplan.csv" "${extra[@]}" 2>/dev/null) || true
    if [ -z "$out" ]; then echo "differential-cpsat: memplan failed on $f" >&2; exit 2; fi
    m_times+=("$(field "$out" seconds)")
    case "$(field "$out" status)/$(field "$out" reason)" in
      ok/*) d=fits
        "$memplan" validate "${lifetimes[@]}" "$f" "$work/memplan.csv" >/dev/null || { echo "differential-cpsat: memplan's plan of $f is invalid" >&2; exit 2; } ;;
      "not_found/proven infeasible") d=infeasible ;;
      *) d=- ;;
    esac
    [ -z "$m_dec" ] || [ "$m_dec" = "$d" ] || d="$m_dec|$d"
    m_dec=$d
    # CP-SAT
    rm -f "$work/cpsat.csv"
    out=$("$python" "$repo/scripts/cpsat.py" "$f" --capacity "$capacity" --time-limit "$time_limit" \
      --workers "$workers" "${lifetimes[@]}" --plan "$work/cpsat.csv")
    c_times+=("$(field "$out" time)")
    case "$(field "$out" status)" in
      OPTIMAL | FEASIBLE) d=fits
        "$memplan" validate "${lifetimes[@]}" "$f" "$work/cpsat.csv" >/dev/null || { echo "differential-cpsat: CP-SAT's plan of $f is invalid" >&2; exit 2; } ;;
      INFEASIBLE) d=infeasible ;;
      *) d=- ;;
    esac
    [ -z "$c_dec" ] || [ "$c_dec" = "$d" ] || d="$c_dec|$d"
    c_dec=$d
  done
  m_time=$(printf '%s\n' "${m_times[@]}" | median)
  c_time=$(printf '%s\n' "${c_times[@]}" | median)
  ratio=$(awk -v m="$m_time" -v c="$c_time" 'BEGIN { if (c > 0) printf "%.2fx", m / c; else print "-" }')
  note=""
  if { [ "$m_dec" = fits ] && [ "$c_dec" = infeasible ]; } || { [ "$m_dec" = infeasible ] && [ "$c_dec" = fits ]; }; then
    note=" DISAGREE"
    status=1
  fi
  printf '| %s | %s | %s | %s | %.3f | %s | %.3f | %s%s |\n' "$name" "$buffers" "$capacity" \
    "$m_dec" "$m_time" "$c_dec" "$c_time" "$ratio" "$note"
done
exit $status
