// The op set's behaviour at the edges: empty tensors, strided inputs, broadcasting, in-place
// and `out` calls, and bad calls that must leave every tensor untouched.
#include <doctest/doctest.h>

#include <cmath>

#include "tileops/errors.hpp"
#include "tileops/extend/alibi_slope.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

Tensor random(std::vector<std::int64_t> shape, DType dtype = DType::float32, unsigned seed = 7) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu(),
                                 seed)[0];
}

void check_close(const Tensor& got, const Tensor& want) {
  const testing::Comparison c = testing::compare(got, want);
  CHECK_MESSAGE(c.ok, "max abs " << c.max_abs << ", max rel " << c.max_rel);
}

}  // namespace

TEST_CASE("an empty batch gives an empty output without running a kernel") {
  load_backends();
  RMSNormFwdOp op({32});
  const Tensor y = op(Tensor::empty({0, 32}, DType::bfloat16));
  CHECK(y.shape() == Shape{0, 32});
  CHECK(op.built_entries("rms_norm").empty());
  SumFwdOp sum(std::int64_t{0});
  CHECK(sum(Tensor::empty({0, 3}, DType::float32)).to_doubles() == std::vector<double>{0, 0, 0});  // not empty: runs
}

TEST_CASE("strided inputs give the same results as their contiguous copies") {
  load_backends();
  const Tensor base = random({64, 48});
  const Tensor strided = base.transpose(0, 1);  // [48, 64], not contiguous
  SoftmaxFwdOp softmax;
  check_close(softmax(strided), softmax(strided.contiguous()));
  GemmFwdOp gemm(false, false);
  const Tensor b = random({64, 16}, DType::float32, 9);
  check_close(gemm(strided, b), gemm(strided.contiguous(), b));
  LayerNormFwdOp ln({64});
  check_close(ln(strided), ln(strided.contiguous()));
}

TEST_CASE("addition broadcasts by NumPy rules and rejects shapes that do not broadcast") {
  load_backends();
  AddFwdOp add(std::int64_t{2});
  const Tensor a = random({4, 1, 8});
  const Tensor b = random({3, 1});
  const Tensor y = add(a, b);
  CHECK(y.shape() == Shape{4, 3, 8});
  CHECK(y.get(1 * 8 + 5) == doctest::Approx(a.get(5) + 2 * b.get(1)));
  const Tensor scalar = Tensor::from_doubles(std::vector<double>{1.5}, std::vector<std::int64_t>{}, DType::float32);
  CHECK(add(a, scalar).get(0) == doctest::Approx(a.get(0) + 3.0));
  CHECK_THROWS_AS(add(random({4, 3}), random({5})), ValueError);
}

TEST_CASE("addition into `out` writes and returns that buffer") {
  load_backends();
  AddFwdOp add;
  const Tensor a = random({16, 8});
  const Tensor b = random({8});
  const Tensor out = Tensor::empty({16, 8}, DType::float32);
  const Tensor y = add(a, b, out);
  CHECK(y.is_same(out));
  CHECK(out.get(9) == doctest::Approx(a.get(9) + b.get(1)));
  const Tensor strided_out = Tensor::empty({8, 16}, DType::float32).transpose(0, 1);
  CHECK(add(a, b, strided_out).is_same(strided_out));
  CHECK(strided_out.get(9) == doctest::Approx(a.get(9) + b.get(1)));
  const Tensor wrong = Tensor::empty({16, 9}, DType::float32);
  wrong.fill(-7);
  CHECK_THROWS_AS(add(a, b, wrong), ValueError);
  CHECK(wrong.get(0) == -7);
}

TEST_CASE("relu in place writes its input and returns it, out of place leaves it alone") {
  load_backends();
  const Tensor x = random({32, 16}, DType::bfloat16);
  const Tensor before = x.clone();
  ReluFwdOp relu;
  const Tensor y = relu(x);
  CHECK_FALSE(y.is_same(x));
  CHECK(testing::compare(x, before).ok);
  ReluFwdOp inplace(true);
  const Tensor z = inplace(x);
  CHECK(z.is_same(x));
  CHECK(testing::compare(x, y).ok);
  const Tensor strided = random({16, 32}).transpose(0, 1);
  CHECK(inplace(strided).is_same(strided));
  for (double v : strided.to_doubles()) CHECK(v >= 0);
}

