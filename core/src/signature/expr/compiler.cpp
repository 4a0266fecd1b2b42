#include "signature/expr/compiler.hpp"

#include <algorithm>

#include "signature/expr/intern.hpp"
#include "signature/expr/parser.hpp"
#include "signature/expr/primitives.hpp"
#include "tileops/errors.hpp"

namespace tileops::expr {
namespace {

using Narrowed = std::vector<int>;  // Maybe slots known to be present in the current branch

[[noreturn]] void fail(const Ast& at, const std::string& what) {
  throw ValueError("'" + to_source(at) + "': " + what);
}

bool canonical_dtype_name(const std::string& name, DType& out) {
  return try_parse_dtype(name, out) && dtype_name(out) == name;
}

class Compiler {
 public:
  Compiler(const Scope& scope, const CompileOptions& options) : scope_(scope), options_(options) {}

  Expr run(const Ast& ast, std::string source) {
    Expr e;
    e.root = compile(ast, {});
    std::sort(slots_.begin(), slots_.end());
    slots_.erase(std::unique(slots_.begin(), slots_.end()), slots_.end());
    std::sort(tensors_.begin(), tensors_.end());
    tensors_.erase(std::unique(tensors_.begin(), tensors_.end()), tensors_.end());
    e.slots = std::move(slots_);
    e.tensors = std::move(tensors_);
    e.source = std::move(source);
    return e;
  }

 private:
  const Scope& scope_;
  const CompileOptions& options_;
  std::vector<int> slots_;
  std::vector<int> tensors_;

  static Node make(NodeOp op, Kind kind) {
    Node n;
    n.op = op;
    n.kind = kind;
    return n;
  }

  static Node constant(Val v, Kind kind) {
    Node n = make(NodeOp::Const, kind);
    n.value = std::move(v);
    return n;
  }

  // The Maybe slot `present(name)` tests, or -1 when `a` is not such a call.
  int present_slot(const Ast& a) const {
    if (a.type != AstType::Call || a.kids.size() != 2 || a.kids[0].type != AstType::Name ||
        a.kids[0].text != "present" || a.kids[1].type != AstType::Name) {
      return -1;
    }
    const NameInfo* info = scope_.find(a.kids[1].text);
    return info != nullptr && info->what == NameInfo::What::Slot && info->kind.maybe ? info->index : -1;
  }

  int absent_slot(const Ast& a) const {
    return a.type == AstType::Unary && a.text == "not" ? present_slot(a.kids[0]) : -1;
  }

  static Narrowed with(Narrowed n, int slot) {
    if (slot >= 0) n.push_back(slot);
    return n;
  }

  // The dispatch stays a small frame (every case is a function of its own), since it is on the
  // recursion path of every level of nesting.
  Node compile(const Ast& a, const Narrowed& narrowed) {
    switch (a.type) {
      case AstType::Int:
      case AstType::Float:
      case AstType::Str:
      case AstType::Bool:
      case AstType::None: return literal(a);
      case AstType::Name: return name(a);
      case AstType::Unary: return unary(a, narrowed);
      case AstType::Binary: return arith(a, narrowed);
      case AstType::And:
      case AstType::Or: return boolean(a, narrowed);
      case AstType::Compare: return compare_chain(a, narrowed);
      case AstType::IfElse: return if_else(a, narrowed);
      case AstType::List:
      case AstType::Tuple: return list(a, narrowed);
      case AstType::Star: fail(a, "'*' expansion is allowed only inside a list display such as a shape");
      case AstType::Call: return call(a, narrowed);
      case AstType::Keyword: fail(a, "a keyword argument outside a call");
      case AstType::Attr: return attribute(a, narrowed);
      case AstType::Subscript: return subscript(a, narrowed);
    }
    fail(a, "not an expression");
  }

  [[gnu::noinline]] static Node literal(const Ast& a) {
    switch (a.type) {
      case AstType::Int: return constant(Val::integer(a.ival), kind_of(Base::Int));
      case AstType::Float: return constant(Val::real(a.fval), kind_of(Base::Float));
      case AstType::Str: return constant(Val::str(intern(a.text)), kind_of(Base::Str));
      case AstType::Bool: return constant(Val::boolean(a.ival != 0), kind_of(Base::Bool));
      default: return constant(Val::none(), kind_of(Base::None));
    }
  }

