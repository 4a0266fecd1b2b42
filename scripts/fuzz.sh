#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang 16, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-address-undefined/ (the tree of
# `scripts/sanitize.sh address,undefined`: after that suite, nothing is compiled again), then
# runs the targets one after another: each first replays its committed inputs
# (fuzz/<target>/regressions/), then fuzzes for a bounded time from its seeds
# (fuzz/<target>/seeds/; manifests/ and tests/data/ too for the manifest and opgen targets) with
# its dictionary, keeping the grown corpus in <build>/corpus/<target>/. Findings (crash-, leak-,
# timeout-, oom- and slow-unit- inputs) land in <build>/findings/<target>/, each target's output
# in <build>/logs/<target>.log, and one summary line per target on stdout (and in
# <build>/logs/<target>.summary). Exits non-zero when any target has a finding.
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]   (default: 60 s, every target)
# TILEOPS_FUZZ_RUNS=N also stops each target after N executions (a long campaign:
# TILEOPS_FUZZ_RUNS=1000000 scripts/fuzz.sh 86400).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if [ $# -gt 0 ]; then shift; fi
all_targets=(config dlpack expr graph manifest op_call opgen)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  if [ ! -f "fuzz/$t/${t}_fuzzer.cpp" ]; then
    echo "fuzz.sh: unknown target '$t'; expected one of ${all_targets[*]}" >&2
    exit 2
  fi
done

build_dir=${TILEOPS_FUZZ_BUILD_DIR:-build-address-undefined}
. scripts/lib/sanitizer_build.sh
configure_sanitizer_build address,undefined "$build_dir" >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}"

# No user or system config may change what the targets see.
mkdir -p "$build_dir/no-config" "$build_dir/logs"
export TILEOPS_CONFIG="" XDG_CONFIG_HOME="$PWD/$build_dir/no-config" XDG_CONFIG_DIRS="$PWD/$build_dir/no-config"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=0
for t in "${targets[@]}"; do
  exe="$build_dir/bin/fuzz_$t"
  findings="$build_dir/findings/$t"
  corpus="$build_dir/corpus/$t"
  log="$build_dir/logs/$t.log"
  mkdir -p "$findings" "$corpus"
  stamp=$(mktemp)
  options=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/")
  campaign=(-max_total_time="$seconds")
  if [ -n "${TILEOPS_FUZZ_RUNS:-}" ]; then campaign+=(-runs="$TILEOPS_FUZZ_RUNS"); fi
  if [ -f "fuzz/$t/$t.dict" ]; then options+=(-dict="fuzz/$t/$t.dict"); fi
  seeds=()
  for dir in "fuzz/$t/seeds" $(case "$t" in manifest | opgen) echo manifests tests/data/manifests_broken ;; esac); do
    if [ -d "$dir" ]; then seeds+=("$dir"); fi
  done
  status=0
  : >"$log"
  regressions=()
  if [ -d "fuzz/$t/regressions" ]; then
    mapfile -t regressions < <(find "fuzz/$t/regressions" -type f | sort)
  fi
  if [ ${#regressions[@]} -gt 0 ]; then
    "$exe" "${options[@]}" "${regressions[@]}" >>"$log" 2>&1 || status=1
  fi
  if [ "$status" -eq 0 ]; then
    "$exe" "${options[@]}" "${campaign[@]}" "$corpus" "${seeds[@]}" >>"$log" 2>&1 || status=1
  fi
  found=$(find "$findings" -type f -newer "$stamp" | wc -l)
  rm -f "$stamp"
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  if [ "$status" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi
  echo "fuzz $t: executions=$runs findings=$found regressions=${#regressions[@]} seconds=$seconds log=$log" |
    tee "$build_dir/logs/$t.summary"
  if [ "$found" -ne 0 ]; then failed=1; fi
done
exit "$failed"
