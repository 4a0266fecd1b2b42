// The cuda plugin's kernels against the reference kernels on the host: every workload row of
// the manifests (scaled), then the cases the rows do not reach: empty tensors, one-element and
// very long rows, sizes that no vector width divides, views with odd offsets and strides,
// broadcasts, in-place and `out` calls, and tensors on the wrong device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "support/gpu.hpp"
#include "support/workload_numerics.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/half.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/embedding.hpp"
#include "tileops/ops/fused_add_rms_norm.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/pool.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/rope.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using testing::cuda_or_skip;

namespace {

const Device kGpu = Device::parse("cuda:0");

using MakeOp = std::function<std::unique_ptr<Op>(Target)>;
using View = std::function<Tensor(const Tensor&)>;

Tensor same(const Tensor& t) { return t; }

// The same values viewed one element past a 16-byte boundary: contiguous, but misaligned.
Tensor misaligned(const Tensor& t) {
  Tensor flat = Tensor::empty({t.numel() + 1}, t.dtype(), t.device());
  Tensor v = flat.as_strided(t.shape(), contiguous_strides(t.shape()), 1);
  v.copy_from(t);
  return v;
}

// The same values in a non-contiguous layout (the two leading axes stored transposed).
Tensor transposed_layout(const Tensor& t) {
  if (t.dim() < 2) return t;
  return t.transpose(0, 1).contiguous().transpose(0, 1);
}

Tensor random(std::vector<std::int64_t> shape, DType dtype, unsigned seed = 7) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu(),
                                 seed)
      .front();
}

// Runs make() on cuda copies of `inputs` and make(REFERENCE) on host copies, both seen through
// `view`, and compares every output and every input afterwards.
void check_against_reference(const std::string& what, const MakeOp& make, const std::vector<Tensor>& inputs,
                             const View& view = same) {
  CAPTURE(what);
  std::unique_ptr<Op> fast = make({});
  std::unique_ptr<Op> reference = make(std::string(REFERENCE));
  std::vector<Tensor> on_gpu, on_host;
  for (const Tensor& t : inputs) {
    on_gpu.push_back(t.defined() ? view(t.to(kGpu)) : t);
    on_host.push_back(t.defined() ? view(t.clone()) : t);
  }
  const OpOutputs got = fast->call(CallArgs(on_gpu));
  const OpOutputs want = reference->call(CallArgs(on_host));
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].defined()) CHECK(got[i].device() == kGpu);
    const testing::Comparison c = testing::compare(got[i], want[i]);
    CHECK_MESSAGE(c.ok, "output " << i << ": max abs " << c.max_abs << ", max rel " << c.max_rel);
  }
  for (std::size_t i = 0; i < on_gpu.size(); ++i) {
    CHECK_MESSAGE(testing::compare(on_gpu[i], on_host[i]).ok, "input " << i << " after the call");
  }
}

constexpr DType kFloats[] = {DType::float32, DType::float16, DType::bfloat16};

}  // namespace

TEST_CASE("GPU: every op matches the reference on every workload row and floating dtype") {
  if (cuda_or_skip() == nullptr) return;
  testing::check_workloads_against_reference(kGpu);
}

TEST_CASE("GPU: row ops serve one-element, odd-sized, register-sized and streamed rows, and odd views") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t n : {1, 7, 4096, 4097, 40000, 65539}) {
      const std::string id = std::string(dtype_name(dt)) + " n=" + std::to_string(n);
      const std::vector<Tensor> x{random({3, n}, dt)};
      const std::vector<Tensor> x_no_weight{random({3, n}, dt), Tensor()};
      const std::vector<Tensor> xw{random({3, n}, dt), random({n}, dt, 8)};
      const std::vector<Tensor> xwb{random({3, n}, dt), random({n}, dt, 8), random({n}, dt, 9)};
      const MakeOp rms = [n](Target t) {
        return std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{n}, 1e-5, t);
      };
      const MakeOp layer = [n](Target t) {
        return std::make_unique<LayerNormFwdOp>(std::vector<std::int64_t>{n}, 1e-5, t);
      };
      const MakeOp softmax = [](Target t) { return std::make_unique<SoftmaxFwdOp>(-1, t); };
      for (const auto& [name, view] :
           {std::pair<const char*, View>{"", same}, {" misaligned", misaligned}, {" strided", transposed_layout}}) {
        check_against_reference("rms_norm " + id + name, rms, x_no_weight, view);
        check_against_reference("rms_norm+weight " + id + name, rms, xw, view);
        check_against_reference("layer_norm+weight+bias " + id + name, layer, xwb, view);
        check_against_reference("softmax " + id + name, softmax, x, view);
      }
    }
  }
}

