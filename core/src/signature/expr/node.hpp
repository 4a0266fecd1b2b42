// Compiled manifest expressions: a tree whose names are resolved to check-state slots and tensor
// ids and whose kinds are checked. Evaluating one reads no names and parses nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "signature/expr/kind.hpp"
#include "signature/expr/val.hpp"

namespace tileops::expr {

enum class ArithOp : std::uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CmpOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

enum class NodeOp : std::uint8_t {
  Const,        // value
  Slot,         // the value of slot `index`
  Present,      // whether tensor `index` is present
  PresentSlot,  // whether slot `index` (a Maybe parameter) is not None
  TensorBytes,  // the byte size of tensor `index` (roofline formulas only)
  Neg,          // -kids[0]
  Not,          // not kids[0]
  Arith,        // kids[0] <steps[0]> kids[1] <steps[1]> kids[2] ..., folded left to right
  And,          // kids, short-circuit
  Or,           // kids, short-circuit
  Compare,      // kids[0] <sub: CmpOp> kids[1]
  InSet,        // kids[0] equals one of kids[1..]; sub = 1 negates ("not in")
  InList,       // kids[0] is an element of the list kids[1]; sub = 1 negates
  IfElse,       // kids: condition, value if true, value if false
  List,         // items kids; star[i]: kids[i] is a list expanded in place
  MaybeValue,   // kids[0].value: the value of a present Maybe
  Index,        // kids[0][kids[1]]
  Call,         // primitive `index` applied to kids (an unset Val for an omitted argument)
};

struct Node {
  NodeOp op = NodeOp::Const;
  Kind kind;
  std::uint8_t sub = 0;
  int index = -1;
  Val value;
  std::vector<std::uint8_t> star;
  std::vector<ArithOp> steps;
  std::vector<Node> kids;
};

// One compiled expression and what it reads.
struct Expr {
  std::string source;        // as the manifest wrote it
  Node root;
  std::vector<int> slots;    // slots it may read, sorted and unique
  std::vector<int> tensors;  // tensors whose presence or size it may read, sorted and unique
};

}  // namespace tileops::expr
