#include "signature/call_memo.hpp"

#include <memory>

namespace tileops::detail {

TensorFacts::TensorFacts(const Tensor& x) : defined(x.defined()) {
  if (!defined) return;
  dtype = x.dtype();
  device = x.device();
  shape = x.shape();
}

namespace {

// dst = src, element by element: for the few short entries of a check or record this is
// cheaper than the containers' own assignment.
template <class Vector>
void copy_into(Vector& dst, const Vector& src) {
  dst.clear();
  for (const auto& x : src) dst.push_back(x);
}

// The fields of a record that check_call fills (the op base fills the rest).
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

}  // namespace

CallMemo::Entry::Entry(const CallArgs& args, const CallCheck& check, const SignatureCall& record)
    : out(args.out), check(check) {
  for (const Tensor& x : args.inputs) inputs.emplace_back(x);
  copy_checked_fields(record, this->record);
}

void CallMemo::Entry::replay(CallCheck& check, SignatureCall& record) const {
  check.device = this->check.device;
  check.empty_write = this->check.empty_write;
  check.effect_branch = this->check.effect_branch;
  copy_into(check.written, this->check.written);
  copy_into(check.contiguous, this->check.contiguous);
  copy_into(check.outputs, this->check.outputs);
  copy_checked_fields(this->record, record);
}

CallMemo::~CallMemo() {
  const Entry* e = head_.load(std::memory_order_relaxed);
  while (e != nullptr) {
    const Entry* next = e->next;
    delete e;
    e = next;
  }
}

void CallMemo::remember(const CallArgs& args, const CallCheck& check, const SignatureCall& record) {
  if (size_.load(std::memory_order_relaxed) == kMaxEntries) return;
  std::lock_guard lock(mutex_);
  if (size_.load(std::memory_order_relaxed) == kMaxEntries) return;
  auto entry = std::make_unique<Entry>(args, check, record);
  for (const Entry* e = head_.load(std::memory_order_relaxed); e != nullptr; e = e->next) {
    if (e->out == entry->out && e->inputs == entry->inputs) return;  // another thread was first
  }
  entry->next = head_.load(std::memory_order_relaxed);
  head_.store(entry.release(), std::memory_order_release);
  size_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tileops::detail
