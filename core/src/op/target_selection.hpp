// Step 4 of a call, selecting the target, and undoing it when the selecting call fails.
#pragma once

#include <mutex>
#include <optional>

#include "op/op_impl.hpp"

namespace tileops {

// Step 4's state for one call: which binding the call runs under, and whether this call is
// the one selecting the target (holding the selection lock until it commits or undoes).
class Op::Impl::Selection {
 public:
  explicit Selection(Op::Impl& op) : op_(op) {}
  Selection(const Selection&) = delete;
  Selection& operator=(const Selection&) = delete;

  // Non-std exceptions are not handled: whatever step 4 chose stays, as after a normal call.
  ~Selection() { commit(); }

  // The binding the call runs under, selecting its target first when no call has yet.
  Binding& select(const std::optional<Device>& device);
  // The call completed: a selection it made stands.
  void commit();
  // The call failed: if it selected the target, forget the selection and everything built
  // under it, here and in every held sub-op.
  void undo() noexcept;

 private:
  void release();

  Op::Impl& op_;
  Binding* selecting_ = nullptr;  // the binding this call selects the target of, until it commits or undoes
  std::unique_lock<std::mutex> lock_;
};

}  // namespace tileops
