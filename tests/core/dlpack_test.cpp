#include <doctest/doctest.h>

#include <dlpack/dlpack.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"

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
  CHECK_THROWS_AS(from_dlpack(static_cast<DLManagedTensor*>(nullptr)), ValueError);
  CHECK_THROWS_AS(from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr)), ValueError);
}

TEST_CASE("to_dlpack exports without a copy, data at the view's first element and byte_offset 0, and keeps the storage alive until the deleter runs") {
  Tensor t = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3},
                                  DType::bfloat16);
  const Tensor view = t.slice(1, 1, 3);
  DLManagedTensor* managed = to_dlpack(view);
  CHECK(managed->dl_tensor.ndim == 2);
  CHECK(managed->dl_tensor.dtype.code == kDLBfloat);
  CHECK(managed->dl_tensor.shape[1] == 2);
  CHECK(managed->dl_tensor.strides[0] == 3);
  CHECK(managed->dl_tensor.byte_offset == 0);
  CHECK(managed->dl_tensor.data == view.data_ptr());
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
  const Tensor back = from_dlpack(to_dlpack_versioned(t));
  CHECK(back.dtype() == DType::bool_);
  CHECK(back.data_ptr() == t.data_ptr());
  CHECK(back.to_doubles() == std::vector<double>{1, 0, 1});
  for (DType d : all_dtypes()) {
    const Tensor x = Tensor::zeros(std::vector<std::int64_t>{2}, d);
    CHECK(from_dlpack(to_dlpack_versioned(x)).dtype() == d);
    if (d != DType::bool_) CHECK(from_dlpack(to_dlpack(x)).dtype() == d);
  }
}

TEST_CASE("meta tensors cannot be exported") {
  CHECK_THROWS_WITH_AS(to_dlpack(Tensor::empty({2}, DType::float32, Device::meta())),
                       doctest::Contains("meta tensors carry no data"), TypeError);
}

namespace {

// Imports `managed` expecting `E` with `needle`; the deleter must not have run.
template <class E>
void expect_refused(DLManagedTensor* managed, const int& deletions, const std::string& needle) {
  CHECK_THROWS_WITH_AS(from_dlpack(managed), doctest::Contains(needle.c_str()), E);
  CHECK(deletions == 0);
}

void set_device_type_code(DLManagedTensor* managed, std::int32_t code) {
  std::memcpy(&managed->dl_tensor.device.device_type, &code, sizeof code);
}

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

TEST_CASE("from_dlpack bounds ndim and refuses a null shape with ndim > 0") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  for (int ndim : {-1, 65, std::numeric_limits<int>::max(), std::numeric_limits<int>::min()}) {
    CAPTURE(ndim);
    managed->dl_tensor.ndim = ndim;
    expect_refused<ValueError>(managed, deletions, "ndim is " + std::to_string(ndim) + ", expected 0 to 64");
  }
  managed->dl_tensor.ndim = 2;
  std::int64_t* shape = managed->dl_tensor.shape;
  managed->dl_tensor.shape = nullptr;
  expect_refused<ValueError>(managed, deletions, "shape is null for a tensor of ndim 2");
  managed->dl_tensor.shape = shape;
  managed->deleter(managed);
  CHECK(deletions == 1);
}

