// Helpers for the signature plan tests: tensors, one-call checks and exact-error assertions.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "manifest/op_spec.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/tensor.hpp"

namespace tileops::test {

inline Tensor meta(ShapeView shape, DType dtype = DType::float16) { return Tensor::empty(shape, dtype, Device::meta()); }
inline Tensor host(ShapeView shape, DType dtype = DType::float16) { return Tensor::empty(shape, dtype, Device::cpu()); }

inline std::shared_ptr<const SignaturePlan> plan(const char* op) { return SignaturePlan::for_op(op); }

struct Checked {
  CallCheck check;
  SignatureCall record;
};

// Runs the construction and call checks of one call.
inline Checked run_call(const SignaturePlan& plan, const ParamMap& params, std::vector<Tensor> inputs, Tensor out = {}) {
  const ConstructionState state = plan.check_construction(params);
  Checked c;
  plan.check_call(state, CallArgs{inputs, std::move(out)}, c.check, c.record);
  return c;
}

// Calls `fn` and checks it throws exactly `E` (not a subclass or a sibling) whose message
// contains `needle`.
template <class E, class F>
void expect_error(F&& fn, const std::string& needle) {
  try {
    fn();
    FAIL("expected " << typeid(E).name() << " containing: " << needle);
  } catch (const Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(typeid(e) == typeid(E));
    CHECK(what.find(needle) != std::string::npos);
  }
}

}  // namespace tileops::test
