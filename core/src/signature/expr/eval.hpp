// Evaluates compiled expressions against the check state's slot values and tensor facts.
#pragma once

#include <cstdint>
#include <span>

#include "signature/expr/node.hpp"
#include "tileops/errors.hpp"

namespace tileops::expr {

// What an expression reads besides constants: the check state's slots and, per tensor id, whether
// the tensor is present and its size in bytes (roofline formulas only).
struct Env {
  std::span<const Val> slots;
  std::span<const std::uint8_t> present;
  std::span<const std::int64_t> tensor_bytes;
};

// Thrown when an expression reads a slot that holds no value on this call (an index the call
// did not solve). Callers turn it into a message naming the slot.
class UnsetSlotError : public ValueError {
 public:
  explicit UnsetSlotError(int slot) : ValueError("slot " + std::to_string(slot) + " is not solved"), slot_(slot) {}
  int slot() const { return slot_; }

 private:
  int slot_;
};

// The value of `node`. Throws UnsetSlotError, or ValueError for a value outside an operation's
// domain (division by zero, overflow, a primitive's domain error, .value of None).
Val evaluate(const Node& node, const Env& env);

// The slot value a Slot node reads, without copying it; nullptr for any other node. Throws
// UnsetSlotError for an unset slot.
inline const Val* slot_ref(const Node& node, const Env& env) {
  if (node.op != NodeOp::Slot) return nullptr;
  const Val& v = env.slots[static_cast<std::size_t>(node.index)];
  if (!v.known()) throw UnsetSlotError(node.index);
  return &v;
}

// Appends the values of a list node (kind Seq[Int]) to `out` without building a Val.
void evaluate_list(const Node& node, const Env& env, Shape& out);

// evaluate() for a node of kind Bool.
bool evaluate_bool(const Node& node, const Env& env);

}  // namespace tileops::expr
