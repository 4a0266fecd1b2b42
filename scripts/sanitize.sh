#!/usr/bin/env bash
# Builds the library, plugins and test suites with a sanitizer into ./build-<name> and runs
# every test under it. Usage: scripts/sanitize.sh thread | address,undefined | address | undefined
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh thread|address|undefined|address,undefined}
build_dir="build-${kind/,/-}"
. scripts/lib/sanitizer_build.sh
configure_sanitizer_build "$kind" "$build_dir"
cmake --build "$build_dir" --parallel "$(nproc)"
# OpenBLAS is not instrumented: keep it on the calling thread so the sanitizers see every access.
export OPENBLAS_NUM_THREADS=1
# OpenBLAS and the C library are not instrumented; their internal handovers are suppressed.
# Allocations too large to serve return null, so that tests of allocation failure see the
# library's OutOfMemoryError rather than the sanitizer's own report.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 suppressions=$PWD/tests/cpu_kernels/tsan.supp"
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"