  [[gnu::noinline]] Node name(const Ast& a) {
    const NameInfo* info = scope_.find(a.text);
    if (info == nullptr) {
      DType d;
      if (canonical_dtype_name(a.text, d)) return constant(Val::dtype(d), kind_of(Base::DType));
      if (find_primitive(a.text) >= 0 || a.text == "present" || a.text == "bytes") {
        fail(a, "'" + a.text + "' is a primitive; call it");
      }
      fail(a, "unknown name '" + a.text + "'");
    }
    if (info->what == NameInfo::What::Tensor) {
      fail(a, "'" + a.text + "' is a tensor; an expression may only test present(" + a.text +
                  ") or, in a roofline, read bytes(" + a.text + ")");
    }
    slots_.push_back(info->index);
    Node n = make(NodeOp::Slot, info->kind);
    n.index = info->index;
    return n;
  }

  [[gnu::noinline]] Node unary(const Ast& a, const Narrowed& narrowed) {
    Node operand = compile(a.kids[0], narrowed);
    if (a.text == "not") {
      expect_kind(a.kids[0], operand, kind_of(Base::Bool));
      Node n = make(NodeOp::Not, kind_of(Base::Bool));
      n.kids.push_back(std::move(operand));
      return n;
    }
    if (!is_numeric(operand.kind)) fail(a, "unary '" + a.text + "' needs a number, not " + kind_name(operand.kind));
    if (a.text == "+") return operand;
    Node n = make(NodeOp::Neg, operand.kind);
    n.kids.push_back(std::move(operand));
    return n;
  }

  void expect_kind(const Ast& at, const Node& n, Kind want) const {
    if (!kind_accepts(want, n.kind)) {
      if (n.kind.maybe && kind_accepts(want, Kind{n.kind.base, false})) {
        fail(at, "is " + kind_name(n.kind) + "; test present(...) and read .value");
      }
      fail(at, "must be " + kind_name(want) + ", not " + kind_name(n.kind));
    }
  }

  static ArithOp arith_op(const std::string& text) {
    if (text == "-") return ArithOp::Sub;
    if (text == "*") return ArithOp::Mul;
    if (text == "/") return ArithOp::Div;
    if (text == "//") return ArithOp::FloorDiv;
    if (text == "%") return ArithOp::Mod;
    if (text == "**") return ArithOp::Pow;
    return ArithOp::Add;
  }

  static Kind arith_kind(ArithOp op, Kind lhs, Kind rhs) {
    if (op == ArithOp::Div) return kind_of(Base::Float);
    if (lhs.base == Base::Int && rhs.base == Base::Int) return kind_of(Base::Int);
    if (lhs.base == Base::Float || rhs.base == Base::Float) return kind_of(Base::Float);
    return kind_of(Base::Num);
  }

  [[gnu::noinline]] Node arith(const Ast& a, const Narrowed& narrowed) {
    Node n = make(NodeOp::Arith, Kind{});
    for (std::size_t i = 0; i < a.kids.size(); ++i) {
      Node side = compile(a.kids[i], narrowed);
      const std::string& op = a.ops[i == 0 ? 0 : i - 1];
      if (!is_numeric(side.kind)) {
        if (side.kind.maybe) fail(a.kids[i], "is " + kind_name(side.kind) + "; test present(...) and read .value");
        fail(a, "'" + op + "' needs numbers, but '" + to_source(a.kids[i]) + "' is " + kind_name(side.kind));
      }
      if (i == 0) {
        n.kind = side.kind;
      } else {
        n.steps.push_back(arith_op(op));
        n.kind = arith_kind(n.steps.back(), n.kind, side.kind);
      }
      n.kids.push_back(std::move(side));
    }
    return n;
  }

  [[gnu::noinline]] Node boolean(const Ast& a, const Narrowed& narrowed) {
    const bool is_and = a.type == AstType::And;
    Node n = make(is_and ? NodeOp::And : NodeOp::Or, kind_of(Base::Bool));
    Narrowed current = narrowed;
    for (const Ast& kid : a.kids) {
      Node k = compile(kid, current);
      expect_kind(kid, k, kind_of(Base::Bool));
      n.kids.push_back(std::move(k));
      current = with(std::move(current), is_and ? present_slot(kid) : absent_slot(kid));
    }
    return n;
  }

  [[gnu::noinline]] Node compare_chain(const Ast& a, const Narrowed& narrowed) {
    if (a.ops.size() == 1) return compare(a, a.ops[0], a.kids[0], a.kids[1], narrowed);
    Node n = make(NodeOp::And, kind_of(Base::Bool));
    for (std::size_t i = 0; i < a.ops.size(); ++i) n.kids.push_back(compare(a, a.ops[i], a.kids[i], a.kids[i + 1], narrowed));
    return n;
  }

