// The successful call checks of one construction state, by the facts of the call's tensors.
// Beyond the state, a call check reads only the presence, dtype, shape and device of each
// tensor argument and whether it is contiguous (where declared), unless the accelerator's
// current device decides the call device; such calls are not remembered. So a call whose
// tensors have the facts of a remembered one gets that one's CallCheck and record replayed
// instead of checked again.
#pragma once

#include <algorithm>
#include <atomic>
#include <mutex>

#include <boost/container/small_vector.hpp>

#include "signature/compiled_plan.hpp"

namespace tileops::detail {

// What the call check reads of one tensor argument.
struct TensorFacts {
  bool defined = false;
  DType dtype = DType::float32;
  Device device = Device::cpu();
  Shape shape;

  explicit TensorFacts(const Tensor& x);
  // `x` has these facts, and is contiguous when `contiguous` (a successful check required it).
  bool matches(const Tensor& x, bool contiguous) const {
    if (!x.defined()) return !defined;
    const Shape& s = x.shape();
    return defined && x.dtype() == dtype && x.device() == device && s.size() == shape.size() &&
           std::equal(s.begin(), s.end(), shape.begin()) && (!contiguous || x.is_contiguous());
  }
  friend bool operator==(const TensorFacts&, const TensorFacts&) = default;
};

class CallMemo {
 public:
  // A remembered check; immutable once published.
  struct Entry {
    boost::container::small_vector<TensorFacts, 6> inputs;
    TensorFacts out;
    CallCheck check;
    SignatureCall record;  // the fields check_call fills
    const Entry* next = nullptr;

    Entry(const CallArgs& args, const CallCheck& check, const SignatureCall& record);
    // Sets `check`, and the fields of `record` that check_call fills, to this entry's.
    void replay(CallCheck& check, SignatureCall& record) const;
  };

  // Calls with more combinations of tensor facts than this are checked in full every time.
  static constexpr int kMaxEntries = 4;

  CallMemo() = default;
  CallMemo(const CallMemo&) = delete;
  CallMemo& operator=(const CallMemo&) = delete;
  ~CallMemo();

  // The entry of a call with the tensor facts of `args` (whose input count `plan` checked),
  // or nullptr. Takes no lock.
  const Entry* find(const CompiledPlan& plan, const CallArgs& args) const {
    const bool out_contiguous =
        plan.out_output_ >= 0 && plan.tensors_[static_cast<std::size_t>(plan.output_tensor(plan.out_output_))].contiguous;
    for (const Entry* e = head_.load(std::memory_order_acquire); e != nullptr; e = e->next) {
      if (!e->out.matches(args.out, out_contiguous)) continue;
      bool all = true;
      for (int i = 0; i < plan.n_inputs_ && all; ++i) {
        const auto k = static_cast<std::size_t>(i);
        all = e->inputs[k].matches(args.inputs[k], plan.input(i).contiguous);
      }
      if (all) return e;
    }
    return nullptr;
  }

  // Remembers the successful check of `args`, unless it is remembered already or
  // kMaxEntries are.
  void remember(const CallArgs& args, const CallCheck& check, const SignatureCall& record);

 private:
  std::atomic<const Entry*> head_{nullptr};
  std::mutex mutex_;  // serialises remember
  std::atomic<int> size_{0};  // also read before taking the mutex: a miss on a full memo takes no lock
};

}  // namespace tileops::detail