// Between one and two waves of one block a row, the row kernels run on the device's resident
// blocks, each looping over rows (kResidentGridWaves): at 1.3 and 1.8 times an H100's or H200's
// resident blocks (1056 of these kernels at 4096 columns) every row must be written as the
// reference computes it, also where a block takes two rows at a time (16-bit, 1024 columns).
TEST_CASE("GPU: row ops on a looping grid of resident blocks write every row") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t n : {1024, 4096}) {
      for (std::int64_t rows : {1373, 1901}) {
        const std::string id = std::string(dtype_name(dt)) + " [" + std::to_string(rows) + ", " + std::to_string(n) + "]";
        const MakeOp rms = [n](Target t) {
          return std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{n}, 1e-5, t);
        };
        const MakeOp layer = [n](Target t) {
          return std::make_unique<LayerNormFwdOp>(std::vector<std::int64_t>{n}, 1e-5, t);
        };
        const MakeOp softmax = [](Target t) { return std::make_unique<SoftmaxFwdOp>(-1, t); };
        check_against_reference("rms_norm+weight " + id, rms, {random({rows, n}, dt), random({n}, dt, 8)});
        check_against_reference("layer_norm+weight+bias " + id, layer,
                                {random({rows, n}, dt), random({n}, dt, 8), random({n}, dt, 9)});
        check_against_reference("softmax " + id, softmax, {random({rows, n}, dt)});
      }
    }
  }
}

TEST_CASE("GPU: the fused residual add and RMSNorm serves one-element, odd-sized and long rows, and misaligned views") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t n : {1, 7, 4096, 4097, 40000}) {
      const std::string id = std::string(dtype_name(dt)) + " n=" + std::to_string(n);
      const std::vector<Tensor> inputs{random({3, n}, dt), random({3, n}, dt, 8), random({n}, dt, 9)};
      const MakeOp fused = [n](Target t) {
        return std::make_unique<FusedAddRMSNormFwdOp>(std::vector<std::int64_t>{n}, 1e-5, t);
      };
      // The residual is declared contiguous: a strided view is refused before any kernel runs.
      check_against_reference("fused_add_rms_norm " + id, fused, inputs);
      check_against_reference("fused_add_rms_norm " + id + " misaligned", fused, inputs, misaligned);
    }
  }
}

TEST_CASE("GPU: gelu-and-mul serves both forms on widths no vector divides, and misaligned and strided views") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t n : {1, 7, 4096, 4097}) {
      for (const char* approximate : {"none", "tanh"}) {
        const std::string id = std::string(dtype_name(dt)) + " n=" + std::to_string(n) + " " + approximate;
        const MakeOp gelu_and_mul = [approximate](Target t) {
          return std::make_unique<GeluAndMulFwdOp>(approximate, t);
        };
        const std::vector<Tensor> x{random({5, 2 * n}, dt)};
        check_against_reference("gelu_and_mul " + id, gelu_and_mul, x);
        check_against_reference("gelu_and_mul " + id + " misaligned", gelu_and_mul, x, misaligned);
        check_against_reference("gelu_and_mul " + id + " strided", gelu_and_mul, x, transposed_layout);
      }
    }
  }
}

