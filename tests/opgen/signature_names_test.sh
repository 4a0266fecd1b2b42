#!/usr/bin/env bash
# tileops-opgen and the signature's names and string defaults: a parameter, input or output named
# like a C++ keyword or like a name the op class uses itself (target, out) is refused naming the
# file, the op and the name, and nothing is written; a string default keeps its backslashes and
# quotes (escaped in the C++ literal, not read as escapes).
# Usage: signature_names_test.sh <tileops-opgen>
set -euo pipefail
opgen=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "opgen names: $*" >&2; exit 1; }

# One op whose signature's params, inputs and outputs are $1, $2 and $3.
manifest() {
  cat <<YAML
NameFwdOp:
  family: name
  status: implemented
  signature:
    forall: {S: Shape}
    params:
$1
    inputs:
      $2: {dtype: float32, shape: "[*S]"}
    outputs:
      $3: {dtype: float32, shape: "[*S]"}
  workloads:
  - {S: [4], label: tiny}
  roofline:
    flops: "prod(S)"
YAML
}

run() {
  rm -rf "$work/out"
  "$opgen" --out-dir "$work/out/app" --kernels-out-dir "$work/out/kernels" --kernels-prefix k \
    --internal-dir "$work/out/internal" "$work/name.yaml" 2>"$work/err"
}

expect_error() {
  manifest "$1" "$2" "$3" >"$work/name.yaml"
  if run; then fail "accepted: params $1, input $2, output $3"; fi
  grep -qF -- "name.yaml: NameFwdOp: $4" "$work/err" || fail "expected: $4
got: $(cat "$work/err")"
  [ ! -e "$work/out" ] || fail "wrote files although it failed"
}

expect_error '      new: {type: int, default: 1}' x y "parameter 'new' is a C++ keyword or a name the generated op class uses itself"
expect_error '      target: {type: int, default: 1}' x y "parameter 'target' is a C++ keyword"
expect_error '      k: {type: int, default: 1}' class y "input 'class' is a C++ keyword"
expect_error '      k: {type: int, default: 1}' x out "output 'out' is a C++ keyword or a name the generated op class uses itself"

manifest '      sep: {type: str, default: "a\\tb\"c"}' x y >"$work/name.yaml"
run || fail "a string default with a backslash and a quote was refused: $(cat "$work/err")"
grep -qF 'std::string("a\\tb\"c")' "$work/out/app/name.hpp" ||
  fail "the string default is not escaped: $(grep -n 'sep' "$work/out/app/name.hpp")"
echo "tileops-opgen names: all checks passed"
