// The call cache of a binding and the target-kernel cache: what a repeat reuses, when an entry
// is made, the bounds and their eviction, the counters, and the config keys that set the bounds.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/rule_ops.hpp"
#include "support/test_ops.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/elementwise.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

Tensor row(std::int64_t n) { return Tensor::zeros({1, n}, DType::float32); }

// A ScaleTestFwdOp whose scale a test changes between calls: forward then asks kernel_for for
// another call spec than the cached call's.
class RescaledScaleOp final : public ScaleTestFwdOp {
 public:
  using ScaleTestFwdOp::ScaleTestFwdOp;
  void rescale(double scale) { scale_ = scale; }
};

// Restores the process configuration when a test is done with it.
struct ConfigRestore {
  Config saved = config();
  ~ConfigRestore() { set_config(saved); }
};

}  // namespace

TEST_CASE("call cache: a repeat of a call's tensor facts hits, other shapes, dtypes or contiguity miss") {
  AddFwdOp add;
  const Tensor a = row(8), b = row(8);
  add(a, b);
  CacheCounters c = add.cache_stats().calls;
  CHECK(c.misses == 1);
  CHECK(c.hits == 0);
  CHECK(c.entries == 1);
  add(row(8), row(8));  // other tensors, the same facts
  c = add.cache_stats().calls;
  CHECK(c.hits == 1);
  CHECK(c.entries == 1);
  add(row(9), row(9));
  add(Tensor::zeros({1, 8}, DType::float16), Tensor::zeros({1, 8}, DType::float16));
  const Tensor square = Tensor::zeros({2, 2}, DType::float32);
  add(square, square);
  add(square.transpose(0, 1), square);  // the same shapes, one input not contiguous
  c = add.cache_stats().calls;
  CHECK(c.misses == 5);
  CHECK(c.hits == 1);
  CHECK(c.entries == 5);
  CHECK(c.evictions == 0);
  CHECK(c.capacity == CacheCapacity{}.calls);
}

TEST_CASE("call cache: a repeat gives the record a full check gives, in a record of its own") {
  AddFwdOp add;
  const Tensor a = Tensor::from_doubles(std::vector<double>{1, 2, 3}, std::vector<std::int64_t>{1, 3}, DType::float32);
  const Tensor b = Tensor::from_doubles(std::vector<double>{10, 20, 30}, std::vector<std::int64_t>{1, 3}, DType::float32);
  const Tensor first = add(a, b);
  const SignatureCallPtr checked = add.last_call();
  const Tensor second = add(b, a);
  const SignatureCallPtr repeated = add.last_call();
  REQUIRE(add.cache_stats().calls.hits == 1);
  CHECK(repeated != checked);
  CHECK(repeated->str() == checked->str());
  CHECK(repeated->kernels == checked->kernels);
  CHECK(first.to_doubles() == std::vector<double>{11, 22, 33});
  CHECK(second.to_doubles() == std::vector<double>{11, 22, 33});
}

TEST_CASE("call cache: a forward that asks for other kernels than its cached call did is served what it asks") {
  RescaledScaleOp op(2.0);
  const Tensor x = ramp(4);
  CHECK(op(x).to_doubles() == std::vector<double>{2, 4, 6, 8});
  op.rescale(3.0);  // no tensor fact changed: the call hits, forward's call spec differs
  CHECK(op(x).to_doubles() == std::vector<double>{3, 6, 9, 12});
  CHECK(op.cache_stats().calls.hits == 1);
  CHECK(op.built_entries("scale").size() == 2);
  op.rescale(2.0);
  CHECK(op(x).to_doubles() == std::vector<double>{2, 4, 6, 8});
}

TEST_CASE("call cache: 10000 distinct shapes stay within the capacity, and a shape in steady use is never evicted") {
  AddFwdOp add;
  add.set_cache_capacity({64, 8});
  const Tensor hot = row(3);
  for (std::int64_t n = 1; n <= 10000; ++n) {
    const Tensor t = Tensor::zeros({n}, DType::float32);
    add(t, t);
    add(hot, hot);
    REQUIRE(add.cache_stats().calls.entries <= 64);
  }
  const CacheCounters c = add.cache_stats().calls;
  CHECK(c.entries == 64);
  CHECK(c.misses == 10001);  // each shape once, the hot one once
  CHECK(c.hits == 9999);     // the hot shape every time after its first
  CHECK(c.evictions == 10001 - 64);
  add(hot, hot);
  CHECK(add.cache_stats().calls.hits == 10000);
}

TEST_CASE("call cache: the least recently used entry is the one evicted") {
  AddFwdOp add;
  add.set_cache_capacity({3, 8});
  const auto call = [&](std::int64_t n) { add(row(n), row(n)); };
  call(1);
  call(2);
  call(3);
  call(1);  // 2 is now the least recently used
  call(4);
  CHECK(add.cache_stats().calls.evictions == 1);
  const std::uint64_t misses = add.cache_stats().calls.misses;
  call(1);
  call(3);
  call(4);
  CHECK(add.cache_stats().calls.misses == misses);
  call(2);
  CHECK(add.cache_stats().calls.misses == misses + 1);
}