TEST_CASE("GPU: the embedding copies rows for int32 and int64 ids at every row width, and reports an id out of range at the next synchronisation, writing zeros for it") {
  DeviceRuntime* gpu = cuda_or_skip();
  if (gpu == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t hidden : {1, 3, 8, 4096}) {  // 2-byte, 4-byte and 16-byte moves
      for (DType index : {DType::int32, DType::int64}) {
        const Tensor ids = Tensor::from_doubles(std::vector<double>{3, 0, 9, 9, 4, 1}, {2, 3}, index);
        const MakeOp embedding = [](Target t) { return std::make_unique<EmbeddingFwdOp>(t); };
        check_against_reference("embedding " + std::string(dtype_name(dt)) + " hidden " + std::to_string(hidden) +
                                    " " + std::string(dtype_name(index)),
                                embedding, {ids, random({10, hidden}, dt)});
      }
    }
  }
  EmbeddingFwdOp embedding;
  const Tensor weight = Tensor::from_doubles(std::vector<double>(8 * 16, 1.0), {8, 16}, DType::float32).to(kGpu);
  const Tensor y = embedding(Tensor::from_doubles(std::vector<double>{1, 2, 99, 0}, {4}, DType::int64).to(kGpu), weight);
  CHECK_THROWS_WITH_AS(gpu->synchronize(0),
                       doctest::Contains("cuda:0: an earlier call's kernel cuda_embedding read ids[2] (flat) = 99, "
                                         "outside [0, 7]; it read nothing through it and wrote zeros to that call's "
                                         "output row 2"),
                       ValueError);
  const std::vector<double> out = y.to(Device::cpu()).to_doubles();
  CHECK(std::count(out.begin(), out.end(), 0.0) == 16);
  CHECK(std::count(out.begin(), out.end(), 1.0) == 3 * 16);
}

TEST_CASE("GPU: empty tensors give empty results without a launch") {
  if (cuda_or_skip() == nullptr) return;
  RMSNormFwdOp rms({64});
  CHECK(rms(Tensor::empty({0, 64}, DType::bfloat16, kGpu)).shape() == Shape{0, 64});
  SoftmaxFwdOp softmax(0);
  CHECK(softmax(Tensor::empty({0, 5}, DType::float32, kGpu)).shape() == Shape{0, 5});
  ReluFwdOp relu;
  CHECK(relu(Tensor::empty({0}, DType::float16, kGpu)).numel() == 0);
  // An empty reduced axis gives the identity.
  SumFwdOp sum(std::int64_t{0});
  CHECK(sum(Tensor::empty({0, 5}, DType::float32, kGpu)).to_doubles() == std::vector<double>(5, 0.0));
  ProdFwdOp prod(std::int64_t{0});
  CHECK(prod(Tensor::empty({0, 3}, DType::int64, kGpu)).to_doubles() == std::vector<double>(3, 1.0));
}

TEST_CASE("GPU: softmax along an inner axis") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    check_against_reference("softmax dim 1 of [4, 37, 5]",
                            [](Target t) { return std::make_unique<SoftmaxFwdOp>(1, t); }, {random({4, 37, 5}, dt)});
    check_against_reference("softmax dim 0 of [3000, 17]",
                            [](Target t) { return std::make_unique<SoftmaxFwdOp>(0, t); }, {random({3000, 17}, dt)});
  }
}

TEST_CASE("GPU: softmax over rows masked with -inf matches the reference, whole threads' shares masked, and a row of -inf only is NaN") {
  if (cuda_or_skip() == nullptr) return;
  const double inf = std::numeric_limits<double>::infinity();
  // Register-held rows and streamed ones (longer than a block's registers hold).
  for (std::int64_t n : {4096, 40000}) {
    std::vector<double> x = random({3, n}, DType::float32).to_doubles();
    for (std::int64_t j = 0; j < n; ++j) {
      if (j < n / 2) x[static_cast<std::size_t>(j)] = -inf;             // row 0: its first half masked
      if (j % 3 != 0) x[static_cast<std::size_t>(n + j)] = -inf;        // row 1: two in three masked
      x[static_cast<std::size_t>(2 * n + j)] = -inf;                     // row 2: masked entirely
    }
    for (DType dt : kFloats) {
      CAPTURE(n);
      CAPTURE(dtype_name(dt));
      const Tensor input = Tensor::from_doubles(x, {3, n}, dt);
      check_against_reference("masked softmax", [](Target t) { return std::make_unique<SoftmaxFwdOp>(-1, t); },
                              {input});
      const std::vector<double> y = SoftmaxFwdOp(-1)(input.to(kGpu)).to(Device::cpu()).to_doubles();
      CHECK(y[0] == 0.0);
      CHECK(std::isnan(y[static_cast<std::size_t>(2 * n)]));
      CHECK(std::isnan(y[static_cast<std::size_t>(3 * n - 1)]));
    }
  }
}

