#include "ops/user_formula.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "ops/op_context.h"

namespace modelcost {

// A parsed node: a number, a name read from the node, a unary minus, a binary operator or a call.
// Names are decoded when parsed, so a malformed one is a load-time error, not an evaluation one.
struct Formula::Expr {
  enum class Kind { kNumber, kName, kNegate, kBinary, kCall } kind = Kind::kNumber;
  enum class Source { kAttribute, kDim, kRank, kNumel };  // kName: what it reads
  double number = 0;
  std::string name;  // kName: "in0[1]", "attr.k", ...; kCall: the function
  Source source = Source::kAttribute;
  bool output = false;  // kName: reads output 0, else input `input`
  size_t input = 0;
  int64_t dim = 0;      // kDim: the dim index, negative from the end
  char op = 0;          // kBinary
  int height = 1;       // levels below and including this node: bounds every recursion over it
  std::vector<std::unique_ptr<Expr>> args;
};

namespace {

using Expr = Formula::Expr;

// Parser and evaluator recurse once per level: a formula is capped in nodes (a long a+a+...+a
// chain is one level per term) and in height, so neither can run out of stack.
constexpr int kMaxFormulaNodes = 10000;
constexpr int kMaxFormulaHeight = 1000;
constexpr int kMaxParenthesesDepth = 200;
constexpr size_t kMaxIndexDigits = 9;  // input and dim indices below 10^9

// Long formulas and names are cut in messages.
std::string excerpt(const std::string& text) { return text.size() <= 80 ? text : text.substr(0, 77) + "..."; }

// The value of `digits` (all decimal digits, at most kMaxIndexDigits of them), else -1.
int64_t small_index(const std::string& digits) {
  if (digits.empty() || digits.size() > kMaxIndexDigits || digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(digits);
}

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
    throw std::invalid_argument(what + " at position " + std::to_string(pos_ + 1) + " of '" + excerpt(s_) + "'");
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char ch) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == ch) return ++pos_, true;
    return false;
  }
  std::unique_ptr<Expr> make(Expr::Kind kind) {
    if (++nodes_ > kMaxFormulaNodes) error("over " + std::to_string(kMaxFormulaNodes) + " terms");
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    return e;
  }
  std::unique_ptr<Expr> with_args(std::unique_ptr<Expr> e, std::vector<std::unique_ptr<Expr>> args) {
    for (auto& a : args) e->height = std::max(e->height, a->height + 1);
    if (e->height > kMaxFormulaHeight) error("over " + std::to_string(kMaxFormulaHeight) + " operators deep");
    e->args = std::move(args);
    return e;
  }
  std::unique_ptr<Expr> binary(char op, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
    auto e = make(Expr::Kind::kBinary);
    e->op = op;
    std::vector<std::unique_ptr<Expr>> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return with_args(std::move(e), std::move(args));
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
    if (++depth_ > kMaxParenthesesDepth) error("nested too deeply");
    struct Leave { int& d; ~Leave() { --d; } } leave{depth_};
    if (eat('-')) {
      std::vector<std::unique_ptr<Expr>> args;
      args.push_back(unary());
      return with_args(make(Expr::Kind::kNegate), std::move(args));
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
    if (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) return number();
    // A name: letters, digits, '_' and '.', then an optional [index].
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    if (start == pos_) error(pos_ < s_.size() ? "unexpected '" + std::string(1, s_[pos_]) + "'" : "unexpected end");
    std::string name = s_.substr(start, pos_ - start);
    if (eat('(')) return call(std::move(name));
    if (eat('[')) {
      const size_t open = pos_;
      while (pos_ < s_.size() && s_[pos_] != ']') ++pos_;
      if (pos_ == s_.size()) error("missing ']'");
      name += "[" + s_.substr(open, pos_ - open) + "]";
      ++pos_;
    }
    return reference(std::move(name));
  }
  // A decimal literal; out of a double's range (1e999) or below its smallest (1e-400) is an error.
  std::unique_ptr<Expr> number() {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    const std::string text(begin, static_cast<size_t>(end - begin));
    if (end == begin) error("malformed number");
    if (errno == ERANGE || !std::isfinite(value)) error("number " + excerpt(text) + " is outside a double's range");
    pos_ += text.size();
    auto e = make(Expr::Kind::kNumber);
    e->number = value;
    return e;
  }
  std::unique_ptr<Expr> call(std::string name) {
    if (name != "min" && name != "max" && name != "ceil" && name != "floor") error("unknown function '" + excerpt(name) + "'");
    auto e = make(Expr::Kind::kCall);
    e->name = std::move(name);
    std::vector<std::unique_ptr<Expr>> args;
    do args.push_back(sum());
    while (eat(','));
    if (!eat(')')) error("missing ')'");
    const size_t want = e->name == "min" || e->name == "max" ? 2 : 1;
    if (args.size() != want) error(e->name + " takes " + std::to_string(want) + " argument(s)");
    return with_args(std::move(e), std::move(args));
  }
  // attr.NAME, in<k>[i], in<k>.rank, in<k>.numel, out[i], out.numel.
  std::unique_ptr<Expr> reference(std::string name) {
    auto e = make(Expr::Kind::kName);
    e->name = std::move(name);
    const std::string& n = e->name;
    if (n.rfind("attr.", 0) == 0 && n.size() > 5 && n.find('[') == std::string::npos) return e;
    e->output = n.rfind("out", 0) == 0;
    size_t pos = 3;
    if (!e->output && n.rfind("in", 0) == 0) {
      pos = std::min(n.find_first_not_of("0123456789", 2), n.size());
      const int64_t input = small_index(n.substr(2, pos - 2));
      if (input < 0) error("'" + excerpt(n) + "' does not name an input (in0, in1, ... below in999999999)");
      e->input = static_cast<size_t>(input);
    } else if (!e->output) {
      unknown_name(n);
    }
    const std::string rest = n.substr(pos);
    if (rest == ".rank") e->source = Expr::Source::kRank;
    else if (rest == ".numel") e->source = Expr::Source::kNumel;
    else if (rest.size() > 2 && rest.front() == '[' && rest.back() == ']') e->source = dim_index(*e, rest.substr(1, rest.size() - 2));
    else unknown_name(n);
    return e;
  }
  Expr::Source dim_index(Expr& e, const std::string& text) {
    const bool negative = !text.empty() && text[0] == '-';
    const int64_t index = small_index(negative ? text.substr(1) : text);
    if (index < 0) error("'" + excerpt(e.name) + "': the dim index must be a whole number below 10^9 (negative: from the end)");
    e.dim = negative ? -index : index;
    return Expr::Source::kDim;
  }
  [[noreturn]] void unknown_name(const std::string& n) const {
    error("unknown name '" + excerpt(n) + "' (in<k>[i], in<k>.rank, in<k>.numel, out[i], out.numel, attr.NAME)");
  }

  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
  int nodes_ = 0;
};

