// Evaluates compiled expressions against a frame of slot values and tensor facts.
#pragma once

#include <cstdint>
#include <span>

#include "signature/expr/node.hpp"
#include "tileops/errors.hpp"

namespace tileops::expr {

// What an expression reads besides constants: the frame's slots and, per tensor id, whether
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

// evaluate() for a node of kind Bool.
bool evaluate_bool(const Node& node, const Env& env);

}  // namespace tileops::expr
