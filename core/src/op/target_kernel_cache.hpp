// The target kernels of a binding: the kernels a target's builder made, by the call device and
// each input's presence, dtype and shape, bounded and evicted like the built entries
// (op/clock_cache.hpp). Consulted only when the call cache misses (a hit holds its kernel).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "op/clock_cache.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/op.hpp"

namespace tileops {

struct TargetInputSlot {
  bool present = false;
  DType dtype = DType::float32;
  Shape shape;
  friend bool operator==(const TargetInputSlot&, const TargetInputSlot&) = default;
};

struct TargetKey {
  std::optional<Device> device;
  boost::container::small_vector<TargetInputSlot, 6> inputs;
  friend bool operator==(const TargetKey&, const TargetKey&) = default;
  // "<device> (<dtype><shape>, absent, ...)".
  std::string str() const;
};

struct TargetKeyHash {
  std::size_t operator()(const TargetKey& k) const;
};

class TargetKernelCache {
 public:
  explicit TargetKernelCache(std::size_t capacity) : kernels_(capacity) {}

  // The kernel for `key`, or null; counts a hit or a miss.
  std::shared_ptr<const TargetKernel> find(const TargetKey& key) const;
  // Keeps `kernel` for `key` (or the kernel another call stored first, which it returns),
  // evicting one when the cache is full.
  std::shared_ptr<const TargetKernel> insert(TargetKey key, std::shared_ptr<const TargetKernel> kernel);
  // The keys held.
  std::vector<std::string> keys() const;
  // Drops every kernel (one in use by a call lives until that call is done); zeroes the counters.
  void clear();
  void set_capacity(std::size_t capacity);
  CacheCounters counters() const;

 private:
  using Kernel = std::shared_ptr<const TargetKernel>;
  static void drop(const Kernel&) {}

  mutable std::shared_mutex mutex_;
  ClockCache<TargetKey, Kernel, TargetKeyHash, std::equal_to<>> kernels_;
};

}  // namespace tileops