TEST_CASE("GPU: gelu matches the reference in both forms at sizes no vector width divides and misaligned") {
  if (cuda_or_skip() == nullptr) return;
  for (const char* approximate : {"none", "tanh"}) {
    const MakeOp make = [approximate](Target t) { return std::make_unique<GeluFwdOp>(approximate, t); };
    for (DType dt : kFloats) {
      for (std::int64_t n : {1, 7, 8, 9, 4097, 1 << 20}) {
        const std::string id = std::string(approximate) + " " + std::string(dtype_name(dt)) + " n=" + std::to_string(n);
        check_against_reference("gelu " + id, make, {random({n}, dt)});
        check_against_reference("gelu misaligned " + id, make, {random({n}, dt)}, misaligned);
      }
    }
  }
}

TEST_CASE("GPU: gelu keeps NaN and signed zeros and gives the limits at large and infinite inputs") {
  if (cuda_or_skip() == nullptr) return;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x{0.0, -0.0, 10.0, -10.0, 30.0, -30.0, inf, -inf, std::nan("")};
  for (const char* approximate : {"none", "tanh"}) {
    for (DType dt : kFloats) {
      CAPTURE(approximate);
      CAPTURE(dtype_name(dt));
      GeluFwdOp op(approximate);
      const std::vector<double> y =
          op(Tensor::from_doubles(x, {static_cast<std::int64_t>(x.size())}, dt).to(kGpu)).to(Device::cpu()).to_doubles();
      CHECK((y[0] == 0.0 && !std::signbit(y[0])));
      CHECK((y[1] == 0.0 && std::signbit(y[1])));
      CHECK(y[2] == doctest::Approx(10.0));
      CHECK(std::abs(y[3]) < 1e-6);
      CHECK(y[4] == doctest::Approx(30.0));
      CHECK((y[5] == 0.0 && std::signbit(y[5])));
      CHECK(y[6] == inf);
      CHECK((y[7] == 0.0 && std::signbit(y[7])));
      CHECK(std::isnan(y[8]));
    }
  }
}

TEST_CASE("GPU: gelu (erf) of every 16-bit input from -16 to 4 is within 0.6 of the result's spacing") {
  if (cuda_or_skip() == nullptr) return;
  // The rule: relative accuracy holds also where the result is tiny (the left tail, where
  // 1 + erf(x / sqrt 2) cancels), for both 16-bit formats. bfloat16 results below float's
  // smallest normal number are flushed to zero and left out.
  for (DType dt : {DType::float16, DType::bfloat16}) {
    CAPTURE(dtype_name(dt));
    const int mantissa = dt == DType::float16 ? 10 : 7;
    const int min_exponent = dt == DType::float16 ? -14 : -126;
    std::vector<double> x;
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
      const auto pattern = static_cast<std::uint16_t>(bits);
      const double v = dt == DType::bfloat16 ? BFloat16::to_float(pattern) : Half::to_float(pattern);
      if (v >= -16.0 && v <= 4.0) x.push_back(v);
    }
    const std::int64_t n = static_cast<std::int64_t>(x.size());
    GeluFwdOp op("none");
    const std::vector<double> y = op(Tensor::from_doubles(x, {n}, dt).to(kGpu)).to(Device::cpu()).to_doubles();
    double worst = 0.0, worst_at = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double exact = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
      if (dt == DType::bfloat16 && std::abs(exact) < std::ldexp(1.0, -126)) continue;
      const double spacing =
          std::ldexp(1.0, std::max(std::ilogb(std::max(std::abs(exact), 1e-300)), min_exponent) - mantissa);
      const double err = std::abs(y[i] - exact) / spacing;
      if (err > worst) {
        worst = err;
        worst_at = x[i];
      }
    }
    CAPTURE(worst_at);
    CHECK(worst < 0.6);
  }
}

