#include "signature/expr/eval.hpp"

#include <cmath>

#include "signature/expr/primitives.hpp"

namespace tileops::expr {
namespace {

[[noreturn]] void overflow() { throw ValueError("integer overflow"); }

std::int64_t int_arith(ArithOp op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  switch (op) {
    case ArithOp::Add:
      if (__builtin_add_overflow(a, b, &r)) overflow();
      return r;
    case ArithOp::Sub:
      if (__builtin_sub_overflow(a, b, &r)) overflow();
      return r;
    case ArithOp::Mul:
      if (__builtin_mul_overflow(a, b, &r)) overflow();
      return r;
    case ArithOp::FloorDiv: {
      if (b == 0) throw ValueError("integer division by zero");
      if (a == INT64_MIN && b == -1) overflow();
      std::int64_t q = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --q;
      return q;
    }
    case ArithOp::Mod: {
      if (b == 0) throw ValueError("integer modulo by zero");
      if (b == -1) return 0;
      std::int64_t m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return m;
    }
    case ArithOp::Pow: {
      if (b < 0) throw ValueError("negative exponent " + std::to_string(b) + " of an integer");
      // Bases 0, 1 and -1 never overflow; any other base overflows within 63 factors.
      if (a == 0) return b == 0 ? 1 : 0;
      if (a == 1) return 1;
      if (a == -1) return b % 2 == 0 ? 1 : -1;
      r = 1;
      for (std::int64_t k = 0; k < b; ++k) {
        if (__builtin_mul_overflow(r, a, &r)) overflow();
      }
      return r;
    }
    case ArithOp::Div: break;
  }
  return 0;
}

double real_arith(ArithOp op, double a, double b) {
  switch (op) {
    case ArithOp::Add: return a + b;
    case ArithOp::Sub: return a - b;
    case ArithOp::Mul: return a * b;
    case ArithOp::Div:
      if (b == 0) throw ValueError("division by zero");
      return a / b;
    case ArithOp::FloorDiv:
      if (b == 0) throw ValueError("division by zero");
      return std::floor(a / b);
    case ArithOp::Mod: {
      if (b == 0) throw ValueError("modulo by zero");
      double m = std::fmod(a, b);
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return m;
    }
    case ArithOp::Pow: return std::pow(a, b);
  }
  return 0;
}

bool compare(CmpOp op, const Val& a, const Val& b) {
  switch (op) {
    case CmpOp::Eq: return val_equal(a, b);
    case CmpOp::Ne: return !val_equal(a, b);
    default: break;
  }
  int order = 0;
  if (a.tag == Val::Tag::integer && b.tag == Val::Tag::integer) {
    order = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  } else {
    const double x = a.number();
    const double y = b.number();
    if (std::isnan(x) || std::isnan(y)) return false;
    order = x < y ? -1 : x > y ? 1 : 0;
  }
  switch (op) {
    case CmpOp::Lt: return order < 0;
    case CmpOp::Le: return order <= 0;
    case CmpOp::Gt: return order > 0;
    case CmpOp::Ge: return order >= 0;
    default: return false;
  }
}

Val evaluate_arith(const Node& n, const Env& env);
bool evaluate_comparison(const Node& n, const Env& env);
Val evaluate_index(const Node& n, const Env& env);
Val evaluate_call(const Node& n, const Env& env);
Val evaluate_list_value(const Node& n, const Env& env);

}  // namespace

bool evaluate_bool(const Node& node, const Env& env) {
  if (const Val* ref = slot_ref(node, env)) return ref->b;
  return evaluate(node, env).b;
}

void evaluate_list(const Node& n, const Env& env, Shape& out) {
  if (n.op != NodeOp::List) {
    const Val v = evaluate(n, env);
    out.insert(out.end(), v.list.begin(), v.list.end());
    return;
  }
  for (std::size_t i = 0; i < n.kids.size(); ++i) {
    const Node& kid = n.kids[i];
    if (n.star[i]) {
      if (const Val* ref = slot_ref(kid, env)) {
        for (std::int64_t d : ref->list) out.push_back(d);
      } else {
        evaluate_list(kid, env, out);
      }
    } else if (const Val* ref = slot_ref(kid, env)) {
      out.push_back(ref->i);
    } else {
      out.push_back(evaluate(kid, env).i);
    }
  }
}

Val evaluate(const Node& n, const Env& env) {
  switch (n.op) {
    case NodeOp::Const: return n.value;
    case NodeOp::Slot: {
      const Val& v = env.slots[static_cast<std::size_t>(n.index)];
      if (!v.known()) throw UnsetSlotError(n.index);
      return v;
    }
    case NodeOp::Present: return Val::boolean(env.present[static_cast<std::size_t>(n.index)] != 0);
    case NodeOp::PresentSlot: {
      const Val& v = env.slots[static_cast<std::size_t>(n.index)];
      if (!v.known()) throw UnsetSlotError(n.index);
      return Val::boolean(!v.is_none());
    }
    case NodeOp::TensorBytes: return Val::integer(env.tensor_bytes[static_cast<std::size_t>(n.index)]);
    case NodeOp::Neg: {
      Val v = evaluate(n.kids[0], env);
      if (v.tag == Val::Tag::integer) {
        if (v.i == INT64_MIN) overflow();
        v.i = -v.i;
      } else {
        v.f = -v.f;
      }
      return v;
    }
    case NodeOp::Not: return Val::boolean(!evaluate_bool(n.kids[0], env));
    case NodeOp::Arith: return evaluate_arith(n, env);
    case NodeOp::And:
      for (const Node& k : n.kids) {
        if (!evaluate_bool(k, env)) return Val::boolean(false);
      }
      return Val::boolean(true);
    case NodeOp::Or:
      for (const Node& k : n.kids) {
        if (evaluate_bool(k, env)) return Val::boolean(true);
      }
      return Val::boolean(false);
    case NodeOp::Compare:
    case NodeOp::InSet:
    case NodeOp::InList: return Val::boolean(evaluate_comparison(n, env));
    case NodeOp::IfElse: return evaluate(evaluate_bool(n.kids[0], env) ? n.kids[1] : n.kids[2], env);
    case NodeOp::List: return evaluate_list_value(n, env);
    case NodeOp::MaybeValue: {
      Val v = evaluate(n.kids[0], env);
      if (v.is_none()) throw ValueError("'.value' of None");
      return v;
    }
    case NodeOp::Index: return evaluate_index(n, env);
    case NodeOp::Call: return evaluate_call(n, env);
  }
  return Val();
}

namespace {

// The cases of evaluate() that hold values while they recurse, each in a frame of its own so
// that evaluate() itself, on the recursion path of every level of nesting, stays small.
[[gnu::noinline]] Val evaluate_arith(const Node& n, const Env& env) {
  Val acc = evaluate(n.kids[0], env);
  for (std::size_t i = 0; i < n.steps.size(); ++i) {
    const Val b = evaluate(n.kids[i + 1], env);
    const ArithOp op = n.steps[i];
    if (op != ArithOp::Div && acc.tag == Val::Tag::integer && b.tag == Val::Tag::integer) {
      acc.set_integer(int_arith(op, acc.i, b.i));
    } else {
      acc.set_real(real_arith(op, acc.number(), b.number()));
    }
  }
  return acc;
}

[[gnu::noinline]] bool evaluate_comparison(const Node& n, const Env& env) {
  const Val x = evaluate(n.kids[0], env);
  if (n.op == NodeOp::Compare) return compare(static_cast<CmpOp>(n.sub), x, evaluate(n.kids[1], env));
  bool found = false;
  if (n.op == NodeOp::InSet) {
    for (std::size_t i = 1; i < n.kids.size() && !found; ++i) found = val_equal(x, evaluate(n.kids[i], env));
  } else {
    const Val list = evaluate(n.kids[1], env);
    for (std::int64_t d : list.list) found = found || static_cast<double>(d) == x.number();
  }
  return found != (n.sub != 0);
}

[[gnu::noinline]] Val evaluate_index(const Node& n, const Env& env) {
  const Val list = evaluate(n.kids[0], env);
  const std::int64_t given = evaluate(n.kids[1], env).i;
  const auto size = static_cast<std::int64_t>(list.list.size());
  const std::int64_t i = given < 0 ? given + size : given;
  if (i < 0 || i >= size) throw ValueError("index " + std::to_string(given) + " is out of range for " + shape_str(list.list));
  return Val::integer(list.list[static_cast<std::size_t>(i)]);
}

[[gnu::noinline]] Val evaluate_call(const Node& n, const Env& env) {
  boost::container::small_vector<Val, 4> args;
  for (const Node& k : n.kids) args.push_back(evaluate(k, env));
  return primitive(n.index).eval({args.data(), args.size()});
}

[[gnu::noinline]] Val evaluate_list_value(const Node& n, const Env& env) {
  Val out = Val::shape({});
  evaluate_list(n, env, out.list);
  return out;
}

}  // namespace

}  // namespace tileops::expr
