// The call cache of one binding: everything a repeat of a call needs, keyed by the facts of the
// call's tensors. A call's signature check reads of each tensor only whether it is passed, its
// dtype, device and shape, and whether it is contiguous; `forward` decides its kernels from the
// same facts and the op's parameters. So a call whose tensors have the facts of a cached call
// reuses that call's check, its record and the kernels it was served by, instead of checking,
// dispatching and filling a record again.
//
// Concurrency. A hit takes no lock and writes only the calling thread's stripe (a line of
// counters and a small record pool that threads pick by their id), so threads sharing an op
// instance do not write each other's cache lines. Inserting and evicting take the cache's mutex.
// An evicted entry may still be read by a call in flight: it is retired, and freed after a grace
// period. A call counts itself in on its stripe, under the parity of the cache's epoch, before it
// looks an entry up, and out when it is done with it. The entries retired since the last grace
// period began start the next one: the epoch advances, so that new calls count in under the
// other parity, and they are freed once no stripe has a call in flight under the old parity. So
// memory is given back under any load, even when some call of the binding is always in flight.
//
// Eviction. At most `capacity` entries; a new entry beyond that replaces one chosen by the CLOCK
// policy (second chance), the usual approximation of least-recently-used order that needs no
// shared write on a hit: a hit sets its entry's `referenced` flag only when it is clear, and the
// clock hand evicts the first entry whose flag it finds clear, clearing the flags it passes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "op/entry_pool.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/kernel.hpp"
#include "thread_stripe.hpp"
#include "tileops/op.hpp"

namespace tileops {

// What a call reads of one tensor argument.
struct TensorFacts {
  bool defined = false;
  bool contiguous = false;
  DType dtype = DType::float32;
  Device device = Device::cpu();
  Shape shape;

  TensorFacts() = default;
  explicit TensorFacts(const Tensor& x);
  bool matches(const Tensor& x) const;
};

// One kernel_for lookup of a call, in the order forward made them.
struct KernelStep {
  int interface = -1;
  const CallSpecOps* ops = nullptr;
  std::optional<Device> device;
  std::shared_ptr<const CallSpec> call;
  BuiltSlotPtr built;  // held: the binding's pool may evict it while the call is cached
};

// One cached call; immutable once inserted (but for `referenced` and the chain link).
struct CachedCall {
  std::size_t hash = 0;
  boost::container::small_vector<TensorFacts, 6> inputs;
  TensorFacts out;
  CallCheck check;
  SignatureCall record;  // the fields the signature check fills
  boost::container::small_vector<KernelStep, 2> steps;  // in-tree kernels, in lookup order
  std::shared_ptr<const TargetKernel> target_kernel;     // the target's kernel, when a target serves the op
  std::uint64_t id = 0;                                  // unique in its cache, for pooled records

  std::atomic<CachedCall*> next{nullptr};  // the next entry of its bucket
  mutable std::atomic<bool> referenced{false};
  CachedCall* next_retired = nullptr;

  explicit CachedCall(const CallArgs& args);
  bool matches(const CallArgs& args) const;
  // Takes the check and the checked fields of the record of the call that made this entry.
  void keep(const CallCheck& checked, const SignatureCall& filled);
};

// The facts hash of a call's tensors, as CachedCall::hash holds it.
std::size_t call_facts_hash(const CallArgs& args);

class CallCache {
 public:
  // A thread's line of the cache: its calls in flight that may read entries (the low half of
  // `in_flight` counts those under epoch parity 0, the high half those under parity 1), its hit
  // and miss counts, and its pooled records.
  struct Stripe {
    static constexpr std::uint32_t kParityUnit[2] = {1, std::uint32_t{1} << 16};
    static constexpr std::uint32_t kParityMask[2] = {0xffff, 0xffff0000};
    std::atomic<std::uint32_t> in_flight{0};
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    struct Pooled {
      std::shared_ptr<SignatureCall> record;
      std::uint64_t filled_from = 0;  // the id of the entry whose checked fields it holds; 0: none
    };
    std::array<Pooled, 2> pool;
    std::uint8_t next_replaced = 0;
  };

