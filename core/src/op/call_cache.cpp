#include "op/call_cache.hpp"

#include <algorithm>
#include <new>

#include "tileops/extend/cache_key.hpp"

namespace tileops {
namespace {

// dst = src, element by element: for the few short entries of a check or record this is
// cheaper than the containers' own assignment.
template <class Vector>
void copy_into(Vector& dst, const Vector& src) {
  dst.clear();
  for (const auto& x : src) dst.push_back(x);
}

// The fields of a record that the signature check fills (the op base fills the rest).
void copy_checked_fields(const SignatureCall& src, SignatureCall& dst) {
  dst.op = src.op;
  copy_into(dst.indices, src.indices);
  dst.branch_key = src.branch_key;
  dst.device = src.device;
  copy_into(dst.tensors, src.tensors);
  copy_into(dst.traffic, src.traffic);
  copy_into(dst.written, src.written);
  dst.has_out = src.has_out;
}

bool same_facts(const TensorFacts& a, const TensorFacts& b) {
  return a.defined == b.defined &&
         (!a.defined || (a.contiguous == b.contiguous && a.dtype == b.dtype && a.device == b.device && a.shape == b.shape));
}

std::size_t tensor_hash(const Tensor& x) { return x.defined() ? x.facts_hash() : 0x9e37; }

// Bucket and clock storage grow with use up to these, not with the configured bound: a bound
// of a million must not cost every instance megabytes before its first call.
constexpr std::size_t kMaxBuckets = 4096;
constexpr std::size_t kInitialClock = 64;

std::size_t buckets_for(std::size_t capacity) {
  std::size_t n = 16;
  while (n < capacity && n < kMaxBuckets) n <<= 1;
  return n;
}

}  // namespace

TensorFacts::TensorFacts(const Tensor& x) : defined(x.defined()) {
  if (!defined) return;
  contiguous = x.is_contiguous();
  dtype = x.dtype();
  device = x.device();
  shape = x.shape();
}

bool TensorFacts::matches(const Tensor& x) const {
  if (!x.defined()) return !defined;
  const Shape& s = x.shape();
  return defined && x.dtype() == dtype && x.device() == device && s.size() == shape.size() &&
         std::equal(s.begin(), s.end(), shape.begin()) && x.is_contiguous() == contiguous;
}

std::size_t call_facts_hash(const CallArgs& args) {
  std::size_t h = tensor_hash(args.out);
  for (const Tensor& x : args.inputs) h = hash_combine(h, tensor_hash(x));
  return h;
}

CachedCall::CachedCall(const CallArgs& args) : hash(call_facts_hash(args)), out(args.out) {
  for (const Tensor& x : args.inputs) inputs.emplace_back(x);
}

bool CachedCall::matches(const CallArgs& args) const {
  if (args.inputs.size() != inputs.size() || !out.matches(args.out)) return false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].matches(args.inputs[i])) return false;
  }
  return true;
}

void CachedCall::keep(const CallCheck& checked, const SignatureCall& filled) {
  check = checked;
  copy_checked_fields(filled, record);
}

CallCache::CallCache(std::size_t capacity) : buckets_(buckets_for(capacity)), capacity_(capacity) {
  clock_.reserve(std::min(capacity, kInitialClock));
}

CallCache::~CallCache() {
  free_list(retired_);
  free_list(grace_);
}

void CallCache::free_list(CachedCall* list) {
  while (list != nullptr) delete std::exchange(list, list->next_retired);
}

CallCache::Stripe& CallCache::stripe() {
  return stripes_.mine();
}

