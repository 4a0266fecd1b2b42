// Failure and undo: the binding's reset when the selecting call fails, last_call kept.
#include <doctest/doctest.h>

#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// Fails every call whose input holds a negative first element, after building its entry.
class FailOnNegative final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{};
  explicit FailOnNegative(const ScaleCall& call) : scale_(call.scale) { ++counters().builds; }
  Tensor forward(const Tensor& x, const Tensor& bias) override {
    if (x.numel() > 0 && x.get(0) < 0) throw RuntimeError("FailOnNegative: negative input");
    if (x.numel() > 0 && x.get(0) == 99) throw 99;  // not a std::exception
    return scale_tensor(x, bias, scale_);
  }

 private:
  double scale_;
};

Tensor negative() { return Tensor::from_doubles(std::vector<double>{-1, 2}, std::vector<std::int64_t>{2}, DType::float32); }

}  // namespace

TEST_CASE("failure: a failing call that selected the target undoes the selection and drops its kernels") {
  Registrar reg("test");
  reg.register_kernel_type<FailOnNegative>("ScaleTestFwdOp", "fail_on_negative");
  counters().reset();
  ScaleTestFwdOp op(2.0);
  CHECK_THROWS_WITH_AS(op(negative()), doctest::Contains("negative input"), RuntimeError);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.built_entries("scale").empty());
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
  CHECK(counters().builds == 1);
  op(ramp(2));  // the next call selects and builds again
  CHECK(op.serving_target() == std::string(BUILTIN));
  CHECK(counters().builds == 2);
}

TEST_CASE("failure: a failing call after an earlier selection keeps the target, the kernels and last_call") {
  Registrar reg("test");
  reg.register_kernel_type<FailOnNegative>("ScaleTestFwdOp", "fail_on_negative");
  ScaleTestFwdOp op(2.0);
  op(ramp(2));
  const SignatureCallPtr good = op.last_call();
  const auto entries = op.built_entries("scale");
  CHECK_THROWS_AS(op(negative()), RuntimeError);
  CHECK(op.serving_target() == std::string(BUILTIN));
  CHECK(op.built_entries("scale").size() == entries.size());
  CHECK(op.last_call() == good);
}

TEST_CASE("undo travels into held sub-ops, the parent keeps holding them and its records") {
  Registrar reg("test");
  reg.register_kernel_type<FailOnNegative>("ScaleTestFwdOp", "fail_on_negative");
  ChainTestFwdOp chain;
  ScaleTestFwdOp* first = &chain.first();
  first->operator()(ramp(2));  // the sub-op selects its own target in its own earlier call
  CHECK(first->serving_target() == std::string(BUILTIN));
  CHECK_THROWS_AS(chain(negative()), RuntimeError);
  CHECK_FALSE(chain.serving_target().has_value());
  CHECK_FALSE(first->serving_target().has_value());  // reset recursively
  CHECK(first->built_entries("scale").empty());
  CHECK(chain.held_delegates().size() == 2);
  CHECK(first->last_call() != nullptr);  // completed calls' records stay
}

TEST_CASE("written tensor contents are not restored on failure") {
  struct WritesThenFails : ScaleTestFwdOp {
    using ScaleTestFwdOp::ScaleTestFwdOp;
    OpOutputs forward(const CallArgs& args) override {
      args.inputs[0].set(0, 42.0);
      throw ValueError("fails after writing");
    }
  };
  WritesThenFails op(1.0, {});
  const Tensor x = ramp(2);
  CHECK_THROWS_AS(op(x), ValueError);
  CHECK(x.get(0) == 42.0);
}

TEST_CASE("a value that is no std::exception, thrown by the op's own code, is not handled: the selection stays") {
  struct Throws99 : ScaleTestFwdOp {
    using ScaleTestFwdOp::ScaleTestFwdOp;
    OpOutputs forward(const CallArgs& args) override {
      if (args.inputs[0].get(0) == 99) throw 99;
      return ScaleTestFwdOp::forward(args);
    }
  };
  Throws99 op(1.0, {});
  const Tensor x = Tensor::from_doubles(std::vector<double>{99}, std::vector<std::int64_t>{1}, DType::float32);
  CHECK_THROWS_AS(op(x), int);
  CHECK(op.serving_target() == std::string(BUILTIN));
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
  op(ramp(1));  // the call stack was popped: a new call works
  CHECK(op.last_call()->op == "ScaleTestFwdOp");
}

TEST_CASE("a value that is no std::exception, thrown by a registered kernel, is a BackendError and the undo runs") {
  Registrar reg("test");
  reg.register_kernel_type<FailOnNegative>("ScaleTestFwdOp", "fail_on_negative");
  ScaleTestFwdOp op(1.0);
  const Tensor x = Tensor::from_doubles(std::vector<double>{99}, std::vector<std::int64_t>{1}, DType::float32);
  CHECK_THROWS_WITH_AS(op(x),
                       "ScaleTestFwdOp: the kernel of kernel type 'fail_on_negative' (plugin 'test') threw int, which "
                       "does not derive from std::exception",
                       BackendError);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.built_entries("scale").empty());
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
  op(ramp(1));
  CHECK(op.last_call()->op == "ScaleTestFwdOp");
}