TEST_CASE("GPU: silu_and_mul, relu and alibi at sizes no vector width divides") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t n : {1, 13, 4096}) {
      const std::string id = std::string(dtype_name(dt)) + " n=" + std::to_string(n);
      check_against_reference("silu_and_mul " + id, [](Target t) { return std::make_unique<SiluAndMulFwdOp>(t); },
                              {random({5, 2 * n}, dt)});
      check_against_reference(
          "silu_and_mul misaligned " + id, [](Target t) { return std::make_unique<SiluAndMulFwdOp>(t); },
          {random({5, 2 * n}, dt)}, misaligned);
      check_against_reference(
          "relu " + id, [](Target t) { return std::make_unique<ReluFwdOp>(false, t); }, {random({3, n}, dt)},
          misaligned);
    }
    for (std::int64_t seq : {1, 7, 64}) {
      check_against_reference(
          "alibi seq " + std::to_string(seq) + " " + std::string(dtype_name(dt)),
          [seq, dt](Target t) { return std::make_unique<AlibiFwdOp>(seq, 5, dt, t ? Device::cpu() : kGpu, t); }, {});
    }
  }
}

TEST_CASE("GPU: relu in place writes the input, also through a strided view") {
  if (cuda_or_skip() == nullptr) return;
  const MakeOp relu = [](Target t) { return std::make_unique<ReluFwdOp>(true, t); };
  check_against_reference("contiguous", relu, {random({7, 33}, DType::bfloat16)});
  check_against_reference("strided", relu, {random({7, 33}, DType::float32)}, transposed_layout);
  ReluFwdOp op(true);
  const Tensor x = random({4, 4}, DType::float32).to(kGpu);
  CHECK(op(x).is_same(x));
}

TEST_CASE("GPU: add serves same shapes, a repeated row, general broadcasts, integers and out buffers") {
  if (cuda_or_skip() == nullptr) return;
  const MakeOp add = [](Target t) { return std::make_unique<AddFwdOp>(std::int64_t{1}, t); };
  const MakeOp add_scaled = [](Target t) { return std::make_unique<AddFwdOp>(0.5, t); };
  for (DType dt : kFloats) {
    check_against_reference("same shape", add, {random({37, 4544}, dt), random({37, 4544}, dt, 8)});
    check_against_reference("same shape, odd size, misaligned", add_scaled,
                            {random({3, 1001}, dt), random({3, 1001}, dt, 8)}, misaligned);
    check_against_reference("row", add_scaled, {random({37, 4544}, dt), random({4544}, dt, 8)});
    check_against_reference("general", add, {random({4, 1, 8}, dt), random({3, 1}, dt, 8)});
    check_against_reference("scalar", add, {random({2, 5}, dt), random({}, dt, 8)});
    check_against_reference("strided operands", add, {random({6, 9}, dt), random({6, 9}, dt, 8)}, transposed_layout);
  }
  for (DType dt : {DType::int32, DType::int64}) {
    check_against_reference("integers", [](Target t) { return std::make_unique<AddFwdOp>(std::int64_t{3}, t); },
                            {random({1, 2048}, dt), random({}, dt, 8)});
  }
  AddFwdOp op;
  const Tensor a = random({16, 8}, DType::float32), b = random({16, 8}, DType::float32, 8);
  const std::vector<double> want = AddFwdOp(std::int64_t{1}, std::string(REFERENCE))(a, b).to_doubles();
  const Tensor out = Tensor::empty({16, 8}, DType::float32, kGpu);
  CHECK(op(a.to(kGpu), b.to(kGpu), out).is_same(out));
  CHECK(testing::compare(out, Tensor::from_doubles(want, {16, 8}, DType::float32)).ok);
  const Tensor strided_out = Tensor::empty({8, 16}, DType::float32, kGpu).transpose(0, 1);
  op(a.to(kGpu), b.to(kGpu), strided_out);
  CHECK(testing::compare(strided_out, Tensor::from_doubles(want, {16, 8}, DType::float32)).ok);
  const Tensor in_place = a.to(kGpu);
  op(in_place, b.to(kGpu), in_place);
  CHECK(testing::compare(in_place, Tensor::from_doubles(want, {16, 8}, DType::float32)).ok);
}

