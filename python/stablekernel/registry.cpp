// The op registry and plan cache of the stable-ABI kernels (registry.hpp).
#include "registry.hpp"

#include <functional>
#include <mutex>
#include <unordered_map>

namespace tileops_stable {

namespace {

// std::hash and == for string keys, also on string_view, so that lookups allocate nothing.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct KeyEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

std::shared_mutex op_mutex;
std::unordered_map<std::string, tileops_op*, KeyHash, KeyEqual> ops;

struct FactsHash {
  size_t operator()(const std::vector<int64_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : v) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

std::shared_mutex plan_mutex;
std::unordered_map<std::vector<int64_t>, Plan, FactsHash> plans;

}  // namespace

void add_op(const std::string& key, tileops_op* op) {
  std::unique_lock<std::shared_mutex> lock(op_mutex);
  ops[key] = op;
}

void remove_op(const std::string& key) {
  std::unique_lock<std::shared_mutex> lock(op_mutex);
  ops.erase(key);
}

OpReader::OpReader() : lock_(op_mutex) {}

tileops_op* OpReader::find(std::string_view key) const {
  auto it = ops.find(key);
  return it == ops.end() ? nullptr : it->second;
}

bool find_plan(const std::vector<int64_t>& key, Plan* plan) {
  std::shared_lock<std::shared_mutex> lock(plan_mutex);
  auto it = plans.find(key);
  if (it == plans.end()) return false;
  const Plan& found = it->second;
  plan->outputs.resize(found.outputs.size());
  for (size_t o = 0; o < found.outputs.size(); ++o) {
    plan->outputs[o].sizes.assign(found.outputs[o].sizes.begin(), found.outputs[o].sizes.end());
    plan->outputs[o].strides.assign(found.outputs[o].strides.begin(), found.outputs[o].strides.end());
    plan->outputs[o].dtype = found.outputs[o].dtype;
  }
  return true;
}

void store_plan(const std::vector<int64_t>& key, const Plan& plan) {
  std::unique_lock<std::shared_mutex> lock(plan_mutex);
  if (plans.size() >= kPlanLimit) plans.clear();
  plans[key] = plan;
}

void clear_plans() {
  std::unique_lock<std::shared_mutex> lock(plan_mutex);
  plans.clear();
}

}  // namespace tileops_stable