double attribute_value(const OpContext& c, const std::string& attr) {
  const auto* a = c.attr(attr.c_str());
  if (!a) c.fail("user op rule reads attribute '" + attr + "', which the node does not have");
  if (a->type() == onnx::AttributeProto::FLOAT) return a->f();
  if (a->type() == onnx::AttributeProto::INT) return static_cast<double>(a->i());
  c.fail("user op rule reads attribute '" + attr + "', which is not a number");
}

// in<k>[i], in<k>.rank, in<k>.numel, out[i], out.numel (decoded by the parser).
double tensor_value(const OpContext& c, const Expr& e) {
  if (!e.output && !c.has_input(e.input))
    c.fail("user op rule reads input " + std::to_string(e.input) + ", which the node lacks");
  const Shape& shape = e.output ? c.out(0).shape : c.in_shape(e.input);
  if (e.source == Expr::Source::kRank) return static_cast<double>(shape.size());
  if (e.source == Expr::Source::kNumel) return element_count(shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t at = e.dim < 0 ? rank + e.dim : e.dim;
  if (at < 0 || at >= rank)
    c.fail("user op rule reads dim " + std::to_string(e.dim) + " of a rank-" + std::to_string(rank) + " tensor");
  return static_cast<double>(shape[static_cast<size_t>(at)]);
}

double evaluate_expr(const Expr& e, const OpContext& c) {
  switch (e.kind) {
    case Expr::Kind::kNumber: return e.number;
    case Expr::Kind::kName:
      return e.source == Expr::Source::kAttribute ? attribute_value(c, e.name.substr(5)) : tensor_value(c, e);
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