TEST_CASE("GPU: sum and prod over rows, columns, split axes, non-adjacent axes and across dtypes") {
  if (cuda_or_skip() == nullptr) return;
  using Dims = ReduceDims;
  const auto sum = [](Dims d, bool keep = false, std::optional<DType> dt = std::nullopt) {
    return MakeOp([=](Target t) { return std::make_unique<SumFwdOp>(d, keep, dt, t); });
  };
  const auto prod = [](Dims d, std::optional<DType> dt = std::nullopt) {
    return MakeOp([=](Target t) { return std::make_unique<ProdFwdOp>(d, false, dt, t); });
  };
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16, DType::float64, DType::int32, DType::int64}) {
    const std::string id = std::string(dtype_name(dt));
    check_against_reference("sum of one long row " + id, sum(std::int64_t{-1}), {random({1, 1 << 20}, dt)});
    check_against_reference("sum of rows " + id, sum(std::int64_t{-1}, true), {random({300, 77}, dt)});
    check_against_reference("sum of columns " + id, sum(std::int64_t{0}), {random({4097, 3}, dt)});
    check_against_reference("sum of wide columns " + id, sum(std::int64_t{0}), {random({513, 4096}, dt)});
    check_against_reference("sum over axes 0 and 2 " + id, sum(std::vector<std::int64_t>{0, 2}),
                            {random({3, 4, 5}, dt)});
    check_against_reference("sum of all " + id, sum(std::nullopt), {random({33, 65}, dt)}, misaligned);
    check_against_reference("prod of rows " + id, prod(std::int64_t{1}), {random({64, 4}, dt)});
  }
  check_against_reference("bfloat16 summed into float32", sum(std::int64_t{-1}, false, DType::float32),
                          {random({16, 4096}, DType::bfloat16)});
  check_against_reference("int64 summed into float64", sum(std::int64_t{0}, false, DType::float64),
                          {random({100, 7}, DType::int64)});
  check_against_reference("float32 into int32 products", prod(std::int64_t{0}, DType::int32),
                          {random({5, 9}, DType::float32)});
}

TEST_CASE("GPU: mean over rows, columns, split axes and every axis, into wider dtypes, and NaN over an empty axis") {
  if (cuda_or_skip() == nullptr) return;
  const auto mean = [](ReduceDims d, bool keep = false, std::optional<DType> dt = std::nullopt) {
    return MakeOp([=](Target t) { return std::make_unique<MeanFwdOp>(d, keep, dt, t); });
  };
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16, DType::float64}) {
    const std::string id = std::string(dtype_name(dt));
    check_against_reference("mean of one long row " + id, mean(std::int64_t{-1}), {random({1, 1 << 20}, dt)});
    check_against_reference("mean of rows " + id, mean(std::int64_t{-1}, true), {random({300, 77}, dt)});
    check_against_reference("mean of columns " + id, mean(std::int64_t{0}), {random({4097, 3}, dt)});
    check_against_reference("mean of all " + id, mean(std::nullopt), {random({33, 65}, dt)}, misaligned);
  }
  check_against_reference("bfloat16 averaged into float32", mean(std::int64_t{-1}, false, DType::float32),
                          {random({16, 4096}, DType::bfloat16)});
  MeanFwdOp empty_axis(std::int64_t{0});
  for (double v : empty_axis(Tensor::empty({0, 5}, DType::float32, kGpu)).to_doubles()) CHECK(std::isnan(v));
}

TEST_CASE("GPU: max and average pooling match the reference over strides, padding, dilation, ceil_mode and the divisors, and a NaN in a max window gives NaN") {
  if (cuda_or_skip() == nullptr) return;
  using Sizes = std::vector<std::int64_t>;
  for (DType dt : kFloats) {
    const std::string id(dtype_name(dt));
    const std::vector<Tensor> stem{random({2, 8, 29, 31}, dt)};
    check_against_reference("max 3x3 s2 p1 " + id, [](Target t) {
      return std::make_unique<MaxPool2dFwdOp>(std::int64_t{3}, std::int64_t{2}, std::int64_t{1}, std::int64_t{1}, false, t);
    }, stem);
    check_against_reference("max dilated ceil " + id, [](Target t) {
      return std::make_unique<MaxPool2dFwdOp>(Sizes{3, 2}, Sizes{2, 3}, Sizes{1, 0}, Sizes{2, 1}, true, t);
    }, stem, misaligned);
    for (bool include_pad : {true, false}) {
      check_against_reference("avg ceil " + id, [include_pad](Target t) {
        return std::make_unique<AvgPool2dFwdOp>(Sizes{3, 2}, std::int64_t{2}, Sizes{1, 1}, true, include_pad, std::nullopt, t);
      }, stem);
    }
    check_against_reference("avg divisor " + id, [](Target t) {
      return std::make_unique<AvgPool2dFwdOp>(std::int64_t{3}, std::int64_t{1}, std::int64_t{1}, false, true, std::int64_t{7}, t);
    }, stem, misaligned);
    check_against_reference("avg global " + id, [](Target t) {
      return std::make_unique<AvgPool2dFwdOp>(std::int64_t{7}, std::nullopt, std::int64_t{0}, false, true, std::nullopt, t);
    }, {random({4, 300, 7, 7}, dt)});
  }
  std::vector<double> values(16, 1.0);
  values[5] = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::from_doubles(values, {1, 1, 4, 4}, DType::float32).to(kGpu);
  const std::vector<double> y = MaxPool2dFwdOp(std::int64_t{2})(x).to_doubles();
  REQUIRE(y.size() == 4);
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 1.0);
  CHECK(y[2] == 1.0);
  CHECK(y[3] == 1.0);
}

