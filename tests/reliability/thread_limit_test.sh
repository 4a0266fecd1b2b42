#!/usr/bin/env bash
# The cpu plugin under an address-space limit its 1024 asked-for threads cannot fit in: the pool
# starts what it can, gives half back, warns, and the op runs. The limit (about
# 6 GB against 8 GB of thread stacks) leaves room for the C library's per-thread malloc arenas,
# which reserve address space of their own as threads come and go.
# Usage: thread_limit_test.sh <tileops program>
set -uo pipefail
tileops=${1:?usage: thread_limit_test.sh <tileops program>}
out=$( (ulimit -v 6000000 && TILEOPS_CPU_THREADS=1024 timeout 120 "$tileops" run ReluFwdOp -i 'input=[4194304]' -r 1) 2>&1)
status=$?
echo "$out"
if [ "$status" -ne 0 ]; then
  echo "FAIL: tileops exited with status $status under the limit"
  exit 1
fi
if ! grep -q "worker threads asked for (Resource temporarily unavailable); keeping" <<<"$out"; then
  echo "FAIL: no warning that the thread pool could not start every thread"
  exit 1
fi
if ! grep -q "serving target: builtin" <<<"$out"; then
  echo "FAIL: the op did not run"
  exit 1
fi
echo "PASS"
