// The target kernels: the kernels a target's builder made for one binding, by the call device
// and each input's presence, dtype and shape. Consulted only when the call cache misses (a hit
// holds its kernel), so it keeps exact least-recently-used order under one mutex.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

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
  explicit TargetKernelCache(std::size_t capacity) : capacity_(capacity) {}

  // The kernel for `key`, made the most recently used, or null; counts a hit or a miss.
  std::shared_ptr<const TargetKernel> find(const TargetKey& key);
  // Keeps `kernel` for `key` (or the kernel another call stored first, which it returns),
  // evicting the least recently used kernel when the cache is full.
  std::shared_ptr<const TargetKernel> insert(TargetKey key, std::shared_ptr<const TargetKernel> kernel);
  // The keys held, most recently used first.
  std::vector<std::string> keys() const;
  // Drops every kernel (one in use by a call lives until that call is done); zeroes the counters.
  void clear();
  void set_capacity(std::size_t capacity);
  CacheCounters counters() const;

 private:
  using Order = std::list<std::pair<TargetKey, std::shared_ptr<const TargetKernel>>>;
  void evict_beyond(std::size_t capacity);  // under mutex_

  mutable std::mutex mutex_;
  std::size_t capacity_;
  Order order_;  // most recently used first
  std::unordered_map<TargetKey, Order::iterator, TargetKeyHash> index_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace tileops