TEST_CASE("GPU: RoPE in both forms and layouts, and LongRoPE with its factors copied to the device, at odd shapes and positions") {
  if (cuda_or_skip() == nullptr) return;
  const Tensor short_factor = random({3}, DType::float32, 11);
  const Tensor long_factor = random({3}, DType::float32, 12);
  for (const char* layout : {"BSHD", "BHSD"}) {
    for (const DType dt : kFloats) {
      const std::string id = std::string(layout) + " " + std::string(dtype_name(dt));
      const Tensor x = random({3, 5, 7, 6}, dt);
      const Tensor positions = random({layout == std::string("BSHD") ? 5 : 7}, DType::int64, 5);
      check_against_reference("neox " + id, [=](Target t) { return std::make_unique<RopeFwdOp>(500000.0, layout, t); },
                              {x, positions}, misaligned);
      check_against_reference("interleaved " + id,
                              [=](Target t) { return std::make_unique<RopeInterleavedFwdOp>(10000.0, layout, t); },
                              {x, Tensor()});
      for (const std::int64_t original : {2, 64}) {
        check_against_reference("long rope " + id + " original " + std::to_string(original),
                                [=](Target t) {
                                  return std::make_unique<LongRoPEFwdOp>(10000.0, layout, 4 * original, original,
                                                                         short_factor, long_factor, t);
                                },
                                {x, Tensor()});
      }
    }
  }
}

// Channels-last shapes whose channels fill 16-byte packs train in one cooperative launch: one
// partial tile of channels ([300, 64, 1]), tiles with a partial last one ([1000, 264]), fewer rows
// than row lanes ([3, 264]), many rows a lane ([140000, 8]), and lanes that keep their first rows
// on chip and stream the others, over tiles whose row count the lanes do not divide
// ([20000, 264]). Lanes with more rows than one run of float sums (256) fold runs into their
// double sums: [1200000, 8] in one launch and [140000, 37] in three give each lane 273 rows or
// more on a device of up to 132 multiprocessors. No channels at all ([4, 0], [2, 0, 5]) launch
// nothing.
TEST_CASE("GPU: batch norm trains and infers over channels-last and spatial layouts") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (const std::vector<std::int64_t>& shape :
         {std::vector<std::int64_t>{513, 37}, {4, 37, 7, 7}, {2, 3, 1000}, {300, 64, 1}, {140000, 8}, {1000, 264},
          {20000, 264}, {3, 264}, {1200000, 8}, {140000, 37}, {4, 0}, {2, 0, 5}}) {
      const std::int64_t c = shape[1];
      const Tensor running_var =
          Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(c), 0.75), {c}, DType::float32);
      const std::vector<Tensor> inputs{random(shape, dt), random({c}, DType::float32, 2), running_var,
                                       random({c}, DType::float32, 4), random({c}, DType::float32, 5)};
      for (bool training : {true, false}) {
        check_against_reference(
            std::string(training ? "train " : "infer ") + std::string(dtype_name(dt)) + " " + shape_str(shape),
            [training](Target t) { return std::make_unique<BatchNormFwdOp>(training, 0.1, 1e-5, t); }, inputs);
      }
    }
  }
}

