#include <doctest/doctest.h>

#include <numeric>

#include "tileops/errors.hpp"
#include "tileops/tensor.hpp"

using namespace tileops;

namespace {

Tensor iota(std::initializer_list<std::int64_t> shape, DType dtype = DType::float32) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(std::span(shape.begin(), shape.size()))));
  std::iota(v.begin(), v.end(), 0.0);
  return Tensor::from_doubles(v, std::span(shape.begin(), shape.size()), dtype);
}

}  // namespace

TEST_CASE("a new tensor is contiguous with row-major strides") {
  const Tensor t = Tensor::empty({2, 3, 4}, DType::float16);
  CHECK(t.defined());
  CHECK(t.dim() == 3);
  CHECK(t.numel() == 24);
  CHECK(t.nbytes() == 48);
  CHECK(t.strides() == Strides{12, 4, 1});
  CHECK(t.is_contiguous());
  CHECK(t.device() == Device::cpu());
  CHECK(t.data_ptr() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 64 == 0);
}

TEST_CASE("a default tensor is undefined and refuses access") {
  const Tensor t;
  CHECK_FALSE(t.defined());
  CHECK_THROWS_WITH_AS(t.shape(), doctest::Contains("undefined tensor"), RuntimeError);
}

TEST_CASE("negative extents are rejected") {
  CHECK_THROWS_WITH_AS(Tensor::empty({2, -1}, DType::float32), doctest::Contains("negative extent"), ValueError);
}

TEST_CASE("element access converts through double for every dtype") {
  for (DType d : all_dtypes()) {
    const Tensor t = Tensor::zeros(std::vector<std::int64_t>{3}, d);
    t.set(1, 1.0);
    CHECK(t.get(0) == 0.0);
    CHECK(t.get(1) == 1.0);
  }
  const Tensor h = Tensor::from_doubles(std::vector<double>{0.1}, std::vector<std::int64_t>{1}, DType::float16);
  CHECK(h.get(0) == doctest::Approx(0.1).epsilon(1e-3));
  CHECK_THROWS_WITH_AS(h.get(1), doctest::Contains("outside [0, 1)"), ValueError);
}

TEST_CASE("transpose and slice are views that share storage") {
  const Tensor t = iota({2, 3});
  const Tensor tt = t.transpose(0, 1);
  CHECK(tt.shape() == Shape{3, 2});
  CHECK_FALSE(tt.is_contiguous());
  CHECK(tt.shares_storage_with(t));
  CHECK(tt.get(1) == 3.0);  // tt[0][1] = t[1][0]
  const Tensor s = t.slice(1, 1, 3);
  CHECK(s.shape() == Shape{2, 2});
  CHECK(s.to_doubles() == std::vector<double>{1, 2, 4, 5});
  const Tensor stepped = t.slice(1, 0, 3, 2);
  CHECK(stepped.to_doubles() == std::vector<double>{0, 2, 3, 5});
  s.set(0, 42);
  CHECK(t.get(1) == 42.0);
}

TEST_CASE("contiguous() copies a strided view and keeps a contiguous tensor as is") {
  const Tensor t = iota({2, 3});
  CHECK(t.contiguous().is_same(t));
  const Tensor c = t.transpose(0, 1).contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.shares_storage_with(t));
  CHECK(c.to_doubles() == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("to(dtype) converts and clone() copies") {
  const Tensor t = iota({4}, DType::float32);
  const Tensor b = t.to(DType::bfloat16);
  CHECK(b.dtype() == DType::bfloat16);
  CHECK(b.to_doubles() == std::vector<double>{0, 1, 2, 3});
  const Tensor c = t.clone();
  CHECK_FALSE(c.shares_storage_with(t));
  CHECK(c.to_doubles() == t.to_doubles());
}

TEST_CASE("view requires a contiguous tensor and the same element count") {
  const Tensor t = iota({2, 3});
  CHECK(t.view({3, 2}).shape() == Shape{3, 2});
  CHECK_THROWS_WITH_AS(t.view({4, 2}), doctest::Contains("does not hold the 6 elements"), ValueError);
  CHECK_THROWS_WITH_AS(t.transpose(0, 1).view({6}), doctest::Contains("needs a contiguous tensor"), ValueError);
}

TEST_CASE("meta tensors carry shape and dtype but no data") {
  const Tensor m = Tensor::empty({5, 7}, DType::bfloat16, Device::meta());
  CHECK(m.shape() == Shape{5, 7});
  CHECK(m.data_ptr() == nullptr);
  CHECK_THROWS_WITH_AS(m.get(0), doctest::Contains("meta tensors carry no data"), RuntimeError);
  CHECK(m.to(Device::meta()).is_same(m));
  const Tensor moved = iota({2}).to(Device::meta());
  CHECK(moved.device().is_meta());
}

TEST_CASE("copy_from honours strides and converts dtypes") {
  const Tensor src = iota({2, 3}).transpose(0, 1);
  const Tensor dst = Tensor::zeros(std::vector<std::int64_t>{3, 2}, DType::float64);
  dst.copy_from(src);
  CHECK(dst.to_doubles() == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK_THROWS_WITH_AS(dst.copy_from(iota({2, 3})), doctest::Contains("differ in shape"), ValueError);
}

TEST_CASE("rank-0 and empty tensors") {
  const Tensor scalar = Tensor::from_doubles(std::vector<double>{7}, std::vector<std::int64_t>{}, DType::int64);
  CHECK(scalar.dim() == 0);
  CHECK(scalar.numel() == 1);
  CHECK(scalar.get(0) == 7.0);
  const Tensor empty = Tensor::empty({0, 4}, DType::float32);
  CHECK(empty.numel() == 0);
  CHECK(empty.is_contiguous());
  CHECK_FALSE(empty.shares_storage_with(empty));
}
