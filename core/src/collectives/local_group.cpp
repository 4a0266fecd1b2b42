#include "collectives/local_group.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tileops/errors.hpp"
#include "tileops/half.hpp"

namespace tileops::collectives {
namespace {

// How long a rank waits for the others before the group is declared broken: a rank that never
// makes its call is a bug of the program, which then gets an error instead of a hang.
constexpr std::chrono::seconds kTimeout{600};

// Element access in a wider type: sums of 16-bit floats in double, integer sums wrapping.
template <class T>
struct Element {
  using Wide = T;
  static Wide widen(T v) { return v; }
  static T narrow(Wide v) { return v; }
};
template <>
struct Element<float> {
  using Wide = double;
  static Wide widen(float v) { return v; }
  static float narrow(Wide v) { return static_cast<float>(v); }
};
template <>
struct Element<Half> {
  using Wide = double;
  static Wide widen(Half v) { return static_cast<float>(v); }
  static Half narrow(Wide v) { return Half(static_cast<float>(v)); }
};
template <>
struct Element<BFloat16> {
  using Wide = double;
  static Wide widen(BFloat16 v) { return static_cast<float>(v); }
  static BFloat16 narrow(Wide v) { return BFloat16(static_cast<float>(v)); }
};

template <class W>
W add(W a, W b) {
  if constexpr (std::is_integral_v<W>) {
    using U = std::make_unsigned_t<W>;
    return static_cast<W>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <class W>
W larger(W a, W b) {
  if constexpr (std::is_floating_point_v<W>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<W>::quiet_NaN();
  }
  return a < b ? b : a;
}

// dst[i] = the reduction over the ranks of their posted buffer's element offset + i, in rank order.
template <class T>
void reduce_posted(const LocalGroup& group, std::size_t offset, std::size_t count, Reduction reduce, T* dst) {
  using E = Element<T>;
  for (std::size_t i = 0; i < count; ++i) {
    typename E::Wide acc = E::widen(static_cast<const T*>(group.posted(0))[offset + i]);
    for (int r = 1; r < group.size(); ++r) {
      const typename E::Wide v = E::widen(static_cast<const T*>(group.posted(r))[offset + i]);
      acc = reduce == Reduction::sum ? add(acc, v) : larger(acc, v);
    }
    dst[i] = E::narrow(acc);
  }
}

void reduce_posted(const LocalGroup& group, std::size_t offset, std::size_t count, DType dtype, Reduction reduce,
                   void* dst) {
  switch (dtype) {
    case DType::float16: return reduce_posted(group, offset, count, reduce, static_cast<Half*>(dst));
    case DType::bfloat16: return reduce_posted(group, offset, count, reduce, static_cast<BFloat16*>(dst));
    case DType::float32: return reduce_posted(group, offset, count, reduce, static_cast<float*>(dst));
    case DType::float64: return reduce_posted(group, offset, count, reduce, static_cast<double*>(dst));
    case DType::int32: return reduce_posted(group, offset, count, reduce, static_cast<std::int32_t*>(dst));
    case DType::int64: return reduce_posted(group, offset, count, reduce, static_cast<std::int64_t*>(dst));
    default:
      throw TypeError("local communicator: cannot reduce " + std::string(dtype_name(dtype)) +
                      "; expected float16, bfloat16, float32, float64, int32 or int64");
  }
}

class LocalRank final : public CommunicatorBackend {
 public:
  LocalRank(std::shared_ptr<LocalGroup> group, int rank) : group_(std::move(group)), rank_(rank) {}

  void all_reduce(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce, void*) override {
    reduce_block(send, recv, 0, count, dtype, reduce, "all_reduce");
  }

  void all_gather(const void* send, void* recv, std::size_t count, DType dtype, void*) override {
    const std::size_t bytes = count * dtype_size(dtype);
    group_->meet(rank_, send, "all_gather");
    for (int r = 0; r < group_->size(); ++r) {
      if (bytes > 0) std::memcpy(static_cast<std::byte*>(recv) + static_cast<std::size_t>(r) * bytes, group_->posted(r), bytes);
    }
    group_->leave(rank_, "all_gather");
  }

  void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, Reduction reduce,
                      void*) override {
    reduce_block(send, recv, static_cast<std::size_t>(rank_) * count, count, dtype, reduce, "reduce_scatter");
  }

 private:
  // Reduces into a scratch block while the others' buffers are posted, and writes `recv` only
  // after every rank finished reading: `recv` may be this rank's `send` (in place).
  void reduce_block(const void* send, void* recv, std::size_t offset, std::size_t count, DType dtype, Reduction reduce,
                    const char* what) {
    std::vector<std::byte> scratch(count * dtype_size(dtype));
    group_->meet(rank_, send, what);
    try {
      reduce_posted(*group_, offset, count, dtype, reduce, scratch.data());
    } catch (...) {
      group_->leave(rank_, what);
      throw;
    }
    group_->leave(rank_, what);
    if (!scratch.empty()) std::memcpy(recv, scratch.data(), scratch.size());
  }

  std::shared_ptr<LocalGroup> group_;
  int rank_;
};

}  // namespace

LocalGroup::LocalGroup(int size)
    : size_(size), posted_(static_cast<std::size_t>(size)), inside_(static_cast<std::size_t>(size)) {}

void LocalGroup::wait_for_all(std::unique_lock<std::mutex>& lock, int rank, const char* what) {
  const std::uint64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    all_arrived_.notify_all();
    return;
  }
  const bool met = all_arrived_.wait_for(lock, kTimeout, [&] { return generation_ != generation || broken_; });
  if (met && !broken_) return;
  broken_ = true;
  inside_[static_cast<std::size_t>(rank)] = false;
  all_arrived_.notify_all();
  throw RuntimeError("local communicator: rank " + std::to_string(rank) + " of " + std::to_string(size_) + " " +
                     (met ? "left " + std::string(what) + " because another rank gave up waiting"
                          : "waited " + std::to_string(kTimeout.count()) + " s in " + what +
                                " for the other ranks; every rank must make the same collective calls") +
                     "; the group is broken");
}

void LocalGroup::meet(int rank, const void* send, const char* what) {
  std::unique_lock lock(mutex_);
  const auto r = static_cast<std::size_t>(rank);
  if (broken_) throw RuntimeError("local communicator: the group is broken (a rank gave up waiting for the others)");
  if (inside_[r]) {
    throw RuntimeError("local communicator: rank " + std::to_string(rank) + " is already inside a collective on " +
                       "another thread; each rank calls from one thread at a time");
  }
  inside_[r] = true;
  posted_[r] = send;
  wait_for_all(lock, rank, what);
}

void LocalGroup::leave(int rank, const char* what) {
  std::unique_lock lock(mutex_);
  wait_for_all(lock, rank, what);
  inside_[static_cast<std::size_t>(rank)] = false;
}

std::unique_ptr<CommunicatorBackend> local_rank(std::shared_ptr<LocalGroup> group, int rank) {
  return std::make_unique<LocalRank>(std::move(group), rank);
}

}  // namespace tileops::collectives