  // The enum or dtype set of a bare name, for literal checks.
  const NameInfo* constrained_name(const Ast& a) const {
    if (a.type != AstType::Name) return nullptr;
    const NameInfo* info = scope_.find(a.text);
    return info != nullptr && !info->members.empty() ? info : nullptr;
  }

  void check_literal(const Ast& whole, const Ast& name_side, const Node& literal) const {
    const NameInfo* info = constrained_name(name_side);
    if (info == nullptr || literal.op != NodeOp::Const) return;
    std::string text;
    bool quoted = false;
    if (literal.value.tag == Val::Tag::str) {
      text = std::string(literal.value.s);
      quoted = info->kind.base == Base::Str;
    } else if (literal.value.tag == Val::Tag::dtype) {
      text = std::string(dtype_name(literal.value.d));
    } else {
      return;
    }
    if (std::find(info->members.begin(), info->members.end(), text) == info->members.end()) {
      const std::string q = quoted ? "'" : "";
      std::string set;
      for (const auto& m : info->members) set += (set.empty() ? "" : " | ") + q + m + q;
      fail(whole, "'" + text + "' is not a value of " + name_side.text + " (" + set + ")");
    }
  }

  static bool comparable(Kind x, Kind y) {
    if (x.maybe || y.maybe) return false;
    if (is_numeric(x) && is_numeric(y)) return true;
    const auto str_like = [](Kind k) { return k.base == Base::Str || k.base == Base::DType; };
    if (str_like(x) && str_like(y)) return true;
    return x.base == y.base && (x.base == Base::Bool || x.base == Base::IntList || x.base == Base::Device);
  }

  Node compare(const Ast& whole, const std::string& op, const Ast& la, const Ast& ra, const Narrowed& narrowed) {
    if (la.type == AstType::None || ra.type == AstType::None) {
      fail(whole, "comparing with None is not in the expression language; test present(...)");
    }
    Node lhs = compile(la, narrowed);
    if (op == "in" || op == "not in") return membership(whole, op, la, std::move(lhs), ra, narrowed);
    Node rhs = compile(ra, narrowed);
    if (!comparable(lhs.kind, rhs.kind)) {
      const bool maybe_left = lhs.kind.maybe;
      if ((maybe_left || rhs.kind.maybe) && comparable(Kind{lhs.kind.base, false}, Kind{rhs.kind.base, false})) {
        fail(maybe_left ? la : ra, "is " + kind_name(maybe_left ? lhs.kind : rhs.kind) + "; test present(...) and read .value");
      }
      fail(whole, "cannot compare " + kind_name(lhs.kind) + " with " + kind_name(rhs.kind));
    }
    const bool ordering = op != "==" && op != "!=";
    if (ordering && !(is_numeric(lhs.kind) && is_numeric(rhs.kind))) {
      fail(whole, "'" + op + "' orders numbers only, not " + kind_name(lhs.kind));
    }
    check_literal(whole, la, rhs);
    check_literal(whole, ra, lhs);
    CmpOp c = CmpOp::Eq;
    if (op == "!=") c = CmpOp::Ne;
    else if (op == "<") c = CmpOp::Lt;
    else if (op == "<=") c = CmpOp::Le;
    else if (op == ">") c = CmpOp::Gt;
    else if (op == ">=") c = CmpOp::Ge;
    Node n = make(NodeOp::Compare, kind_of(Base::Bool));
    n.sub = static_cast<std::uint8_t>(c);
    n.kids.push_back(std::move(lhs));
    n.kids.push_back(std::move(rhs));
    return n;
  }

