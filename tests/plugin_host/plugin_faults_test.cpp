// Every call into plugin code is guarded: what a plugin's
// detector, builder, target kernel, refusal, entry_for, kernel constructor, kernel or device
// runtime throws that is not a tileops::Error (throw 42 included) reaches the caller as a
// BackendError naming the op, the key or target and the plugin, with the original message, and
// the failure undo (the binding's reset) still runs. The faulty corpus plugin picks its fault by the factor.
#include <doctest/doctest.h>

#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"
#include "support/plugin_test_fwd_op.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
using tileops::plugin::PluginHost;
using tileops::test::corpus;
using tileops::test::PluginTestFwdOp;
using tileops::test::ramp;

namespace {

// Loads the faulty plugin for the scope of a test.
struct FaultyPlugin {
  PluginHost host;
  FaultyPlugin() {
    host.load({corpus("faulty")});
    REQUIRE(host.loaded().size() == 1);
  }
};

// Calls `op` on [1, 2, 3, 4] and checks it fails with BackendError `message`, undoing the
// target selection that call made.
void check_fault(PluginTestFwdOp& op, const std::string& message) {
  CHECK_THROWS_WITH_AS(op(ramp(4)), message.c_str(), BackendError);
  CHECK_FALSE(op.serving_target().has_value());
}

}  // namespace

TEST_CASE("a plugin kernel that serves the call runs, the reference serves the calls it refuses") {
  FaultyPlugin faulty;
  PluginTestFwdOp served(16);
  CHECK(served(ramp(2)).to_doubles() == std::vector<double>{100, 200});
  PluginTestFwdOp refused(3);
  CHECK(refused(ramp(2)).to_doubles() == std::vector<double>{3, 6});
}

TEST_CASE("a refusal that throws a std::exception is a BackendError naming op, key and plugin") {
  FaultyPlugin faulty;
  PluginTestFwdOp op(11);
  check_fault(op, "PluginTestFwdOp: the refusal of kernel type 'faulty_kernel' (plugin 'faulty') threw "
                  "std::logic_error: faulty refusal");
}

TEST_CASE("entry_for and the kernel constructor are guarded") {
  FaultyPlugin faulty;
  PluginTestFwdOp entry(12);
  check_fault(entry, "PluginTestFwdOp: entry_for of kernel type 'faulty_kernel' (plugin 'faulty') threw "
                     "std::out_of_range: faulty entry_for");
  PluginTestFwdOp constructor(13);
  check_fault(constructor, "PluginTestFwdOp: the constructor (entry factory) of kernel type 'faulty_kernel' (plugin "
                           "'faulty') threw std::runtime_error: faulty constructor");
  CHECK(constructor.built_entries("plugin_test").empty());
}

TEST_CASE("a kernel that throws std::invalid_argument fails the call with a BackendError and the undo runs") {
  FaultyPlugin faulty;
  PluginTestFwdOp op(14);
  check_fault(op, "PluginTestFwdOp: the kernel of kernel type 'faulty_kernel' (plugin 'faulty') threw "
                  "std::invalid_argument: faulty forward");
  CHECK(op.built_entries("plugin_test").empty());  // the entry built by the failed call is gone
  CHECK_THROWS_AS(op.last_call(), RuntimeError);   // and the call was not recorded
}

TEST_CASE("a kernel that throws 42 fails the call with a BackendError too") {
  FaultyPlugin faulty;
  PluginTestFwdOp op(15);
  check_fault(op, "PluginTestFwdOp: the kernel of kernel type 'faulty_kernel' (plugin 'faulty') threw int, which does "
                  "not derive from std::exception");
}

TEST_CASE("a target's builder and kernel are guarded") {
  FaultyPlugin faulty;
  PluginTestFwdOp builder(21, "faultytarget");
  check_fault(builder, "PluginTestFwdOp: the kernel builder of target 'faultytarget' (plugin 'faulty') threw "
                       "std::invalid_argument: faulty builder");
  PluginTestFwdOp kernel(22, "faultytarget");
  check_fault(kernel, "PluginTestFwdOp: the kernel of target 'faultytarget' (plugin 'faulty') threw int, which does not "
                      "derive from std::exception");
  PluginTestFwdOp fine(1, "faultytarget");
  CHECK(fine(ramp(2)).to_doubles() == std::vector<double>{1, 2});
  CHECK(fine.serving_target() == "faultytarget");
}

TEST_CASE("a detector that throws names its target and plugin, devices it does not throw for are unaffected") {
  FaultyPlugin faulty;
  PluginTestFwdOp op(1);
  CHECK_THROWS_WITH_AS(op(ramp(2).to(Device::parse("faultydev:0"))),
                       "PluginTestFwdOp: the detector of target 'faultytarget' (plugin 'faulty'), asked about "
                       "faultydev:0, threw std::runtime_error: faulty detector",
                       BackendError);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op(ramp(2)).to_doubles() == std::vector<double>{1, 2});
  CHECK(op.serving_target() == std::string(BUILTIN));
}

TEST_CASE("a device runtime's allocate that throws std::bad_alloc is an OutOfMemoryError naming the bytes and plugin") {
  FaultyPlugin faulty;
  CHECK_THROWS_WITH_AS(Tensor::empty({4}, DType::float32, Device::parse("faultymem:0")),
                       "faultymem:0 cannot allocate 16 bytes: allocate of the device runtime for 'faultymem' "
                       "(plugin 'faulty') ran out of memory",
                       OutOfMemoryError);
}
