// Which implementation serves which call once the cpu plugin is loaded (key_for on the cpu
// device, whose runtime reports no architecture, so the answers do not depend on the machine).
#include <doctest/doctest.h>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/ops/elementwise.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/ops/reduction.hpp"
#include "tileops/extend/ops/softmax.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"

using namespace tileops;

namespace {

template <class C>
C on_cpu(C call) {
  call.device = Device::cpu();
  return call;
}

}  // namespace

TEST_CASE("the cpu plugin serves float norms, the reference serves float64") {
  load_backends();
  RMSNormFwdOp op({64});
  ops::RMSNormFwdOp::RmsNorm::Call call;
  call.n = 64;
  call.dtype = DType::bfloat16;
  CHECK(op.key_for("rms_norm", on_cpu(call)) == "cpu_rms_norm");
  call.dtype = DType::float64;
  CHECK(op.key_for("rms_norm", on_cpu(call)) == "rms_norm_reference");
  RMSNormFwdOp reference({64}, std::nullopt, std::string(REFERENCE));
  call.dtype = DType::float32;
  CHECK(reference.key_for("rms_norm", on_cpu(call)) == "rms_norm_reference");
}

TEST_CASE("softmax over an inner axis is left to the reference") {
  load_backends();
  SoftmaxFwdOp op(0);
  ops::SoftmaxFwdOp::Softmax::Call call;
  call.n = 8;
  call.inner = 1;
  CHECK(op.key_for("softmax", on_cpu(call)) == "cpu_softmax");
  call.inner = 16;
  CHECK(op.key_for("softmax", on_cpu(call)) == "softmax_reference");
}

TEST_CASE("addition: same-shape and row broadcasts go to the plugin, general broadcasts to the reference") {
  load_backends();
  AddFwdOp op;
  using Add = ops::AddFwdOp::Add;
  Add::Call call;
  call.dtype = DType::float32;
  call.kind = Add::BroadcastKind::same_shape;
  CHECK(op.key_for("add", on_cpu(call)) == "cpu_add");
  call.kind = Add::BroadcastKind::row;
  call.dtype = DType::int64;
  CHECK(op.key_for("add", on_cpu(call)) == "cpu_add");
  call.kind = Add::BroadcastKind::general;
  CHECK(op.key_for("add", on_cpu(call)) == "add_reference");
}

TEST_CASE("GEMM goes through BLAS for every float dtype, but half-precision decode against [n, k] weights") {
  load_backends();
  GemmFwdOp op;
  ops::GemmFwdOp::Gemm::Call call;
  call.m = call.n = call.k = 64;
  for (DType d : {DType::float32, DType::float16, DType::bfloat16}) {
    call.dtype = d;
    CHECK(op.key_for("gemm", on_cpu(call)) == "cpu_blas_gemm");
  }
  call.m = 8;
  call.trans_b = true;
  CHECK(op.key_for("gemm", on_cpu(call)) == "cpu_dot_rows_gemm");
  call.dtype = DType::float32;
  CHECK(op.key_for("gemm", on_cpu(call)) == "cpu_blas_gemm");
  call.dtype = DType::float16;
  call.m = 9;
  CHECK(op.key_for("gemm", on_cpu(call)) == "cpu_blas_gemm");
  call.m = 1;
  call.trans_a = true;
  CHECK(op.key_for("gemm", on_cpu(call)) == "cpu_blas_gemm");
}

TEST_CASE("reductions: supported dtype pairs go to the plugin, the rest to the reference") {
  load_backends();
  SumFwdOp op;
  ops::SumFwdOp::Sum::Call call;
  call.in_dtype = DType::bfloat16;
  call.out_dtype = DType::float32;
  CHECK(op.key_for("sum", on_cpu(call)) == "cpu_sum");
  call.in_dtype = DType::int32;
  call.out_dtype = DType::float32;
  CHECK(op.key_for("sum", on_cpu(call)) == "sum_reference");
}

TEST_CASE("batch norm: training and inference dispatch on their own interfaces") {
  load_backends();
  BatchNormFwdOp op(true);
  ops::BatchNormFwdOp::BatchNormFwdTrain::Call train;
  train.channels = 4;
  train.dtype = DType::float16;
  ops::BatchNormFwdOp::BatchNormFwdInfer::Call infer;
  infer.channels = 4;
  infer.dtype = DType::float16;
  CHECK(op.key_for("batch_norm_fwd_train", on_cpu(train)) == "cpu_batch_norm_train");
  CHECK(op.key_for("batch_norm_fwd_infer", on_cpu(infer)) == "cpu_batch_norm_infer");
}