  Node membership(const Ast& whole, const std::string& op, const Ast& la, Node lhs, const Ast& ra,
                  const Narrowed& narrowed) {
    Node n;
    if (ra.type == AstType::Tuple || ra.type == AstType::List) {
      n = make(NodeOp::InSet, kind_of(Base::Bool));
      n.kids.push_back(std::move(lhs));
      for (const Ast& item : ra.kids) {
        if (item.type == AstType::Star) fail(item, "'*' is not allowed in the right side of 'in'");
        Node k = compile(item, narrowed);
        if (!comparable(n.kids[0].kind, k.kind)) {
          fail(whole, "cannot compare " + kind_name(n.kids[0].kind) + " with " + kind_name(k.kind));
        }
        check_literal(whole, la, k);
        n.kids.push_back(std::move(k));
      }
    } else {
      Node rhs = compile(ra, narrowed);
      if (rhs.kind != kind_of(Base::IntList) || !is_numeric(lhs.kind)) {
        fail(whole, "'in' needs a tuple or list display, or a number and a Seq[Int]; got " + kind_name(lhs.kind) +
                        " and " + kind_name(rhs.kind));
      }
      n = make(NodeOp::InList, kind_of(Base::Bool));
      n.kids.push_back(std::move(lhs));
      n.kids.push_back(std::move(rhs));
    }
    n.sub = op == "not in" ? 1 : 0;
    return n;
  }

  [[gnu::noinline]] Node if_else(const Ast& a, const Narrowed& narrowed) {
    Node cond = compile(a.kids[1], narrowed);
    expect_kind(a.kids[1], cond, kind_of(Base::Bool));
    Node yes = compile(a.kids[0], with(narrowed, present_slot(a.kids[1])));
    Node no = compile(a.kids[2], with(narrowed, absent_slot(a.kids[1])));
    Kind kind;
    if (kind_accepts(yes.kind, no.kind)) {
      kind = yes.kind;
    } else if (kind_accepts(no.kind, yes.kind)) {
      kind = no.kind;
    } else if (is_numeric(yes.kind) && is_numeric(no.kind)) {
      kind = kind_of(Base::Num);
    } else if (yes.kind.base == Base::None) {
      kind = Kind{no.kind.base, true};
    } else if (no.kind.base == Base::None) {
      kind = Kind{yes.kind.base, true};
    } else {
      fail(a, "the two branches have different kinds: " + kind_name(yes.kind) + " and " + kind_name(no.kind));
    }
    Node n = make(NodeOp::IfElse, kind);
    n.kids.push_back(std::move(cond));
    n.kids.push_back(std::move(yes));
    n.kids.push_back(std::move(no));
    return n;
  }

  [[gnu::noinline]] Node list(const Ast& a, const Narrowed& narrowed) {
    Node n = make(NodeOp::List, kind_of(Base::IntList));
    for (const Ast& item : a.kids) {
      const bool star = item.type == AstType::Star;
      Node k = compile(star ? item.kids[0] : item, narrowed);
      if (star) {
        expect_kind(item.kids[0], k, kind_of(Base::IntList));
      } else if (k.kind != kind_of(Base::Int)) {
        fail(item, "a shape or list item must be Int, not " + kind_name(k.kind));
      }
      n.star.push_back(star ? 1 : 0);
      n.kids.push_back(std::move(k));
    }
    return n;
  }

  [[gnu::noinline]] Node attribute(const Ast& a, const Narrowed& narrowed) {
    const Ast& base = a.kids[0];
    if (base.type == AstType::Name) {
      const NameInfo* info = scope_.find(base.text);
      if (info != nullptr && info->what == NameInfo::What::Tensor) {
        fail(a, "reading a tensor's attributes is not in the expression language; declare its shape on the tensor");
      }
    }
    if (a.text != "value") fail(a, "unknown attribute '" + a.text + "'; only .value of a Maybe exists");
    Node inner = compile(base, narrowed);
    if (!inner.kind.maybe) fail(a, "'.value' applies to a Maybe, and '" + to_source(base) + "' is " + kind_name(inner.kind));
    if (inner.op == NodeOp::Slot && std::find(narrowed.begin(), narrowed.end(), inner.index) == narrowed.end()) {
      fail(a, "'.value' is read where present(" + to_source(base) + ") is not known to hold; guard it with "
              "'present(" + to_source(base) + ") and ...', 'not present(" + to_source(base) +
              ") or ...' or '... if present(" + to_source(base) + ") else ...'");
    }
    Node n = make(NodeOp::MaybeValue, Kind{inner.kind.base, false});
    n.kids.push_back(std::move(inner));
    return n;
  }

  [[gnu::noinline]] Node subscript(const Ast& a, const Narrowed& narrowed) {
    if (a.kids.size() != 2) fail(a, "a subscript takes one index");
    Node base = compile(a.kids[0], narrowed);
    expect_kind(a.kids[0], base, kind_of(Base::IntList));
    Node index = compile(a.kids[1], narrowed);
    expect_kind(a.kids[1], index, kind_of(Base::Int));
    Node n = make(NodeOp::Index, kind_of(Base::Int));
    n.kids.push_back(std::move(base));
    n.kids.push_back(std::move(index));
    return n;
  }