TEST_CASE("batch norm training updates the running statistics in place") {
  load_backends();
  BatchNormFwdOp train(true, 0.5);
  const Tensor x = random({4, 3, 5});
  const Tensor mean = Tensor::zeros({3}, DType::float32);
  const Tensor var = Tensor::from_doubles(std::vector<double>{1, 1, 1}, std::vector<std::int64_t>{3}, DType::float32);
  const auto r = train(x, mean, var);
  REQUIRE(r.mean.defined());
  CHECK(mean.get(1) == doctest::Approx(0.5 * r.mean.get(1)));
  BatchNormFwdOp infer(false);
  const auto inferred = infer(x, mean, var);
  CHECK_FALSE(inferred.mean.defined());
  CHECK(inferred.y.shape() == x.shape());
}

TEST_CASE("reductions over an axis, several axes and everything, with keepdim") {
  load_backends();
  const Tensor x = random({3, 4, 5});
  SumFwdOp over_middle(std::int64_t{1}, true);
  const Tensor y = over_middle(x);
  CHECK(y.shape() == Shape{3, 1, 5});
  double expected = 0;
  for (int j = 0; j < 4; ++j) expected += x.get(j * 5);
  CHECK(y.get(0) == doctest::Approx(expected).epsilon(1e-5));
  SumFwdOp outer_axes(std::vector<std::int64_t>{0, 2});
  CHECK(outer_axes(x).shape() == Shape{4});
  SumFwdOp everything;
  CHECK(everything(x).shape() == Shape{});
  ProdFwdOp ints(std::int64_t{-1});
  const Tensor i = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4}, std::vector<std::int64_t>{2, 2}, DType::int32);
  const Tensor p = ints(i);
  CHECK(p.dtype() == DType::int64);
  CHECK(p.to_doubles() == std::vector<double>{2, 12});
}

TEST_CASE("a bad dim is rejected at construction or call with the signature error") {
  load_backends();
  SumFwdOp bad_dim(std::int64_t{3});
  CHECK_THROWS_WITH_AS(bad_dim(random({2, 2})), doctest::Contains("dim"), ValueError);
  SoftmaxFwdOp bad_softmax(5);
  CHECK_THROWS_AS(bad_softmax(random({2, 2})), ValueError);
}

TEST_CASE("wrong calls raise the signature error naming the declaration and write nothing") {
  load_backends();
  RMSNormFwdOp op({16});
  const Tensor x = random({4, 16});
  const Tensor x_before = x.clone();
  CHECK_THROWS_WITH_AS(op(x, random({15})), doctest::Contains("input 'weight'"), ValueError);
  CHECK_THROWS_WITH_AS(op(random({4, 16}, DType::int32)), doctest::Contains("input 'x'"), TypeError);
  CHECK_THROWS_AS(op(x, random({16}, DType::float16)), TypeError);
  ReluFwdOp inplace(true);
  const Tensor ints = Tensor::from_doubles(std::vector<double>{-1, 2}, std::vector<std::int64_t>{2}, DType::int64);
  CHECK_THROWS_AS(inplace(ints), TypeError);
  CHECK(ints.get(0) == -1);
  CHECK(testing::compare(x, x_before).ok);
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
}

TEST_CASE("the SwiGLU MLP equals its three stages run by hand") {
  load_backends();
  SwiGLUMLPFwdOp mlp;
  const Tensor x = random({4, 16});
  const Tensor w_gate_up = random({2 * 24, 16}, DType::float32, 3);
  const Tensor w_down = random({16, 24}, DType::float32, 4);
  const Tensor y = mlp(x, w_gate_up, w_down);
  GemmFwdOp gemm(false, true);
  SiluAndMulFwdOp act;
  check_close(y, gemm(act(gemm(x, w_gate_up)), w_down));
  const auto rec = mlp.last_call();
  CHECK(rec->stage_calls("gate_up").size() == 1);
  CHECK(rec->stage_calls("down").size() == 1);
}

