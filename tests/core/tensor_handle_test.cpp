// Tensor handles: owning and borrowed handles, and the facts a tensor derives when it is made.
#include <doctest/doctest.h>

#include "support/watched_tensor.hpp"
#include "tileops/tensor.hpp"

using namespace tileops;

namespace {

Tensor watched(bool* released) { return test::watched_tensor(released, {1, 2, 3, 4}); }

}  // namespace

TEST_CASE("handles: a borrowed handle holds no reference, so the tensor goes with its last owning handle") {
  bool released = false;
  Tensor lent;
  {
    const Tensor owner = watched(&released);
    lent = owner.borrowed();
    CHECK(lent.is_borrowed());
    CHECK_FALSE(owner.is_borrowed());
    CHECK(lent.is_same(owner));
    CHECK(lent.get(2) == 3.0);
  }
  CHECK(released);
  CHECK(lent.is_borrowed());  // dropping it afterwards touches nothing (ASan checks)
}

TEST_CASE("handles: a copy of a borrowed handle owns the tensor and keeps it after the owner is gone") {
  bool released = false;
  Tensor kept;
  Tensor assigned;
  {
    const Tensor owner = watched(&released);
    const Tensor lent = owner.borrowed();
    kept = Tensor(lent);
    assigned = lent;
    CHECK_FALSE(kept.is_borrowed());
    CHECK_FALSE(assigned.is_borrowed());
    CHECK(kept.is_same(owner));
  }
  CHECK_FALSE(released);
  CHECK(kept.get(3) == 4.0);
  kept = Tensor();
  CHECK_FALSE(released);
  assigned = Tensor();
  CHECK(released);
}

TEST_CASE("handles: moving a borrowed handle moves the borrow, and the moved-from handle is undefined") {
  bool released = false;
  const Tensor owner = watched(&released);
  Tensor lent = owner.borrowed();
  Tensor moved = std::move(lent);
  CHECK(moved.is_borrowed());
  CHECK(moved.is_same(owner));
  CHECK_FALSE(lent.defined());  // NOLINT(bugprone-use-after-move): the moved-from state is the rule checked
  CHECK_FALSE(Tensor().borrowed().defined());
}

TEST_CASE("handles: tensors with the same dtype, device, shape and contiguity have the same facts hash") {
  const Tensor a = Tensor::empty({3, 3}, DType::float32);
  const Tensor b = Tensor::zeros({3, 3}, DType::float32);
  CHECK(a.facts_hash() == b.facts_hash());
  CHECK(a.borrowed().facts_hash() == a.facts_hash());
  const Tensor t = a.transpose(0, 1);  // same shape, not contiguous
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.facts_hash() != a.facts_hash());
  CHECK(Tensor::empty({3, 3}, DType::float16).facts_hash() != a.facts_hash());
  CHECK(Tensor::empty({9}, DType::float32).facts_hash() != a.facts_hash());
  CHECK(a.slice(0, 0, 3, 2).is_contiguous() == false);
  CHECK(a.slice(0, 0, 1).transpose(0, 1).is_contiguous());  // a unit axis may carry any stride
}
