// A bounded soak: many threads construct, call (good and bad inputs), fail
// and destroy op instances across targets (detected, builtin with the cpu plugin's kernels,
// reference), check every good result against the reference kernels, and leave no instance
// registered. A few seconds by default; TILEOPS_SOAK_SECONDS=N runs N seconds. Prints one line:
//   soak: calls=<n> ok=<n> expected_errors=<n> unexpected=<n> instances_left=<n> seconds=<s>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "reliability/soak_seconds.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/op.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using tileops::test::soak_seconds;

namespace {

using Specs = std::vector<std::optional<TensorSpec>>;

TensorSpec spec(Shape shape, DType dtype) { return {Device::cpu(), dtype, std::move(shape)}; }

// One way to call an op with inputs it must reject, and the error kind it must raise.
struct BadCall {
  Specs inputs;
  const std::type_info& expected;
  bool (*matches)(const Error&);
};

template <class E>
BadCall bad(Specs inputs) {
  return {std::move(inputs), typeid(E), [](const Error& e) { return dynamic_cast<const E*>(&e) != nullptr; }};
}

// An op of the catalog with its parameters, and the calls a worker makes on it.
struct Recipe {
  std::string op;
  std::function<ParamMap(std::mt19937&)> params;
  std::function<Specs(std::mt19937&, const ParamMap&)> good;
  std::function<BadCall(std::mt19937&, const ParamMap&)> bad;
};

std::int64_t pick(std::mt19937& rng, std::initializer_list<std::int64_t> values) {
  return *(values.begin() + std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng));
}

DType pick_float(std::mt19937& rng) {
  static constexpr DType kFloats[] = {DType::float32, DType::bfloat16, DType::float16};
  return kFloats[std::uniform_int_distribution<int>(0, 2)(rng)];
}

