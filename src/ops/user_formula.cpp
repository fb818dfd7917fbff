#include "ops/user_formula.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "ops/op_context.h"

namespace modelcost {

// A parsed node: a number, a name read from the node, a unary minus, a binary operator or a call.
struct Formula::Expr {
  enum class Kind { kNumber, kName, kNegate, kBinary, kCall } kind = Kind::kNumber;
  double number = 0;
  std::string name;  // kName: "in0[1]", "attr.k", ...; kCall: the function
  char op = 0;       // kBinary
  std::vector<std::unique_ptr<Expr>> args;
};

namespace {

using Expr = Formula::Expr;

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}
  std::unique_ptr<Expr> parse() {
    auto e = sum();
    skip();
    if (pos_ != s_.size()) error("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw std::invalid_argument(what + " at position " + std::to_string(pos_ + 1) + " of '" + s_ + "'");
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char ch) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == ch) return ++pos_, true;
    return false;
  }
  std::unique_ptr<Expr> binary(char op, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::kBinary;
    e->op = op;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }
  std::unique_ptr<Expr> sum() {
    auto e = product();
    for (;;) {
      if (eat('+')) e = binary('+', std::move(e), product());
      else if (eat('-')) e = binary('-', std::move(e), product());
      else return e;
    }
  }
  std::unique_ptr<Expr> product() {
    auto e = unary();
    for (;;) {
      if (eat('*')) e = binary('*', std::move(e), unary());
      else if (eat('/')) e = binary('/', std::move(e), unary());
      else if (eat('%')) e = binary('%', std::move(e), unary());
      else return e;
    }
  }
  std::unique_ptr<Expr> unary() {
    if (++depth_ > kMaxDepth) error("nested too deeply");
    struct Leave { int& d; ~Leave() { --d; } } leave{depth_};
    if (eat('-')) {
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::kNegate;
      e->args.push_back(unary());
      return e;
    }
    return primary();
  }
  std::unique_ptr<Expr> primary() {
    skip();
    if (eat('(')) {
      auto e = sum();
      if (!eat(')')) error("missing ')'");
      return e;
    }
    if (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
      size_t used = 0;
      auto e = std::make_unique<Expr>();
      e->number = std::stod(s_.substr(pos_), &used);
      pos_ += used;
      return e;
    }
    // A name: letters, digits, '_' and '.', then an optional [index].
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    if (start == pos_) error(pos_ < s_.size() ? "unexpected '" + std::string(1, s_[pos_]) + "'" : "unexpected end");
    auto e = std::make_unique<Expr>();
    e->name = s_.substr(start, pos_ - start);
    if (eat('(')) {
      e->kind = Expr::Kind::kCall;
      if (e->name != "min" && e->name != "max" && e->name != "ceil" && e->name != "floor")
        error("unknown function '" + e->name + "'");
      do e->args.push_back(sum());
      while (eat(','));
      if (!eat(')')) error("missing ')'");
      const size_t want = e->name == "min" || e->name == "max" ? 2 : 1;
      if (e->args.size() != want) error(e->name + " takes " + std::to_string(want) + " argument(s)");
      return e;
    }
    e->kind = Expr::Kind::kName;
    if (eat('[')) {
      const size_t open = pos_;
      while (pos_ < s_.size() && s_[pos_] != ']') ++pos_;
      if (pos_ == s_.size()) error("missing ']'");
      e->name += "[" + s_.substr(open, pos_ - open) + "]";
      ++pos_;
    }
    const bool known = e->name.rfind("attr.", 0) == 0 || e->name.rfind("in", 0) == 0 || e->name.rfind("out", 0) == 0;
    if (!known) error("unknown name '" + e->name + "' (in<k>[i], in<k>.rank, in<k>.numel, out[i], out.numel, attr.NAME)");
    return e;
  }

  static constexpr int kMaxDepth = 200;
  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

double attribute_value(const OpContext& c, const std::string& attr) {
  const auto* a = c.attr(attr.c_str());
  if (!a) c.fail("user op rule reads attribute '" + attr + "', which the node does not have");
  if (a->type() == onnx::AttributeProto::FLOAT) return a->f();
  if (a->type() == onnx::AttributeProto::INT) return static_cast<double>(a->i());
  c.fail("user op rule reads attribute '" + attr + "', which is not a number");
}

// "in0[1]", "in0.rank", "in0.numel", "out[2]", "out.numel".
double tensor_value(const OpContext& c, const std::string& name) {
  const bool output = name.rfind("out", 0) == 0;
  size_t pos = output ? 3 : 2;
  size_t index = 0;
  if (!output) {
    const size_t digits = name.find_first_not_of("0123456789", pos);
    if (digits == pos) c.fail("user op rule: '" + name + "' names no input (write in0, in1, ...)");
    index = std::stoul(name.substr(pos, digits - pos));
    pos = digits;
    if (!c.has_input(index)) c.fail("user op rule reads input " + std::to_string(index) + ", which the node lacks");
  }
  const Shape& shape = output ? c.out(0).shape : c.in_shape(index);
  const std::string rest = name.substr(pos);
  if (rest == ".rank") return static_cast<double>(shape.size());
  if (rest == ".numel") return element_count(shape);
  if (rest.size() > 2 && rest.front() == '[' && rest.back() == ']') {
    const long long i = std::stoll(rest.substr(1, rest.size() - 2));
    const long long rank = static_cast<long long>(shape.size());
    const long long at = i < 0 ? rank + i : i;
    if (at < 0 || at >= rank)
      c.fail("user op rule reads dim " + std::to_string(i) + " of a rank-" + std::to_string(rank) + " tensor");
    return static_cast<double>(shape[static_cast<size_t>(at)]);
  }
  c.fail("user op rule: cannot read '" + name + "'");
}

double evaluate_expr(const Expr& e, const OpContext& c) {
  switch (e.kind) {
    case Expr::Kind::kNumber: return e.number;
    case Expr::Kind::kName:
      return e.name.rfind("attr.", 0) == 0 ? attribute_value(c, e.name.substr(5)) : tensor_value(c, e.name);
    case Expr::Kind::kNegate: return -evaluate_expr(*e.args[0], c);
    case Expr::Kind::kCall: {
      const double a = evaluate_expr(*e.args[0], c);
      if (e.name == "ceil") return std::ceil(a);
      if (e.name == "floor") return std::floor(a);
      const double b = evaluate_expr(*e.args[1], c);
      return e.name == "min" ? std::min(a, b) : std::max(a, b);
    }
    case Expr::Kind::kBinary: {
      const double a = evaluate_expr(*e.args[0], c), b = evaluate_expr(*e.args[1], c);
      if ((e.op == '/' || e.op == '%') && b == 0) c.fail("user op rule divides by zero");
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return a / b;
        default: return std::fmod(a, b);
      }
    }
  }
  return 0;
}

}  // namespace

Formula::Formula(const std::string& text) : text_(text), root_(Parser(text_).parse()) {}
Formula::~Formula() = default;
Formula::Formula(Formula&&) noexcept = default;
Formula& Formula::operator=(Formula&&) noexcept = default;

double Formula::evaluate(const OpContext& c) const { return evaluate_expr(*root_, c); }

}  // namespace modelcost