  Node tensor_call(const Ast& a, NodeOp op, Kind kind) {
    if (a.kids.size() != 2 || a.kids[1].type != AstType::Name) fail(a, "takes one tensor name");
    const NameInfo* info = scope_.find(a.kids[1].text);
    if (info == nullptr) fail(a, "unknown name '" + a.kids[1].text + "'");
    if (info->what == NameInfo::What::Tensor) {
      tensors_.push_back(info->index);
      Node n = make(op, kind);
      n.index = info->index;
      return n;
    }
    if (op == NodeOp::Present && info->kind.maybe) {
      slots_.push_back(info->index);
      Node n = make(NodeOp::PresentSlot, kind);
      n.index = info->index;
      return n;
    }
    fail(a, op == NodeOp::Present ? "present() takes an optional tensor or a parameter that may be None, and '" +
                                        a.kids[1].text + "' is " + kind_name(info->kind)
                                  : "bytes() takes a tensor name");
  }

  [[gnu::noinline]] Node call(const Ast& a, const Narrowed& narrowed) {
    const Ast& callee = a.kids[0];
    if (callee.type != AstType::Name) fail(a, "unknown primitive '" + to_source(callee) + "'");
    if (callee.text == "present") return tensor_call(a, NodeOp::Present, kind_of(Base::Bool));
    if (callee.text == "bytes") {
      if (!options_.allow_bytes) fail(a, "bytes() is allowed only in roofline formulas");
      return tensor_call(a, NodeOp::TensorBytes, kind_of(Base::Int));
    }
    const int id = find_primitive(callee.text);
    if (id < 0) fail(a, "unknown primitive '" + callee.text + "'; the built-in primitives are " + primitive_names());
    const Primitive& p = primitive(id);
    std::vector<Node> args;
    std::vector<bool> given;
    bool seen_keyword = false;
    for (std::size_t i = 1; i < a.kids.size(); ++i) {
      const Ast& arg = a.kids[i];
      std::size_t position = args.size();
      const Ast* value = &arg;
      if (arg.type == AstType::Keyword) {
        const auto kw = std::find(p.keywords.begin(), p.keywords.end(), arg.text);
        if (arg.text.empty() || kw == p.keywords.end()) fail(a, callee.text + "() has no argument named '" + arg.text + "'");
        position = static_cast<std::size_t>(p.min_args) + static_cast<std::size_t>(kw - p.keywords.begin());
        value = &arg.kids[0];
        seen_keyword = true;
      } else if (seen_keyword) {
        fail(a, "a positional argument follows a keyword argument");
      }
      if (args.size() <= position) {
        args.resize(position + 1, constant(Val(), kind_of(Base::None)));
        given.resize(position + 1, false);
      }
      if (given[position]) fail(a, callee.text + "() got argument " + std::to_string(position + 1) + " twice");
      args[position] = compile(*value, narrowed);
      given[position] = true;
    }
    const int n = static_cast<int>(args.size());
    for (int i = 0; i < std::min(n, p.min_args); ++i) {
      if (!given[static_cast<std::size_t>(i)]) fail(a, callee.text + "() is missing argument " + std::to_string(i + 1));
    }
    if (n < p.min_args || (p.max_args >= 0 && n > p.max_args)) {
      const std::string want = p.max_args < 0 ? "at least " + std::to_string(p.min_args)
                               : p.max_args == p.min_args
                                   ? std::to_string(p.min_args)
                                   : std::to_string(p.min_args) + " to " + std::to_string(p.max_args);
      fail(a, callee.text + "() takes " + want + " argument(s), got " + std::to_string(n));
    }
    std::vector<Kind> kinds;
    for (const Node& arg : args) kinds.push_back(arg.kind);
    Kind result;
    try {
      result = p.check(kinds);
    } catch (const ValueError& e) {
      fail(a, callee.text + "(): " + e.what());
    }
    Node node = make(NodeOp::Call, result);
    node.index = id;
    node.kids = std::move(args);
    return node;
  }
};

}  // namespace

Expr compile_ast(const Ast& ast, std::string source, const Scope& scope, const CompileOptions& options) {
  return Compiler(scope, options).run(ast, std::move(source));
}

Expr compile_expression(std::string_view source, const Scope& scope, const CompileOptions& options) {
  return compile_ast(parse_expression(source), std::string(source), scope, options);
}

}  // namespace tileops::expr