TEST_CASE("from_dlpack refuses extents and strides that overflow or read outside the buffer") {
  struct Case {
    const char* what;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    const char* expected;
  };
  const Case cases[] = {
      {"negative extent", {3, -4}, {}, "negative extent in shape [3, -4]"},
      {"stride 2^62", {3, 4}, {std::int64_t{1} << 62, 1}, "reaches past 2^63 elements"},
      {"INT64_MAX stride", {3, 4}, {kInt64Max, 1}, "reaches past 2^63 elements"},
      {"extent x stride fits, bytes do not", {3, 4}, {1, std::int64_t{1} << 61}, "spans more than 2^63 bytes"},
      {"negative stride", {3, 4}, {-4, 1}, "negative strides are not supported: [-4, 1]"},
      {"negative stride on a unit axis", {1, 4}, {-4, 1}, "negative strides are not supported"},
      {"extents multiply past 2^63", {2, std::int64_t{1} << 32, std::int64_t{1} << 32}, {},
       "the extents of shape [2, 4294967296, 4294967296] multiply past 2^63"},
      {"an empty tensor whose other extents multiply past 2^63", {std::int64_t{1} << 62, 4, 0}, {1, 1, 1},
       "the extents of shape [4611686018427387904, 4, 0] multiply past 2^63"},
      {"extent x stride past 2^63", {kInt64Max, 1}, {2, 1}, "reaches past 2^63 elements"},
      {"offsets sum past 2^63", {std::int64_t{1} << 61, 2}, {4, kInt64Max / 2}, "reaches past 2^63 elements"},
      {"elements fit below 2^63, their bytes do not", {std::int64_t{1} << 62}, {0},
       "at 4 bytes per element its extents span more than 9223372036854775807 bytes"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    int deletions = 0;
    DLManagedTensor* managed = make_producer(&deletions, c.shape, c.strides);
    expect_refused<ValueError>(managed, deletions, c.expected);
    managed->deleter(managed);
    CHECK(deletions == 1);
  }
}

TEST_CASE("from_dlpack accepts what the producer can mean: unit axes, empty tensors, null strides") {
  int deletions = 0;
  {
    DLManagedTensor* managed = make_producer(&deletions, {1, 4}, {std::int64_t{1} << 62, 1});
    const Tensor t = from_dlpack(managed);
    CHECK(t.to_doubles() == std::vector<double>{0, 1, 2, 3});
  }
  CHECK(deletions == 1);
  {
    // A walk over the elements never steps along a unit axis, whose stride may be anything.
    DLManagedTensor* managed = make_producer(&deletions, {2, 1, 3}, {3, std::numeric_limits<std::int64_t>::max(), 1});
    const Tensor t = from_dlpack(managed);
    CHECK(t.to_doubles() == std::vector<double>{0, 1, 2, 3, 4, 5});
    t.fill(7.0);
    CHECK(t.to_doubles() == std::vector<double>(6, 7.0));
  }
  CHECK(deletions == 2);
  {
    DLManagedTensor* managed = make_producer(&deletions, {0, 4}, {});
    managed->dl_tensor.data = nullptr;
    const Tensor t = from_dlpack(managed);
    CHECK(t.numel() == 0);
  }
  CHECK(deletions == 3);
  {
    DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
    const Tensor t = from_dlpack(managed);
    CHECK(t.strides() == Strides{4, 1});
    CHECK(t.is_contiguous());
  }
  CHECK(deletions == 4);
  {
    DLManagedTensor* managed = make_producer(&deletions, {}, {});
    managed->dl_tensor.byte_offset = 8;
    const Tensor t = from_dlpack(managed);
    CHECK(t.to_doubles() == std::vector<double>{2});
  }
  CHECK(deletions == 5);
}

TEST_CASE("from_dlpack refuses a byte_offset that overflows or misaligns the first element") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  managed->dl_tensor.byte_offset = std::numeric_limits<std::uint64_t>::max();
  expect_refused<ValueError>(managed, deletions, "run past the end of the address space");
  managed->dl_tensor.byte_offset = std::numeric_limits<std::uint64_t>::max() - 47;
  expect_refused<ValueError>(managed, deletions, "run past the end of the address space");
  // Inside the address space, but offset and span reach 2^63 (the first read would fault).
  managed->dl_tensor.byte_offset = std::uint64_t{1} << 63;
  expect_refused<ValueError>(managed, deletions, "is 2^63 or more; expected them to stay below 2^63");
  managed->dl_tensor.byte_offset = (std::uint64_t{1} << 63) - 32;
  expect_refused<ValueError>(managed, deletions, "plus the 48 bytes the shape and strides span is 2^63 or more");
  managed->dl_tensor.byte_offset = 2;
  expect_refused<ValueError>(managed, deletions, "is not aligned to the element size 4");
  managed->dl_tensor.byte_offset = 0;
  managed->dl_tensor.data = nullptr;
  expect_refused<ValueError>(managed, deletions, "data is null for a tensor with elements");
  managed->deleter(managed);
  CHECK(deletions == 1);
}

