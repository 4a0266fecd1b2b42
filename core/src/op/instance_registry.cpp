#include "op/instance_registry.hpp"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "tileops/op.hpp"

namespace tileops {
namespace {

struct InstanceRegistry {
  std::mutex mutex;
  std::unordered_map<std::string, Op*> live;
  std::atomic<std::uint64_t> next{1};
};

InstanceRegistry& instances() {
  static InstanceRegistry r;
  return r;
}

}  // namespace

std::string register_instance(Op* op) {
  InstanceRegistry& r = instances();
  std::string key = op->name() + "#" + std::to_string(r.next.fetch_add(1, std::memory_order_relaxed));
  std::lock_guard lock(r.mutex);
  r.live.emplace(key, op);
  return key;
}

void unregister_instance(const std::string& key) {
  InstanceRegistry& r = instances();
  std::lock_guard lock(r.mutex);
  r.live.erase(key);
}

Op* find_instance(const std::string& key) {
  InstanceRegistry& r = instances();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(key);
  return it == r.live.end() ? nullptr : it->second;
}

std::size_t live_instance_count() {
  InstanceRegistry& r = instances();
  std::lock_guard lock(r.mutex);
  return r.live.size();
}

}  // namespace tileops