std::int64_t first_extent(const ParamMap& p, const char* name) {
  return std::get<std::vector<std::int64_t>>(p.at(name)).front();
}

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> all = {
      {"RMSNormFwdOp",
       [](std::mt19937& rng) {
         ParamMap p;
         p.set("normalized_shape", std::vector<std::int64_t>{pick(rng, {8, 64, 200})});
         return p;
       },
       [](std::mt19937& rng, const ParamMap& p) -> Specs {
         const std::int64_t n = first_extent(p, "normalized_shape");
         const DType t = pick_float(rng);
         return {spec({pick(rng, {1, 3, 16}), n}, t), spec({n}, t)};
       },
       [](std::mt19937& rng, const ParamMap& p) {
         const std::int64_t n = first_extent(p, "normalized_shape");
         switch (rng() % 3) {
           case 0: return bad<ValueError>({spec({2, n}, DType::float32), spec({n + 1}, DType::float32)});
           case 1: return bad<TypeError>({spec({2, n}, DType::int32), std::nullopt});
           default: return bad<TypeError>({std::nullopt, std::nullopt});
         }
       }},
      {"SoftmaxFwdOp",
       [](std::mt19937& rng) {
         ParamMap p;
         p.set("dim", pick(rng, {-1, 0}));
         return p;
       },
       [](std::mt19937& rng, const ParamMap&) -> Specs {
         return {spec({pick(rng, {0, 1, 5}), pick(rng, {7, 33, 300})}, pick_float(rng))};
       },
       [](std::mt19937& rng, const ParamMap&) {
         return bad<TypeError>({spec({2, 3}, rng() % 2 ? DType::int64 : DType::bool_)});
       }},
      {"GemmFwdOp",
       [](std::mt19937& rng) {
         ParamMap p;
         p.set("trans_a", rng() % 2 == 0);
         p.set("trans_b", rng() % 2 == 0);
         return p;
       },
       [](std::mt19937& rng, const ParamMap& p) -> Specs {
         const std::int64_t m = pick(rng, {1, 4, 17}), n = pick(rng, {3, 32}), k = pick(rng, {5, 64});
         const bool ta = std::get<bool>(p.at("trans_a")), tb = std::get<bool>(p.at("trans_b"));
         const DType t = pick_float(rng);
         return {spec(ta ? Shape{k, m} : Shape{m, k}, t), spec(tb ? Shape{n, k} : Shape{k, n}, t)};
       },
       [](std::mt19937& rng, const ParamMap& p) {
         const bool ta = std::get<bool>(p.at("trans_a")), tb = std::get<bool>(p.at("trans_b"));
         if (rng() % 2 == 0) {
           // K disagrees between a and b.
           return bad<ValueError>({spec(ta ? Shape{5, 2} : Shape{2, 5}, DType::float32),
                                   spec(tb ? Shape{3, 6} : Shape{6, 3}, DType::float32)});
         }
         // d = [M, N] holds 2^64 + 2^32 elements, which unchecked arithmetic wrapped to 2^32.
         const std::int64_t m = 4294967297, n = 4294967296;
         return bad<ValueError>({spec(ta ? Shape{0, m} : Shape{m, 0}, DType::float32),
                                 spec(tb ? Shape{n, 0} : Shape{0, n}, DType::float32)});
       }},
      {"AddFwdOp", [](std::mt19937&) { return ParamMap(); },
       [](std::mt19937& rng, const ParamMap&) -> Specs {
         const std::int64_t c = pick(rng, {1, 9, 128});
         const DType t = rng() % 4 == 0 ? DType::int32 : pick_float(rng);
         return {spec({pick(rng, {1, 6}), c}, t), spec({c}, t)};
       },
       [](std::mt19937&, const ParamMap&) {
         return bad<ValueError>({spec({2, 3}, DType::float32), spec({4}, DType::float32)});
       }},
      {"ReluFwdOp", [](std::mt19937&) { return ParamMap(); },
       [](std::mt19937& rng, const ParamMap&) -> Specs { return {spec({pick(rng, {1, 100, 5000})}, pick_float(rng))}; },
       [](std::mt19937&, const ParamMap&) { return bad<TypeError>({spec({4}, DType::int32)}); }},
      {"SumFwdOp",
       [](std::mt19937& rng) {
         ParamMap p;
         p.set("dim", pick(rng, {0, 1}));
         return p;
       },
       [](std::mt19937& rng, const ParamMap&) -> Specs {
         const DType t = rng() % 3 == 0 ? DType::int32 : DType::float32;
         return {spec({pick(rng, {1, 4}), pick(rng, {3, 70})}, t)};
       },
       [](std::mt19937&, const ParamMap&) { return bad<TypeError>({spec({2, 2}, DType::bool_)}); }},
  };
  return all;
}

const Target kTargets[] = {Target(), std::string(BUILTIN), std::string(REFERENCE)};

// A live op shared by the workers, with the reference-target twin that checks its results.
struct Instance {
  const Recipe* recipe;
  ParamMap params;
  std::unique_ptr<Op> op;
  std::unique_ptr<Op> oracle;
};

std::shared_ptr<Instance> make_instance(std::mt19937& rng) {
  const auto& all = recipes();
  auto inst = std::make_shared<Instance>();
  inst->recipe = &all[rng() % all.size()];
  inst->params = inst->recipe->params(rng);
  const OpCatalogEntry& entry = find_op(inst->recipe->op);
  inst->op = entry.make(inst->params, kTargets[rng() % std::size(kTargets)]);
  inst->oracle = entry.make(inst->params, std::string(REFERENCE));
  return inst;
}

struct Tally {
  std::atomic<std::int64_t> calls{0}, ok{0}, expected_errors{0}, unexpected{0};
  std::mutex mutex;
  std::vector<std::string> first_unexpected;  // a few, for the failure message

  void fail(const std::string& what) {
    ++unexpected;
    std::lock_guard lock(mutex);
    if (first_unexpected.size() < 5) first_unexpected.push_back(what);
  }
};

