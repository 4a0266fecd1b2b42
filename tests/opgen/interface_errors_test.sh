#!/usr/bin/env bash
# tileops-opgen refuses an `interfaces:` section it cannot turn into C++, naming the file, the
# op, the field and the reason, and writes nothing; a valid section generates headers that say
# what the manifest said (defaults as C++ literals, enum values, the Result struct).
# Usage: interface_errors_test.sh <tileops-opgen>
set -euo pipefail
opgen=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "opgen interfaces: $*" >&2; exit 1; }

# The manifest of one op whose interface section is $1 (indented under `interfaces:`).
manifest() {
  cat <<YAML
ScaleFwdOp:
  family: scale
  status: implemented
  signature:
    forall: {S: Shape}
    inputs:
      x: {dtype: float32, shape: "[*S]"}
    outputs:
      y: {dtype: float32, shape: "[*S]"}
  interfaces:
$1
  workloads:
  - {S: [4], label: tiny}
  roofline:
    flops: "prod(S)"
YAML
}

run() {
  rm -rf "$work/out"
  "$opgen" --out-dir "$work/out/app" --kernels-out-dir "$work/out/kernels" --kernels-prefix k \
    --internal-dir "$work/out/internal" "$work/scale.yaml" 2>"$work/err"
}

# Each case: the section, then the words the error must hold.
expect_error() {
  manifest "$1" >"$work/scale.yaml"
  if run; then fail "accepted: $1"; fi
  grep -qF -- "$2" "$work/err" || fail "for: $1
expected the message to hold: $2
got: $(cat "$work/err")"
  grep -qF "scale.yaml: ScaleFwdOp" "$work/err" || fail "the message does not name the file and op: $(cat "$work/err")"
  [ ! -e "$work/out" ] || fail "wrote files although it failed: $1"
}

expect_error '    scale: {doc: d, call: {s: {type: float, default: 1.5abc}}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.s.default: '1.5abc' is not a finite decimal number"
expect_error '    scale: {doc: d, call: {s: {type: float, default: .inf}}, args: {x: Tensor}, returns: Tensor}' \
  "is not a finite decimal number"
expect_error '    scale: {doc: d, call: {n: {type: int64, default: 99999999999999999999}}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.n.default: '99999999999999999999' is not an int64 number"
expect_error '    scale: {doc: d, call: {t: {type: DType, default: float17}}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.t.default: 'float17' is not a dtype name"
expect_error '    scale: {doc: d, call: {k: {enum: Kind, values: [a, b], default: c}}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.k.default: 'c' is not one of the enum's values"
expect_error '    scale: {doc: d, call: {x: Tensor}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.x: type 'Tensor' is not one of int64, float, bool, DType or an enum"
expect_error '    scale: {doc: d, call: {}, args: {x: Tensor}, returns: Tensors}' \
  "interfaces.scale.returns: expected void, Tensor or a list of tensor names, not 'Tensors'"
expect_error '    scale: {doc: d, call: {device: int64}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scale.call.device: the name is CallSpec's own"
expect_error '    scale: {doc: d, call: {n: int64}, args: {x: Tensor}, returns: Tensor, reference: {identity: [m]}}' \
  "interfaces.scale.reference.identity: 'm' is not a call field"
expect_error '    scale: {doc: d, call: {}, args: {x: Tensor}, returns: Tensor, kernel: k}' \
  "interfaces.scale: unknown key 'kernel'"
expect_error '    scale_x: {doc: d, call: {}, args: {x: Tensor}, returns: Tensor}
    scaleX: {doc: d, call: {}, args: {x: Tensor}, returns: Tensor}' \
  "interfaces.scaleX: its class name ScaleX is another interface's"
expect_error '    2scale: {doc: d, call: {}, args: {x: Tensor}, returns: Tensor}' \
  "'2scale' is not a C++ identifier"

# A valid section: defaults become literals, the enum and the Result struct are declared.
manifest '    scale:
      doc: d
      call:
        s: {type: float, default: 2}
        n: {type: int64, default: -9223372036854775808}
        t: {type: DType, default: bool}
        k: {enum: Kind, values: [a, b], default: b}
      args: {x: Tensor, y: Tensor}
      returns: [lo, hi]' >"$work/scale.yaml"
run || fail "refused a valid section: $(cat "$work/err")"
header="$work/out/kernels/scale.hpp"
for want in "double s = 2.0;" "std::int64_t n = INT64_MIN;" "DType t = DType::bool_;" \
  "enum class Kind : std::uint8_t { a, b };" "Kind k = Kind::b;" "struct Result {" \
  "virtual Result forward(const Tensor& x, const Tensor& y) = 0;" "class ScaleFwdOp::Scale : public KernelInterface"; do
  grep -qF -- "$want" "$header" || fail "the generated header lacks: $want"
done
grep -qF '.kernel_type<ref::ScaleFwdOp::Scale>("scale_reference")' "$work/out/internal/scale_op_classes.cpp" ||
  fail "the class record does not register the reference kernel"
echo "opgen interfaces: all checks passed"