// Inference derives each channel's map in float on the device: over running variances from 1e-4
// to 1e4 it matches the reference's double map, and a channel whose running variance is infinite
// outputs its bias (1 / sqrt(inf) = 0), not NaN.
TEST_CASE("GPU: batch-norm inference matches the reference for running variances from 1e-4 to 1e4, and an infinite one gives the bias") {
  if (cuda_or_skip() == nullptr) return;
  const std::int64_t c = 40;
  std::vector<double> variances(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < variances.size(); ++i) {
    variances[i] = std::pow(10.0, static_cast<double>(i % 9) - 4.0) * (1.0 + 0.01 * static_cast<double>(i));
  }
  variances[5] = std::numeric_limits<double>::infinity();
  const Tensor running_var = Tensor::from_doubles(variances, {c}, DType::float32);
  for (DType dt : kFloats) {
    for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{517, c}, {3, c, 9, 5}}) {
      const std::vector<Tensor> inputs{random(shape, dt), random({c}, DType::float32, 2), running_var,
                                       random({c}, DType::float32, 4), random({c}, DType::float32, 5)};
      check_against_reference("infer " + std::string(dtype_name(dt)) + " " + shape_str(shape),
                              [](Target t) { return std::make_unique<BatchNormFwdOp>(false, 0.1, 1e-5, t); }, inputs);
    }
  }
  const Tensor x = Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(2 * c), 3.0), {2, c},
                                        DType::float32);
  const Tensor bias = random({c}, DType::float32, 5);
  BatchNormFwdOp infer(false, 0.1, 1e-5);
  const Tensor y = infer(x.to(kGpu), Tensor::zeros({c}, DType::float32, kGpu), running_var.to(kGpu),
                         random({c}, DType::float32, 4).to(kGpu), bias.to(kGpu))
                       .y.to(Device::cpu());
  CHECK(y.get(5) == bias.get(5));
  CHECK(y.get(c + 5) == bias.get(5));
}

// The cooperative launch is recorded like any other: the replay computes the statistics of what
// x holds then and moves the running statistics on from where the recorded call left them.
TEST_CASE("GPU: batch-norm training in one cooperative launch replays from a device graph") {
  if (cuda_or_skip() == nullptr) return;
  const std::int64_t c = 256;
  BatchNormFwdOp fast(true, 0.1, 1e-5);
  BatchNormFwdOp reference(true, 0.1, 1e-5, std::string(REFERENCE));
  const Tensor x = random({4096, c}, DType::float16, 3).to(kGpu);
  const Tensor weight = random({c}, DType::float32, 4).to(kGpu), bias = random({c}, DType::float32, 5).to(kGpu);
  const Tensor mean = Tensor::zeros({c}, DType::float32, kGpu);
  const Tensor var = Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(c), 1.0), {c}, DType::float32)
                         .to(kGpu);
  fast(x, mean, var, weight, bias);
  DeviceGraph recorded = DeviceGraph::capture(kGpu, [&] {
    const auto r = fast(x, mean, var, weight, bias);
    return std::vector<Tensor>{r.y, r.mean, r.rstd};
  });
  const Tensor next = random({4096, c}, DType::float16, 9);
  x.copy_from(next.to(kGpu));
  // The running statistics as the replay finds them; the reference moves these on as it does.
  const Tensor host_mean = mean.to(Device::cpu()), host_var = var.to(Device::cpu());
  recorded.replay();
  const auto want = reference(next, host_mean, host_var, weight.to(Device::cpu()), bias.to(Device::cpu()));
  CHECK(testing::compare(recorded.outputs()[0], want.y).ok);
  CHECK(testing::compare(recorded.outputs()[1], want.mean).ok);
  CHECK(testing::compare(recorded.outputs()[2], want.rstd).ok);
  CHECK(testing::compare(mean, host_mean).ok);
  CHECK(testing::compare(var, host_var).ok);
}

TEST_CASE("GPU: a tensor on another device than the call's is refused by name") {
  if (cuda_or_skip() == nullptr) return;
  AddFwdOp add;
  const Tensor a = random({4}, DType::float32).to(kGpu);
  const Tensor b = random({4}, DType::float32);
  CHECK_THROWS_WITH_AS(add(a, b), doctest::Contains("input 'b' is on cpu, but the call device is cuda:0"), TypeError);
  RMSNormFwdOp rms({4});
  CHECK_THROWS_WITH_AS(rms(a, b), doctest::Contains("is on cpu, but the call device is cuda:0"), TypeError);
}
