#include <doctest/doctest.h>

#include <dlpack/dlpack.h>

#include <numeric>

#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"

using namespace tileops;

namespace {

// A producer-owned buffer, as another framework would export it.
struct Producer {
  std::vector<float> data;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
  int* deletions;
};

DLManagedTensor* make_producer(int* deletions, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
  auto* p = new Producer;
  p->data.resize(12);
  std::iota(p->data.begin(), p->data.end(), 0.0f);
  p->shape = std::move(shape);
  p->strides = std::move(strides);
  p->deletions = deletions;
  DLTensor& t = p->managed.dl_tensor;
  t.data = p->data.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int>(p->shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = p->shape.data();
  t.strides = p->strides.empty() ? nullptr : p->strides.data();
  t.byte_offset = 0;
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<Producer*>(self->manager_ctx);
    ++*owner->deletions;
    delete owner;
  };
  return &p->managed;
}

}  // namespace

TEST_CASE("from_dlpack views the producer's memory and calls its deleter once, after the last view") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  const void* producer_data = managed->dl_tensor.data;
  {
    Tensor t = from_dlpack(managed);
    CHECK(t.data_ptr() == producer_data);
    CHECK(t.shape() == Shape{3, 4});
    CHECK(t.get(5) == 5.0);
    Tensor view = t.transpose(0, 1);
    t = Tensor();
    CHECK(deletions == 0);
    CHECK(view.get(1) == 4.0);
  }
  CHECK(deletions == 1);
}

TEST_CASE("from_dlpack honours strides (a transposed producer)") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {4, 3}, {1, 4});
  {
    const Tensor t = from_dlpack(managed);
    CHECK_FALSE(t.is_contiguous());
    CHECK(t.to_doubles()[1] == 4.0);
  }
  CHECK(deletions == 1);
}

TEST_CASE("from_dlpack rejects what it cannot represent and leaves ownership with the caller") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  managed->dl_tensor.dtype = {kDLComplex, 64, 1};
  CHECK_THROWS_WITH_AS(from_dlpack(managed), doctest::Contains("unsupported DLPack dtype"), TypeError);
  managed->dl_tensor.dtype = {kDLFloat, 32, 4};
  CHECK_THROWS_WITH_AS(from_dlpack(managed), doctest::Contains("lanes = 4"), TypeError);
  managed->dl_tensor.dtype = {kDLFloat, 32, 1};
  managed->dl_tensor.device = {kDLOpenCL, 0};
  CHECK_THROWS_WITH_AS(from_dlpack(managed), doctest::Contains("unsupported DLPack device type 4"), TypeError);
  CHECK(deletions == 0);
  managed->deleter(managed);
  CHECK(deletions == 1);
  CHECK_THROWS_AS(from_dlpack(nullptr), ValueError);
}

TEST_CASE("to_dlpack exports without a copy and keeps the storage alive until the deleter runs") {
  Tensor t = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3},
                                  DType::bfloat16);
  const Tensor view = t.slice(1, 1, 3);
  DLManagedTensor* managed = to_dlpack(view);
  CHECK(managed->dl_tensor.ndim == 2);
  CHECK(managed->dl_tensor.dtype.code == kDLBfloat);
  CHECK(managed->dl_tensor.shape[1] == 2);
  CHECK(managed->dl_tensor.strides[0] == 3);
  CHECK(managed->dl_tensor.byte_offset == 2);
  const auto* data = static_cast<const std::byte*>(managed->dl_tensor.data) + managed->dl_tensor.byte_offset;
  CHECK(data == view.data_ptr());
  std::weak_ptr<Storage> storage = t.storage();
  t = Tensor();
  {
    const Tensor dropped = view;  // the last handles go out of scope here
  }
  CHECK_FALSE(storage.expired());
  managed->deleter(managed);
}

TEST_CASE("a round trip through DLPack gives a tensor on the same memory") {
  const Tensor t = Tensor::from_doubles(std::vector<double>{1, 0, 1}, std::vector<std::int64_t>{3}, DType::bool_);
  const Tensor back = from_dlpack(to_dlpack(t));
  CHECK(back.dtype() == DType::bool_);
  CHECK(back.data_ptr() == t.data_ptr());
  CHECK(back.to_doubles() == std::vector<double>{1, 0, 1});
  for (DType d : all_dtypes()) {
    const Tensor x = Tensor::zeros(std::vector<std::int64_t>{2}, d);
    CHECK(from_dlpack(to_dlpack(x)).dtype() == d);
  }
}

TEST_CASE("meta tensors cannot be exported") {
  CHECK_THROWS_WITH_AS(to_dlpack(Tensor::empty({2}, DType::float32, Device::meta())),
                       doctest::Contains("meta tensors carry no data"), TypeError);
}

TEST_CASE("from_dlpack checks a view's extents and strides before it takes ownership") {
  // (extent - 1) * stride overflows: the view is refused and the producer keeps its tensor.
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 1}, {std::int64_t{1} << 62, 1});
  CHECK_THROWS_WITH_AS(from_dlpack(managed), doctest::Contains("from_dlpack: shape [3, 1] with strides"), ValueError);
  CHECK(deletions == 0);
  managed->deleter(managed);
  CHECK(deletions == 1);
}