TEST_CASE("ALiBi: slopes by the paper's rule, bias linear in the distance") {
  load_backends();
  AlibiFwdOp alibi(5, 8, DType::float32, Device::cpu());
  const Tensor y = alibi();
  CHECK(y.shape() == Shape{8, 5, 5});
  CHECK(y.get(0 * 25 + 0 * 5 + 3) == doctest::Approx(std::pow(2.0, -1.0) * 3));
  CHECK(alibi_slope(0, 6) == doctest::Approx(std::pow(2.0, -2.0)));  // largest power of two <= 6 is 4
  CHECK(alibi_slope(4, 6) == doctest::Approx(std::pow(2.0, -1.0)));  // then odd slopes of 8 heads
}

TEST_CASE("an `out` buffer whose elements share memory, or that overlaps an input in part, is refused naming both") {
  load_backends();
  AddFwdOp add;
  const Tensor buf = random({17});
  const Tensor a = buf.slice(0, 0, 16), shifted = buf.slice(0, 1, 17);
  const Tensor b = random({16});
  const std::vector<double> before = buf.to_doubles();
  // Each call twice: the second is a repeat of the first's facts, whose check the call cache replays.
  for (int repeat = 0; repeat < 2; ++repeat) {
    CHECK_THROWS_WITH_AS(add(a, b, shifted),
                         doctest::Contains("'out' (the buffer of output 'output') overlaps input 'a' in part: they share "
                                           "memory without being the same view"),
                         ValueError);
    CHECK_THROWS_WITH_AS(add(b, a, shifted), doctest::Contains("overlaps input 'b' in part"), ValueError);
  }
  CHECK(buf.to_doubles() == before);
  // A zero stride: every element of `out` is one location.
  const Tensor one = random({1});
  const Tensor broadcast_out = one.as_strided({16}, {0}, 0);
  CHECK_THROWS_WITH_AS(add(b, b, broadcast_out),
                       doctest::Contains("has shape [16] and strides [0], under which several of its elements may share "
                                         "memory"),
                       ValueError);
  // The same view as an input is full in-place aliasing, which AddFwdOp's manifest declares.
  const Tensor x = random({16});
  const std::vector<double> xs = x.to_doubles(), bs = b.to_doubles();
  CHECK(add(x, b, x).is_same(x));
  CHECK(x.get(3) == doctest::Approx(xs[3] + bs[3]));
  CHECK(add(b, x, x).is_same(x));
  // Disjoint halves of one buffer do not overlap.
  const Tensor halves = random({32});
  const Tensor lower = halves.slice(0, 0, 16), upper = halves.slice(0, 16, 32);
  CHECK(add(lower, b, upper).is_same(upper));
  CHECK(halves.get(16) == doctest::Approx(halves.get(0) + bs[0]));
  // The overlapping call again, now a repeat of facts whose check the call cache holds: its
  // addresses are still compared.
  CHECK_THROWS_WITH_AS(add(a, b, shifted), doctest::Contains("overlaps input 'a' in part"), ValueError);
  CHECK(buf.to_doubles() == before);
  // Strided views of one shape share their facts whatever their strides: a disjoint call first,
  // then one whose wider stride makes `out` reach into the input.
  const Tensor wide = random({64});
  const Tensor c = random({8});
  CHECK(add(wide.as_strided({8}, {2}, 32), c, wide.as_strided({8}, {2}, 0)).defined());
  const std::vector<double> wide_before = wide.to_doubles();
  CHECK_THROWS_WITH_AS(add(wide.as_strided({8}, {2}, 32), c, wide.as_strided({8}, {5}, 0)),
                       doctest::Contains("overlaps input 'a' in part"), ValueError);
  CHECK(wide.to_doubles() == wide_before);
}
