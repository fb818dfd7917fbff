// Arithmetic formulas of user op rules (docs/ops/user_rules.md): numbers, + - * / %, parentheses,
// min/max/ceil/floor, and names that read the node: in0[1] (dim 1 of input 0, negative from the
// end), in0.rank, in0.numel, out[2], out.numel (output 0, cost formulas only), attr.NAME.
#pragma once
#include <memory>
#include <string>

namespace modelcost {

class OpContext;

class Formula {
 public:
  // Parses `text`; throws std::invalid_argument with the position of a syntax error.
  explicit Formula(const std::string& text);
  ~Formula();
  Formula(Formula&&) noexcept;
  Formula& operator=(Formula&&) noexcept;

  // Evaluates on the node; fails naming it for a missing input, dim or attribute.
  double evaluate(const OpContext& c) const;
  const std::string& text() const { return text_; }

  struct Expr;

 private:
  std::string text_;
  std::unique_ptr<Expr> root_;
};

}  // namespace modelcost
