#!/usr/bin/env bash
# Builds libmemplan (static and shared), writes a pkg-config file for it,
# compiles the C and C++ examples against each with the system compiler
# (cc, c++), runs them, and checks their plans with `memplan validate`;
# then runs the C example under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   examples/c/run.sh                         # release build
#   MEMPLAN_PROFILE=test examples/c/run.sh    # reuse `cargo test`'s build (CI)
#
# Outputs go to target/c-examples/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

profile=${MEMPLAN_PROFILE:-release}
case "$profile" in
  dev | test) libdir="$root/target/debug" ;;
  *) libdir="$root/target/$profile" ;;
esac
cargo build --profile "$profile" -p memplan-capi -p memplan-cli
memplan="$libdir/memplan"
out="$root/target/c-examples"
mkdir -p "$out"

# A pkg-config file for this build: the header from the source tree, the
# libraries from the build directory.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
cat > "$libdir/memplan.pc" <<PC
libdir=$libdir
includedir=$root/crates/memplan-capi/include

Name: memplan
Description: Static memory planner (C API)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lmemplan
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
export PKG_CONFIG_PATH="$libdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

cflags=$(pkg-config --cflags memplan)
shared_libs="$(pkg-config --libs memplan) -Wl,-rpath,$libdir"
# The static library by path (-lmemplan would pick the shared one), with
# the system libraries Rust's standard library needs.
static_libs="$libdir/libmemplan.a $(pkg-config --libs-only-l --static memplan | sed 's/-lmemplan//')"

# The shared library exports exactly the functions of the header.
diff <(nm -D --defined-only "$libdir/libmemplan.so" | awk '{print $3}' | sort) \
  <(sed -n 's/^memplan_status \(memplan_[a-z_]*\)(.*/\1/p' crates/memplan-capi/include/memplan.h | sort)
echo "libmemplan.so exports the $(grep -c '^memplan_status memplan_' crates/memplan-capi/include/memplan.h) functions of memplan.h"

warnings="-Wall -Wextra -pedantic -Werror"
# shellcheck disable=SC2086 # word splitting of the flag lists is intended
build() { # NAME COMPILER STD SOURCE LIBS [EXTRA FLAGS]
  local name=$1 compiler=$2 std=$3 source=$4 libs=$5
  shift 5
  $compiler -std="$std" $warnings "$@" $cflags "$source" $libs -o "$out/$name"
}

check_plan() { # PLAN.csv INPUT.csv [--lifetimes L]
  local plan=$1 input=$2
  shift 2
  "$memplan" validate "$input" "$plan" "$@"
}

# C example: static, shared, sanitizers.
build plan-c-static cc c99 examples/c/plan.c "$static_libs"
build plan-c-shared cc c99 examples/c/plan.c "$shared_libs"
build plan-c-asan cc c99 examples/c/plan.c "$shared_libs" \
  -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
for kind in static shared; do
  echo "== C example ($kind)"
  "$out/plan-c-$kind" > "$out/plan-c-$kind.csv"
  cat "$out/plan-c-$kind.csv"
  # The example planned the buffers of problem.csv, and its plan is valid.
  diff <(cut -d, -f1-5 examples/c/problem.csv) <(cut -d, -f1-5 "$out/plan-c-$kind.csv")
  check_plan "$out/plan-c-$kind.csv" examples/c/problem.csv
done
echo "== C example under AddressSanitizer and UndefinedBehaviorSanitizer"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$out/plan-c-asan" > "$out/plan-c-asan.csv"
check_plan "$out/plan-c-asan.csv" examples/c/problem.csv
echo "sanitizers: no error"

# C++ example: static and shared.
build plan-cpp-static c++ c++17 examples/c/plan.cpp "$static_libs" -pthread
build plan-cpp-shared c++ c++17 examples/c/plan.cpp "$shared_libs" -pthread
for kind in static shared; do
  echo "== C++ example ($kind)"
  "$out/plan-cpp-$kind" > "$out/plan-cpp-$kind.csv"
  head -4 "$out/plan-cpp-$kind.csv"
  cut -d, -f1-4 "$out/plan-cpp-$kind.csv" > "$out/plan-cpp-$kind.problem.csv"
  check_plan "$out/plan-cpp-$kind.csv" "$out/plan-cpp-$kind.problem.csv" --lifetimes inclusive
done
echo "C and C++ examples: all plans valid"