TEST_CASE("call cache: lowering a bound evicts at once, and a bound of 0 or above the maximum is refused by name") {
  AddFwdOp add;
  for (std::int64_t n = 1; n <= 5; ++n) add(row(n), row(n));
  add.set_cache_capacity({2, 8});
  CHECK(add.cache_stats().calls.entries == 2);
  CHECK(add.cache_stats().calls.evictions == 3);
  CHECK(add.cache_capacity().calls == 2);
  CHECK_THROWS_WITH_AS(add.set_cache_capacity({0, 8}),
                       doctest::Contains("the call cache capacity must be 1 to 1048576, not 0"), ValueError);
  CHECK_THROWS_WITH_AS(add.set_cache_capacity({8, CacheCapacity::kMax + 1}),
                       doctest::Contains("the target kernel cache capacity must be 1 to 1048576, not 1048577"),
                       ValueError);
  CHECK(add.cache_capacity().calls == 2);  // a refused bound changes nothing
}

TEST_CASE("call cache: a failed selecting call resets the caches and their counters") {
  RuleTarget target(/*scale_builder=*/false);  // rule_t claims the device but builds nothing
  ScaleTestFwdOp op(2.0);
  CHECK_THROWS_AS(op(to_device(ramp(4), "rule_t:0")), OpNotAvailableError);
  const CacheStats s = op.cache_stats();
  CHECK(s.calls.misses == 0);
  CHECK(s.calls.entries == 0);
}

TEST_CASE("target kernel cache: kernels are built once per input shapes, bounded, least recently used evicted") {
  RuleTarget target;
  ScaleTestFwdOp op(2.0);
  op.set_cache_capacity({256, 2});
  const auto call = [&](std::int64_t n) { op(to_device(ramp(n), "rule_t:0")); };
  call(2);
  call(3);
  call(2);  // a hit of the call cache: neither built nor looked up again
  CHECK(target.builds == 2);
  CHECK(op.cache_stats().target_kernels.misses == 2);
  CHECK(op.cache_stats().target_kernels.entries == 2);
  call(4);  // evicts the kernel of [2], the least recently looked up (its repeat hit the call cache)
  CHECK(target.builds == 3);
  const CacheCounters t = op.cache_stats().target_kernels;
  CHECK(t.entries == 2);
  CHECK(t.evictions == 1);
  CHECK(t.capacity == 2);
  CHECK(op.built_entries().size() == 2);
  call(3);  // a call-cache hit, with its kernel: nothing is built
  call(5);  // evicts the kernel of [3]
  CHECK(target.builds == 4);
  CHECK(target.runs == 6);
  CHECK(op.cache_stats().target_kernels.evictions == 2);
}

TEST_CASE("target kernel cache: by default a target builds each specialization once, and an eviction is warned about once") {
  CHECK(Config{}.target_kernel_cache_capacity == 4096);
  RuleTarget target;
  ScaleTestFwdOp op(2.0);
  op.set_cache_capacity({256, 1});
  LogCapture log;
  const auto call = [&](std::int64_t n) { op(to_device(ramp(n), "rule_t:0")); };
  call(2);
  CHECK(log.count("target_kernel_cache_capacity") == 0);
  call(3);
  call(4);
  CHECK(op.cache_stats().target_kernels.evictions == 2);
  CHECK(log.count("ScaleTestFwdOp (" + op.instance_key() +
                  "): target 'rule_t' has built more kernels than target_kernel_cache_capacity (1) keeps; one was "
                  "evicted, and its builder will run again") == 1);
}

TEST_CASE("config: the cache capacities are read from the config file and the environment, and checked") {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "tileops_call_cache_test.conf";
  const auto parse = [&](const std::string& text) {
    std::ofstream(file) << text;
    return parse_config_file(file);
  };
  const Config c = parse("[tileops]\ncall_cache_capacity = 12\ntarget_kernel_cache_capacity = 5\n");
  CHECK(c.call_cache_capacity == 12);
  CHECK(c.target_kernel_cache_capacity == 5);
  CHECK_THROWS_WITH_AS(parse("call_cache_capacity = 2000000\n"),
                       doctest::Contains(":1: key 'call_cache_capacity': invalid cache capacity '2000000'; expected a "
                                         "whole number from 1 to 1048576"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse("target_kernel_cache_capacity = -3\n"), doctest::Contains("invalid cache capacity '-3'"),
                       ConfigError);
  std::filesystem::remove(file);
  ::setenv("TILEOPS_TARGET_KERNEL_CACHE_CAPACITY", "9", 1);
  CHECK(load_config().target_kernel_cache_capacity == 9);
  ::setenv("TILEOPS_TARGET_KERNEL_CACHE_CAPACITY", "nine", 1);
  CHECK_THROWS_WITH_AS(load_config(),
                       doctest::Contains("environment variable TILEOPS_TARGET_KERNEL_CACHE_CAPACITY: invalid cache "
                                         "capacity 'nine'"),
                       ConfigError);
  ::unsetenv("TILEOPS_TARGET_KERNEL_CACHE_CAPACITY");
  CHECK(load_config().call_cache_capacity == CacheCapacity{}.calls);
}

TEST_CASE("config: call_cache_capacity and target_kernel_cache_capacity bound the caches of new instances") {
  ConfigRestore restore;
  Config c = config();
  c.call_cache_capacity = 7;
  c.target_kernel_cache_capacity = 3;
  set_config(c);
  AddFwdOp add;
  CHECK(add.cache_capacity().calls == 7);
  CHECK(add.cache_capacity().target_kernels == 3);
  CHECK(add.cache_stats().calls.capacity == 7);
  c.call_cache_capacity = 0;
  CHECK_THROWS_WITH_AS(set_config(c), doctest::Contains("set_config: call_cache_capacity: invalid cache capacity 0"),
                       ConfigError);
  CHECK(config().call_cache_capacity == 7);
}