  // Counts the calling thread in on its stripe, under the epoch's parity, while it reads an
  // entry. The reader that finds no other call in flight on the stripe owns the stripe's record
  // pool until it counts out.
  class Reader {
   public:
    Reader(const CallCache& cache, Stripe& s) : stripe_(&s) {
      // The parity is read again once counted in: a reader that raced with the epoch's advance
      // counts in again under the new parity, so that whoever is counted under the old one
      // began before the advance.
      for (;;) {
        parity_ = cache.epoch_.load(std::memory_order_seq_cst) & 1;
        const std::uint32_t before = s.in_flight.fetch_add(Stripe::kParityUnit[parity_], std::memory_order_seq_cst);
        if ((cache.epoch_.load(std::memory_order_seq_cst) & 1) == parity_) {
          owner_ = before == 0;
          return;
        }
        s.in_flight.fetch_sub(Stripe::kParityUnit[parity_], std::memory_order_release);
      }
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader() { release(); }
    void release() {
      if (stripe_ != nullptr) stripe_->in_flight.fetch_sub(Stripe::kParityUnit[parity_], std::memory_order_release);
      stripe_ = nullptr;
      owner_ = false;
    }
    bool owns_pool() const { return owner_; }

   private:
    Stripe* stripe_;
    unsigned parity_ = 0;
    bool owner_ = false;
  };

  explicit CallCache(std::size_t capacity);
  ~CallCache();
  CallCache(const CallCache&) = delete;
  CallCache& operator=(const CallCache&) = delete;

  // The calling thread's stripe.
  Stripe& stripe();

  // The entry for the facts of `args`, or nullptr; `reader` must count this thread in on
  // `stripe` for as long as the entry is used. Counts a hit or a miss on `stripe`.
  const CachedCall* find(const CallArgs& args, Stripe& stripe) const;

  // Adds `entry` unless an entry with its facts is there already, evicting one first when the
  // cache is full. Frees the retired entries whose grace period has ended.
  void insert(std::unique_ptr<CachedCall> entry);

  // Drops every entry (retired until its grace period ends) and zeroes the counters.
  void clear();

  // A record for one call, with `from`'s checked fields when given, and empty `stages` and
  // `kernels`. A repeat whose reader owns its stripe's pool takes a pooled record that nothing
  // else holds, whose checked fields are copied only when it last held another entry's.
  std::shared_ptr<SignatureCall> record(Stripe& stripe, const Reader& reader, const CachedCall* from);

  void set_capacity(std::size_t capacity);
  CacheCounters counters() const;

 private:
  std::atomic<CachedCall*>& bucket(std::size_t hash) const { return buckets_[hash & (buckets_.size() - 1)]; }
  // Under mutex_: take `entry` out of its bucket and retire it; pick the clock's victim;
  // free the entries whose grace period has ended, and start the next grace period.
  void retire(std::unique_ptr<CachedCall> entry);
  std::size_t victim();
  void reclaim();
  // True when no stripe has a call in flight under epoch parity `parity`.
  bool drained(unsigned parity) const;
  static void free_list(CachedCall* list);

  mutable Striped<Stripe> stripes_;
  mutable std::vector<std::atomic<CachedCall*>> buckets_;
  std::atomic<std::uint32_t> epoch_{0};  // advanced (under mutex_) when a grace period begins

  mutable std::mutex mutex_;  // guards everything below
  std::size_t capacity_;
  std::vector<std::unique_ptr<CachedCall>> clock_;  // the live entries, in clock order
  std::size_t hand_ = 0;                            // the next eviction candidate
  CachedCall* retired_ = nullptr;                   // evicted since the grace period began, owned, linked by next_retired
  CachedCall* grace_ = nullptr;                     // evicted before it: freed when the old parity drains
  unsigned grace_parity_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t evictions_ = 0;
};

}  // namespace tileops
