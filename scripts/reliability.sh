#!/usr/bin/env bash
# Prints the reliability figures, one line per harness:
#   fuzz <target>: executions and findings of each libFuzzer target (scripts/fuzz.sh)
#   faults: fault-injection test cases run and survived (broken plugins, allocation failures:
#           the doctest cases whose source lies under one of $RELIABILITY_FAULT_SOURCES)
#   soak: the soak tests' own summary lines (tileops_tests -tc='soak*')
#   sanitizers: the exit status of each sanitizer suite (scripts/sanitize.sh), when asked
# Usage: scripts/reliability.sh [--fuzz-seconds N | --fuzz-logs] [--soak-seconds N] [--sanitizers]
#   --fuzz-seconds N  fuzz each target for N seconds first (default 20)
#   --fuzz-logs       read the figures of the last scripts/fuzz.sh run instead of fuzzing
#   --soak-seconds N  TILEOPS_SOAK_SECONDS for the soak test (default 10)
#   --sanitizers      also run the address,undefined and thread suites (long: full rebuilds)
# Expects the build of scripts/build.sh in $TILEOPS_BUILD_DIR (default build/). Exits
# non-zero when any harness reports a finding, a failure or an unexpected error.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds=20
fuzz_run=1
soak_seconds=10
sanitizers=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzz-seconds) fuzz_seconds=${2:?--fuzz-seconds needs a number}; shift 2 ;;
    --fuzz-logs) fuzz_run=0; shift ;;
    --soak-seconds) soak_seconds=${2:?--soak-seconds needs a number}; shift 2 ;;
    --sanitizers) sanitizers=1; shift ;;
    *) echo "reliability.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

build_dir=${TILEOPS_BUILD_DIR:-build}
fuzz_dir=${TILEOPS_FUZZ_BUILD_DIR:-build-address-undefined}
tests="$build_dir/bin/tileops_tests"
fault_sources=${RELIABILITY_FAULT_SOURCES:-"*tests/plugin_host/*,*tests/plugins/*,*tests/reliability/*"}
failed=0

# The same empty config environment CTest gives every test.
mkdir -p "$build_dir/reliability-no-config"
export TILEOPS_CONFIG="" XDG_CONFIG_HOME="$PWD/$build_dir/reliability-no-config" XDG_CONFIG_DIRS="$PWD/$build_dir/reliability-no-config"

# fuzz: one line per target, from scripts/fuzz.sh (which prints exactly these lines).
if [ "$fuzz_run" -eq 1 ]; then
  scripts/fuzz.sh "$fuzz_seconds" >"$build_dir/reliability-fuzz.out" 2>&1 || failed=1
  grep '^fuzz ' "$build_dir/reliability-fuzz.out" | sed 's/ log=.*//'
  if ! grep -q '^fuzz ' "$build_dir/reliability-fuzz.out"; then
    echo "fuzz: the fuzz build failed (see $build_dir/reliability-fuzz.out)"
  fi
else
  summaries=("$fuzz_dir"/logs/*.summary)
  if [ ! -e "${summaries[0]}" ]; then echo "fuzz: no summaries in $fuzz_dir/logs (run scripts/fuzz.sh)"; fi
  for summary in "${summaries[@]}"; do
    [ -e "$summary" ] || continue
    sed 's/ log=.*//' "$summary"
    if ! grep -q ' findings=0 ' "$summary"; then failed=1; fi
  done
fi

if [ ! -x "$tests" ]; then
  echo "faults: $tests is not built (run scripts/build.sh)"
  echo "soak: $tests is not built"
  exit 1
fi

# The summary doctest prints: "[doctest] test cases: N | P passed | F failed | S skipped".
summary_field() { grep -o "[0-9]* $1" | head -1 | grep -o '^[0-9]*'; }

# faults: every doctest case under the fault-injection directories, soak excluded.
out=$("$tests" --source-file="$fault_sources" --test-case-exclude='soak*' --no-intro 2>&1)
status=$?
line=$(grep 'test cases:' <<<"$out" | tail -1)
cases=$(grep -o 'test cases: *[0-9]*' <<<"$line" | grep -o '[0-9]*$')
passed=$(summary_field passed <<<"$line")
failures=$(summary_field failed <<<"$line")
echo "faults: cases=${cases:-0} survived=${passed:-0} failed=${failures:-0} (sources $fault_sources)"
if [ "$status" -ne 0 ] || [ "${failures:-0}" -ne 0 ]; then failed=1; fi

# soak: the tests print their own summary lines (the mixed soak, and the op shared under a small
# cache bound with its heap growth); re-print them.
out=$(TILEOPS_SOAK_SECONDS="$soak_seconds" "$tests" --test-case='soak*' --no-intro 2>&1)
status=$?
soak_line=$(grep -o 'soak: calls=.*' <<<"$out" | tail -1)
shared_line=$(grep -o 'soak shared op: .*' <<<"$out" | tail -1)
if [ -n "$shared_line" ]; then echo "$shared_line"; fi
if [ -n "$soak_line" ]; then
  echo "$soak_line"
  unexpected=$(grep -o 'unexpected=[0-9]*' <<<"$soak_line" | grep -o '[0-9]*$')
  if [ "$status" -ne 0 ] || [ "${unexpected:-0}" -ne 0 ]; then failed=1; fi
elif grep -q 'test cases: *0 ' <<<"$out" || ! grep -q 'test cases:' <<<"$out"; then
  echo "soak: not present"
else
  echo "soak: the soak test ran but printed no summary line (exit status $status)"
  failed=1
fi

# sanitizers: exit status of each suite, only when asked (each is a full rebuild).
if [ "$sanitizers" -eq 1 ]; then
  results=()
  for kind in address,undefined thread; do
    if scripts/sanitize.sh "$kind" >"$build_dir/reliability-sanitize-${kind/,/-}.out" 2>&1; then
      results+=("$kind=clean")
    else
      results+=("$kind=findings(exit $?)")
      failed=1
    fi
  done
  echo "sanitizers: ${results[*]}"
else
  echo "sanitizers: not run (pass --sanitizers; each suite is a full rebuild)"
fi
exit "$failed"