const CachedCall* CallCache::find(const CallArgs& args, Stripe& s) const {
  const std::size_t h = call_facts_hash(args);
  // seq_cst loads: with the reader's count-in and the evictor's scan of the counts they make
  // the evictor see this call in flight, or this call not see the evicted entry.
  for (const CachedCall* e = bucket(h).load(std::memory_order_seq_cst); e != nullptr;
       e = e->next.load(std::memory_order_seq_cst)) {
    if (e->hash == h && e->matches(args)) {
      if (!e->referenced.load(std::memory_order_relaxed)) e->referenced.store(true, std::memory_order_relaxed);
      s.hits.fetch_add(1, std::memory_order_relaxed);
      return e;
    }
  }
  s.misses.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void CallCache::insert(std::unique_ptr<CachedCall> entry) {
  std::lock_guard lock(mutex_);
  std::atomic<CachedCall*>& head = bucket(entry->hash);
  for (const CachedCall* e = head.load(std::memory_order_relaxed); e != nullptr; e = e->next.load(std::memory_order_relaxed)) {
    if (e->hash != entry->hash || e->inputs.size() != entry->inputs.size() || !same_facts(e->out, entry->out)) continue;
    if (std::equal(e->inputs.begin(), e->inputs.end(), entry->inputs.begin(), same_facts)) return;  // another call was first
  }
  entry->id = next_id_++;
  CachedCall* added = entry.get();
  // The victim leaves its bucket before the new entry joins one: it may be the same bucket.
  if (clock_.size() < capacity_) {
    try {
      clock_.push_back(std::move(entry));
    } catch (const std::bad_alloc&) {
      return;  // no memory to keep it: this call stays uncached
    }
  } else {
    const std::size_t slot = victim();
    retire(std::exchange(clock_[slot], std::move(entry)));
    ++evictions_;
    hand_ = (slot + 1) % clock_.size();
  }
  added->next.store(head.load(std::memory_order_relaxed), std::memory_order_relaxed);
  head.store(added, std::memory_order_release);
  reclaim();
}

std::size_t CallCache::victim() {
  for (;;) {
    if (hand_ >= clock_.size()) hand_ = 0;
    if (!clock_[hand_]->referenced.exchange(false, std::memory_order_relaxed)) return hand_;
    ++hand_;
  }
}

void CallCache::retire(std::unique_ptr<CachedCall> entry) {
  std::atomic<CachedCall*>* link = &bucket(entry->hash);
  while (link->load(std::memory_order_relaxed) != entry.get()) link = &link->load(std::memory_order_relaxed)->next;
  link->store(entry->next.load(std::memory_order_relaxed), std::memory_order_seq_cst);
  entry->next_retired = retired_;
  retired_ = entry.release();
}

bool CallCache::drained(unsigned parity) const {
  bool in_flight = false;
  stripes_.for_each([&](const Stripe& s) {
    in_flight = in_flight || (s.in_flight.load(std::memory_order_seq_cst) & Stripe::kParityMask[parity]) != 0;
  });
  return !in_flight;
}

// A call that can still read an entry of `grace_` counted in under `grace_parity_` before the
// epoch advanced past it (a later one rereads the parity and counts in under the new one), and
// the entry had left its bucket before the advance; so once that parity drains, none can.
void CallCache::reclaim() {
  if (grace_ != nullptr && drained(grace_parity_)) free_list(std::exchange(grace_, nullptr));
  if (grace_ != nullptr || retired_ == nullptr) return;
  grace_ = std::exchange(retired_, nullptr);
  grace_parity_ = epoch_.load(std::memory_order_relaxed) & 1;
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (drained(grace_parity_)) free_list(std::exchange(grace_, nullptr));
}

void CallCache::clear() {
  std::lock_guard lock(mutex_);
  for (auto& entry : clock_) retire(std::move(entry));
  clock_.clear();
  hand_ = 0;
  evictions_ = 0;
  stripes_.for_each([](Stripe& s) {
    s.hits.store(0, std::memory_order_relaxed);
    s.misses.store(0, std::memory_order_relaxed);
  });
  reclaim();
}

void CallCache::set_capacity(std::size_t capacity) {
  std::lock_guard lock(mutex_);
  while (clock_.size() > capacity) {
    const std::size_t slot = victim();
    retire(std::move(clock_[slot]));
    clock_.erase(clock_.begin() + static_cast<std::ptrdiff_t>(slot));
    ++evictions_;
  }
  capacity_ = capacity;
  reclaim();
}

CacheCounters CallCache::counters() const {
  CacheCounters c;
  stripes_.for_each([&](const Stripe& s) {
    c.hits += s.hits.load(std::memory_order_relaxed);
    c.misses += s.misses.load(std::memory_order_relaxed);
  });
  std::lock_guard lock(mutex_);
  c.evictions = evictions_;
  c.entries = clock_.size();
  c.capacity = capacity_;
  return c;
}

std::shared_ptr<SignatureCall> CallCache::record(Stripe& s, const Reader& reader, const CachedCall* from) {
  if (from != nullptr && reader.owns_pool()) {
    Stripe::Pooled* pooled = nullptr;
    for (Stripe::Pooled& p : s.pool) {
      if (p.record && p.record.use_count() == 1) {
        pooled = &p;
        break;
      }
    }
    if (pooled == nullptr) {
      pooled = &s.pool[s.next_replaced];
      s.next_replaced = static_cast<std::uint8_t>((s.next_replaced + 1) % s.pool.size());
      pooled->record = std::make_shared<SignatureCall>();
      pooled->filled_from = 0;
    }
    // The reference is taken before the record is written: libstdc++ increments the count with
    // an acquire-release read-modify-write, which reads what the last other owner's releasing
    // decrement wrote, so its reads of the record happen before these writes.
    std::shared_ptr<SignatureCall> out = pooled->record;
    SignatureCall& r = *out;
    r.stages.clear();
    r.kernels.clear();
    if (pooled->filled_from != from->id) {
      copy_checked_fields(from->record, r);
      pooled->filled_from = from->id;
    }
    return out;
  }
  auto r = std::make_shared<SignatureCall>();
  if (from != nullptr) copy_checked_fields(from->record, *r);
  return r;
}

}  // namespace tileops
