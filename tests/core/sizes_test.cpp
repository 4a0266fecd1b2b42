// Checked sizes: element counts, strides, byte counts and views that do not fit fail with a
// ValueError naming the tensor and the limit; allocations the host cannot give fail with an
// OutOfMemoryError naming the device and the bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <new>

#include "runtime/host_block_cache.hpp"
#include "tileops/checked.hpp"
#include "tileops/errors.hpp"
#include "tileops/shape.hpp"
#include "tileops/tensor.hpp"

using namespace tileops;

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
}  // namespace

TEST_CASE("checked_mul and checked_add return exact results and reject what does not fit") {
  CHECK(checked_mul(3037000499, 3037000499, "x") == 9223372030926249001);
  CHECK(checked_add(kMax - 1, 1, "x") == kMax);
  CHECK_THROWS_WITH_AS(checked_mul(kMax / 2 + 1, 2, "GemmFwdOp: flops"),
                       doctest::Contains("GemmFwdOp: flops: 4611686018427387904 * 2 does not fit"), ValueError);
  CHECK_THROWS_WITH_AS(checked_add(kMax, 1, "offset"), doctest::Contains("limit 9223372036854775807"), ValueError);
}

TEST_CASE("shape_numel rejects a product beyond INT64_MAX, naming the tensor and the limit") {
  // The seen input: 4611686018427387905 * 4 wraps around to 4 in unchecked arithmetic.
  const Shape seen{4611686018427387905, 4};
  CHECK_THROWS_WITH_AS(shape_numel(seen, "input 'x'"),
                       doctest::Contains("input 'x' has shape [4611686018427387905, 4]: the product of its extents "
                                         "exceeds 9223372036854775807"),
                       ValueError);
  CHECK(shape_numel(Shape{kMax}) == kMax);
  CHECK(shape_numel(Shape{}) == 1);
  CHECK_THROWS_WITH_AS(shape_numel(Shape{3, -1}), doctest::Contains("negative extent"), ValueError);
}

TEST_CASE("a zero extent does not hide an overflowing product of the other extents") {
  // numel is 0, but the contiguous strides (and any row count over two of the axes) overflow.
  const Shape shape{0, std::int64_t{1} << 40, std::int64_t{1} << 40};
  CHECK_THROWS_WITH_AS(shape_numel(shape), doctest::Contains("the product of its non-zero extents exceeds"), ValueError);
  CHECK_THROWS_AS(contiguous_strides(shape), ValueError);
  CHECK(shape_numel(Shape{0, std::int64_t{1} << 40}) == 0);
}

TEST_CASE("shape_nbytes rejects element counts that fit but byte counts that do not") {
  CHECK(shape_nbytes(Shape{kMax / 4}, 4) == kMax / 4 * 4);
  CHECK_THROWS_WITH_AS(shape_nbytes(Shape{kMax / 2 + 1}, 2, "output 'y'"),
                       doctest::Contains("output 'y' has shape [4611686018427387904]: at 2 bytes per element"),
                       ValueError);
  CHECK_FALSE(shape_fits(Shape{kMax / 2 + 1}, 2));
  CHECK(shape_fits(Shape{kMax / 2}, 2));
}

TEST_CASE("Tensor::empty on an overflowing shape is a ValueError, never a small buffer") {
  CHECK_THROWS_WITH_AS(Tensor::empty({4611686018427387905, 4}, DType::float32),
                       doctest::Contains("Tensor::empty: the new tensor has shape [4611686018427387905, 4]"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Tensor::empty({kMax}, DType::float32), doctest::Contains("bytes, the most a tensor may span"),
                       ValueError);
  CHECK_THROWS_AS(Tensor::empty({4611686018427387905, 4}, DType::float32, Device::meta()), ValueError);
  CHECK_THROWS_WITH_AS(Tensor::empty({-1}, DType::float32), doctest::Contains("negative extent"), ValueError);
}

TEST_CASE("an allocation the host cannot give is an OutOfMemoryError naming the device and the bytes") {
  // 4 TB: more than any test machine has, so the allocator refuses it.
  CHECK_THROWS_WITH_AS(Tensor::empty({1000000000000}, DType::float32),
                       doctest::Contains("cpu cannot allocate 4000000000000 bytes"), OutOfMemoryError);
  CHECK_THROWS_AS(Tensor::empty({1000000000000}, DType::float32), RuntimeError);
  CHECK(Tensor::empty({4}, DType::float32).nbytes() == 16);  // and the allocator still works
}

TEST_CASE("the host block cache refuses sizes its rounding would wrap instead of returning a small block") {
  HostBlockCache cache(std::size_t{1} << 20);
  CHECK_THROWS_AS(cache.allocate(std::numeric_limits<std::size_t>::max() - 10, 64), std::bad_alloc);
  CHECK_THROWS_AS(cache.allocate(HostBlockCache::kMaxBytes + 1, 64), std::bad_alloc);
}

TEST_CASE("as_strided and from_storage reject views that reach outside their storage or past the limit") {
  const Tensor t = Tensor::zeros({4, 4}, DType::float32);
  CHECK(t.as_strided({2, 2}, {4, 1}, 10).get(3) == 0.0);  // the last element, 15, is inside
  CHECK_THROWS_WITH_AS(t.as_strided({2, 2}, {4, 1}, 11), doctest::Contains("beyond the 64 bytes of its storage"),
                       ValueError);
  CHECK_THROWS_WITH_AS(t.as_strided({2}, {-1}, 3), doctest::Contains("negative stride"), ValueError);
  CHECK_THROWS_WITH_AS(t.as_strided({2}, {1}, -1), doctest::Contains("offset -1"), ValueError);
  CHECK_THROWS_WITH_AS(t.as_strided({2, 2}, {kMax, 1}, 0), doctest::Contains("the most a tensor may span"),
                       ValueError);
  CHECK(t.as_strided({0, 3}, {kMax, 1}, 0).numel() == 0);  // addresses nothing
  CHECK_THROWS_AS(Tensor::from_storage(t.storage(), {17}, {1}, 0, DType::float32), ValueError);
  CHECK_THROWS_WITH_AS(Tensor::from_storage(nullptr, {1}, {1}, 0, DType::float32), doctest::Contains("null"),
                       ValueError);
  const Tensor meta = Tensor::empty({4}, DType::float32, Device::meta());
  CHECK(meta.as_strided({8}, {1}, 100).numel() == 8);  // meta tensors have no storage to reach past
  CHECK_THROWS_AS(meta.as_strided({4611686018427387905, 4}, {4, 1}, 0), ValueError);
}

TEST_CASE("slice with a huge step keeps one element and never wraps the extent") {
  const Tensor t = Tensor::zeros({10}, DType::float32);
  const Tensor s = t.slice(0, 1, 10, kMax);
  CHECK(s.shape() == Shape{1});
  CHECK(s.strides() == Strides{1});
  CHECK(t.slice(0, 3, 10, 3).shape() == Shape{3});
  CHECK(t.slice(0, 5, 5).numel() == 0);
}

TEST_CASE("view checks the new shape's product") {
  const Tensor t = Tensor::zeros({4}, DType::float32);
  CHECK_THROWS_WITH_AS(t.view({4611686018427387905, 4}), doctest::Contains("Tensor::view: the view has shape"),
                       ValueError);
}