void good_call(Instance& inst, std::mt19937& rng, Tally& tally) {
  const Specs specs = inst.recipe->good(rng, inst.params);
  const std::vector<Tensor> inputs = testing::random_tensors(specs, Device::cpu(), static_cast<unsigned>(rng()));
  const std::vector<Tensor> oracle_inputs = testing::clone_all(inputs);
  try {
    const OpOutputs got = inst.op->call(CallArgs(inputs));
    const OpOutputs want = inst.oracle->call(CallArgs(oracle_inputs));
    bool same = got.size() == want.size();
    for (std::size_t i = 0; same && i < got.size(); ++i) same = testing::compare(got[i], want[i]).ok;
    if (same) {
      ++tally.ok;
    } else {
      tally.fail(inst.recipe->op + ": result differs from the reference");
    }
  } catch (const std::exception& e) {
    tally.fail(inst.recipe->op + ": a good call threw " + e.what());
  }
}

void bad_call(Instance& inst, std::mt19937& rng, Tally& tally) {
  const BadCall call = inst.recipe->bad(rng, inst.params);
  std::vector<Tensor> inputs;
  for (const auto& s : call.inputs) {
    if (!s) {
      inputs.emplace_back();
    } else if (shape_numel(s->shape) == 0) {
      inputs.push_back(Tensor::empty(s->shape, s->dtype));
    } else {
      inputs.push_back(testing::random_tensors({s}, Device::cpu()).front());
    }
  }
  try {
    inst.op->call(CallArgs(inputs));
    tally.fail(inst.recipe->op + ": a bad call succeeded (expected " + call.expected.name() + ")");
  } catch (const Error& e) {
    if (call.matches(e)) {
      ++tally.expected_errors;
    } else {
      tally.fail(inst.recipe->op + ": a bad call threw '" + e.what() + "', not the expected kind");
    }
  } catch (const std::exception& e) {
    tally.fail(inst.recipe->op + ": a bad call threw a non-tileops exception: " + e.what());
  }
}


}  // namespace

TEST_CASE("soak: threads construct, call with good and bad inputs, fail and destroy ops across targets") {
  const double seconds = soak_seconds();
  load_backends();
  const std::size_t instances_before = Op::live_count();
  Tally tally;
  constexpr int kThreads = 8;
  constexpr std::size_t kSlots = 6;
  std::mutex slots_mutex;
  std::vector<std::shared_ptr<Instance>> slots(kSlots);
  {
    std::mt19937 rng(7);
    for (auto& slot : slots) slot = make_instance(rng);
  }

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(1000 + static_cast<unsigned>(t));
      while (std::chrono::steady_clock::now() < deadline) {
        const std::size_t k = rng() % kSlots;
        std::shared_ptr<Instance> inst;
        if (rng() % 16 == 0) {
          // Replace the slot: the old instance dies once the last worker using it lets go.
          std::shared_ptr<Instance> fresh;
          try {
            fresh = make_instance(rng);
          } catch (const std::exception& e) {
            tally.fail(std::string("construction threw ") + e.what());
            continue;
          }
          std::lock_guard lock(slots_mutex);
          slots[k] = fresh;
          inst = fresh;
        } else {
          std::lock_guard lock(slots_mutex);
          inst = slots[k];
        }
        ++tally.calls;
        if (rng() % 4 == 0) {
          bad_call(*inst, rng, tally);
        } else {
          good_call(*inst, rng, tally);
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  slots.clear();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto instances_left = static_cast<std::int64_t>(Op::live_count()) - static_cast<std::int64_t>(instances_before);

  std::printf("soak: calls=%lld ok=%lld expected_errors=%lld unexpected=%lld instances_left=%lld seconds=%.1f\n",
              static_cast<long long>(tally.calls.load()), static_cast<long long>(tally.ok.load()),
              static_cast<long long>(tally.expected_errors.load()), static_cast<long long>(tally.unexpected.load()),
              static_cast<long long>(instances_left), elapsed);
  std::fflush(stdout);
  for (const std::string& what : tally.first_unexpected) MESSAGE(what);
  CHECK(tally.unexpected == 0);
  CHECK(instances_left == 0);
  CHECK(tally.ok > 0);
  CHECK(tally.expected_errors > 0);
  CHECK(tally.calls == tally.ok + tally.expected_errors + tally.unexpected);
}
