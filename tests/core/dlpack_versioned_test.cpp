// DLPack views, DLPack 1.x's versioned struct and its read-only flag, and the bool code.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/elementwise.hpp"

using namespace tileops;

namespace {

// A 10 x 2 float32 tensor holding 0, 1, ..., 19.
Tensor counting_rows() {
  std::vector<double> values(20);
  std::iota(values.begin(), values.end(), 0.0);
  return Tensor::from_doubles(values, std::vector<std::int64_t>{10, 2}, DType::float32);
}

// A DLPack 1.x producer's buffer of four floats, optionally flagged read-only.
struct VersionedProducer {
  std::vector<float> data{-1, 2, -3, 4};
  std::int64_t shape[1] = {4};
  DLManagedTensorVersioned managed{};
  int* deletions;
};

DLManagedTensorVersioned* make_versioned(int* deletions, std::uint64_t flags) {
  auto* p = new VersionedProducer;
  p->deletions = deletions;
  p->managed.version = {1, 0};
  p->managed.flags = flags;
  DLTensor& t = p->managed.dl_tensor;
  t.data = p->data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = p->shape;
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensorVersioned* self) {
    auto* owner = static_cast<VersionedProducer*>(self->manager_ctx);
    ++*owner->deletions;
    delete owner;
  };
  return &p->managed;
}

}  // namespace

TEST_CASE("an exported view of rows 3..7 points data at row 3 with byte_offset 0, so a consumer ignoring byte_offset reads rows 3..7") {
  const Tensor rows = counting_rows().slice(0, 3, 7);
  DLManagedTensor* managed = to_dlpack(rows);
  CHECK(managed->dl_tensor.byte_offset == 0);
  CHECK(static_cast<const float*>(managed->dl_tensor.data)[0] == 6.0f);
  CHECK(managed->dl_tensor.shape[0] == 4);
  managed->deleter(managed);

  DLManagedTensorVersioned* versioned = to_dlpack_versioned(rows);
  CHECK(versioned->dl_tensor.byte_offset == 0);
  CHECK(static_cast<const float*>(versioned->dl_tensor.data)[0] == 6.0f);
  versioned->deleter(versioned);
}

TEST_CASE("from_dlpack reads a view given either as data at its first element or as data at the allocation plus byte_offset") {
  const Tensor all = counting_rows();
  const Tensor back = from_dlpack(to_dlpack(all.slice(0, 3, 7)));
  CHECK(back.get(0) == 6.0);

  DLManagedTensor* offset_form = to_dlpack(all.slice(0, 3, 7));
  offset_form->dl_tensor.data = all.data_ptr();
  offset_form->dl_tensor.byte_offset = 6 * sizeof(float);
  const Tensor from_offset = from_dlpack(offset_form);
  CHECK(from_offset.data_ptr() == back.data_ptr());
  CHECK(from_offset.to_doubles() == back.to_doubles());
}

TEST_CASE("to_dlpack_versioned writes version 1.0, and the read-only flag when asked or when the storage is read-only") {
  const Tensor t = counting_rows();
  DLManagedTensorVersioned* writable = to_dlpack_versioned(t);
  CHECK(writable->version.major == 1);
  CHECK(writable->version.minor == 0);
  CHECK(writable->flags == 0);
  const Tensor back = from_dlpack(writable);
  CHECK(back.data_ptr() == t.data_ptr());
  CHECK_FALSE(back.storage()->read_only());

  DLManagedTensorVersioned* locked = to_dlpack_versioned(t, kDLPackVersion, true);
  CHECK((locked->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  const Tensor read_only = from_dlpack(locked);
  CHECK(read_only.storage()->read_only());
  DLManagedTensorVersioned* again = to_dlpack_versioned(read_only.slice(0, 1, 2));
  CHECK((again->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  again->deleter(again);
}

TEST_CASE("version negotiation: a consumer below DLPack 1.0 is told to use the legacy struct, an import of major 2 is refused and left with the caller") {
  const Tensor t = counting_rows();
  CHECK_THROWS_WITH_AS(to_dlpack_versioned(t, DLPackVersion{0, 8}), doctest::Contains("use to_dlpack"), TypeError);
  DLManagedTensorVersioned* newer = to_dlpack_versioned(t, DLPackVersion{1, 3});
  CHECK(newer->version.major == 1);

  int deletions = 0;
  DLManagedTensorVersioned* future = make_versioned(&deletions, 0);
  future->version = {2, 0};
  CHECK_THROWS_WITH_AS(from_dlpack(future), doctest::Contains("DLPack 2.0, expected major version 1"), ValueError);
  CHECK(deletions == 0);
  future->version = {1, 1};
  { const Tensor ok = from_dlpack(future); }
  CHECK(deletions == 1);
  newer->deleter(newer);
}

TEST_CASE("a read-only import is never written: an in-place op, an out buffer and the element setters refuse it") {
  int deletions = 0;
  {
    const Tensor x = from_dlpack(make_versioned(&deletions, DLPACK_FLAG_BITMASK_READ_ONLY));
    ReluFwdOp inplace(true);
    CHECK_THROWS_WITH_AS(inplace(x), doctest::Contains("ReluFwdOp: input 'input' is read-only"), ValueError);
    CHECK(x.get(0) == -1.0);
    CHECK_THROWS_WITH_AS(inplace(x), doctest::Contains("read-only"), ValueError);  // a memoised call too

    ReluFwdOp relu;
    const Tensor y = relu(x);
    CHECK(y.get(0) == 0.0);
    CHECK(x.get(0) == -1.0);

    AddFwdOp add;
    const Tensor writable = Tensor::zeros(std::vector<std::int64_t>{4}, DType::float32);
    CHECK_THROWS_WITH_AS(add(writable, writable, x), doctest::Contains("'out' buffer is read-only"), ValueError);
    CHECK(x.get(0) == -1.0);

    CHECK_THROWS_WITH_AS(x.set(0, 1.0), doctest::Contains("is read-only"), ValueError);
    CHECK_THROWS_WITH_AS(x.fill(1.0), doctest::Contains("is read-only"), ValueError);
    CHECK_THROWS_WITH_AS(x.copy_from(writable), doctest::Contains("is read-only"), ValueError);
  }
  CHECK(deletions == 1);
}

TEST_CASE("bool: the legacy struct refuses it by name, the versioned one exports kDLBool, and both import it") {
  const Tensor flags = Tensor::from_doubles(std::vector<double>{1, 0}, std::vector<std::int64_t>{2}, DType::bool_);
  CHECK_THROWS_WITH_AS(to_dlpack(flags), doctest::Contains("bool has no code in DLPack 0.x"), TypeError);
  DLManagedTensorVersioned* versioned = to_dlpack_versioned(flags);
  CHECK(versioned->dl_tensor.dtype.code == 6);
  CHECK(versioned->dl_tensor.dtype.bits == 8);
  DLManagedTensor* legacy = to_dlpack(flags.to(DType::uint8));
  legacy->dl_tensor.dtype.code = 6;
  CHECK(from_dlpack(legacy).dtype() == DType::bool_);
  CHECK(from_dlpack(versioned).to_doubles() == std::vector<double>{1, 0});
}
