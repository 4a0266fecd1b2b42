#!/usr/bin/env bash
# tileops-opgen's command line: --help prints the usage on stdout and exits 0; a missing
# required option or an unknown one prints the reason and the usage on stderr and exits 2.
# Usage: usage_test.sh <tileops-opgen>
set -euo pipefail
opgen=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

help=$("$opgen" --help) || fail "--help exited $?"
grep -q "^usage: tileops-opgen --out-dir DIR" <<< "$help" || fail "--help printed no usage on stdout: $help"

status=0
err=$("$opgen" --out-dir x 2>&1 >/dev/null) || status=$?
[ "$status" -eq 2 ] || fail "a missing option exited $status, expected 2"
grep -q "tileops-opgen: --out-dir, --kernels-out-dir, --kernels-prefix, --internal-dir and a manifest are required" <<< "$err" ||
  fail "a missing option said: $err"

status=0
err=$("$opgen" --colour 2>&1 >/dev/null) || status=$?
[ "$status" -eq 2 ] || fail "an unknown option exited $status, expected 2"
grep -q "tileops-opgen: unknown option --colour" <<< "$err" || fail "an unknown option said: $err"
echo "tileops-opgen usage: all checks passed"