TEST_CASE("from_dlpack accepts only devices that exist and compares the device type as an integer") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  managed->dl_tensor.device = {kDLCPU, -1};
  expect_refused<ValueError>(managed, deletions, "device cpu:-1 has a negative index");
  managed->dl_tensor.device = {kDLCPU, 7};
  expect_refused<ValueError>(managed, deletions, "device cpu:7 does not exist; cpu has one device, 0");
  managed->dl_tensor.device = {kDLCUDA, -3};
  expect_refused<ValueError>(managed, deletions, "device cuda:-3 has a negative index");
  for (std::int32_t code : {0, 99, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()}) {
    CAPTURE(code);
    managed->dl_tensor.device.device_id = 0;
    set_device_type_code(managed, code);
    expect_refused<TypeError>(managed, deletions, "unsupported DLPack device type " + std::to_string(code));
  }
  load_backends();
  for (DLDeviceType type : {kDLCUDA, kDLROCM}) {
    const DeviceType dt = DeviceType::intern(type == kDLCUDA ? "cuda" : "hip");
    const DeviceRuntime* runtime = find_device_runtime(dt);
    const int count = runtime != nullptr ? runtime->device_count() : 0;
    managed->dl_tensor.device = {type, count};
    if (runtime != nullptr) {
      expect_refused<ValueError>(managed, deletions, "does not exist; the process sees " + std::to_string(count));
    } else {
      expect_refused<OpNotAvailableError>(managed, deletions, "no device runtime is registered for device type");
    }
  }
  managed->deleter(managed);
  CHECK(deletions == 1);
}

TEST_CASE("from_dlpack names every unsupported dtype code, width and lane count") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  const std::pair<DLDataType, const char*> cases[] = {
      {{kDLOpaqueHandle, 64, 1}, "unsupported DLPack dtype (code 3, 64 bits)"},
      {{kDLFloat, 8, 1}, "unsupported DLPack dtype (code 2, 8 bits)"},
      {{kDLInt, 0, 1}, "unsupported DLPack dtype (code 0, 0 bits)"},
      {{kDLUInt, 1, 1}, "unsupported DLPack dtype (code 1, 1 bits)"},
      {{kDLUInt, 32, 1}, "unsupported DLPack dtype (code 1, 32 bits)"},
      {{255, 255, 1}, "unsupported DLPack dtype (code 255, 255 bits)"},
      {{kDLFloat, 32, 0}, "lanes = 0"},
      {{kDLFloat, 32, 65535}, "lanes = 65535"},
  };
  for (const auto& [dtype, expected] : cases) {
    CAPTURE(expected);
    managed->dl_tensor.dtype = dtype;
    expect_refused<TypeError>(managed, deletions, expected);
  }
  managed->deleter(managed);
  CHECK(deletions == 1);
}

TEST_CASE("a producer without a deleter is accepted and nothing is called") {
  int deletions = 0;
  DLManagedTensor* managed = make_producer(&deletions, {3, 4}, {});
  const auto deleter = managed->deleter;
  managed->deleter = nullptr;
  { const Tensor t = from_dlpack(managed); }
  CHECK(deletions == 0);
  deleter(managed);
  CHECK(deletions == 1);
}

TEST_CASE("a read-only tensor is never exported as DLPack 0.x, which cannot carry the flag") {
  Tensor t = Tensor::empty({4}, DType::float32);
  t.storage()->set_read_only();
  CHECK_THROWS_WITH_AS(to_dlpack(t), doctest::Contains("to_dlpack: the tensor is read-only, and DLPack 0.x cannot say so"),
                       TypeError);
  DLManagedTensorVersioned* versioned = to_dlpack_versioned(t);
  CHECK((versioned->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  versioned->deleter(versioned);
}
