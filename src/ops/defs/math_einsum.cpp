// Op rules: Einsum (math family): the equation's reading, the shape and cost rules, and the
// measurement plan (a batched product with packing copies). Formulas: docs/ops/math.md.
#include <algorithm>
#include <map>

#include "ops/plan_helpers.h"
#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

struct Equation {
  std::vector<std::string> operands;  // index letters per operand, "..." expanded to ellipsis_char()s
  std::string output;
  std::map<char, int64_t> sizes;
};

// Ellipsis dims are named by control characters 1, 2, ..., which no equation letter can be.
constexpr size_t kMaxEllipsisRank = 31;
char ellipsis_char(size_t d) { return static_cast<char>(1 + d); }
bool is_ellipsis_char(char ch) { return ch >= 1 && ch <= static_cast<char>(kMaxEllipsisRank); }

Equation read_equation(const OpContext& c) {
  std::string eq;
  for (char ch : c.attr_string("equation", "")) {
    if (is_ellipsis_char(ch)) c.fail("the equation holds a control character");
    if (ch != ' ') eq += ch;
  }
  if (eq.empty()) c.fail("Einsum needs an equation");
  Equation p;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const auto comma = lhs.find(',', start);
    p.operands.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (p.operands.size() != c.num_inputs())
    c.fail("equation '" + eq + "' names " + std::to_string(p.operands.size()) + " operands, node has " + std::to_string(c.num_inputs()));
  // Ellipsis dims get their own characters so they join the letter bookkeeping. They align
  // from the right (numpy broadcasting), so the widest ellipsis must be known first.
  size_t ellipsis_rank = 0;
  for (size_t i = 0; i < p.operands.size(); ++i) {
    const std::string& op = p.operands[i];
    if (op.find("...") == std::string::npos) continue;
    const size_t named = op.size() - 3, rank = c.in_rank(i);
    if (rank < named) c.fail("operand " + std::to_string(i) + " has rank " + std::to_string(rank) + " < " + std::to_string(named));
    ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  if (ellipsis_rank > kMaxEllipsisRank) c.fail("an ellipsis covering " + std::to_string(ellipsis_rank) + " dims (at most 31)");
  for (size_t i = 0; i < p.operands.size(); ++i) {
    std::string& op = p.operands[i];
    const size_t rank = c.in_rank(i);
    const auto dots = op.find("...");
    if (dots != std::string::npos) {
      const size_t er = rank - (op.size() - 3);
      std::string digits;
      for (size_t d = 0; d < er; ++d) digits += ellipsis_char(ellipsis_rank - er + d);
      op = op.substr(0, dots) + digits + op.substr(dots + 3);
    }
    if (op.size() != rank) c.fail("operand " + std::to_string(i) + " '" + op + "' does not match rank " + std::to_string(rank));
    for (size_t d = 0; d < rank; ++d) {
      const int64_t size = c.in_shape(i)[d];
      auto [it, inserted] = p.sizes.emplace(op[d], size);
      if (!inserted && it->second != size) {
        if (it->second == 1) it->second = size;
        else if (size != 1) c.fail(std::string("index '") + op[d] + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(size));
      }
    }
  }
  std::string ellipsis;
  for (size_t d = 0; d < ellipsis_rank; ++d) ellipsis += ellipsis_char(d);
  if (arrow != std::string::npos) {
    p.output = eq.substr(arrow + 2);
    const auto dots = p.output.find("...");
    if (dots != std::string::npos) p.output = p.output.substr(0, dots) + ellipsis + p.output.substr(dots + 3);
  } else {  // implicit mode: ellipsis dims, then letters used once, alphabetically
    std::map<char, int> counts;
    for (const auto& op : p.operands) for (char ch : op) ++counts[ch];
    p.output = ellipsis;
    for (const auto& [ch, n] : counts) if (n == 1 && !is_ellipsis_char(ch)) p.output += ch;
  }
  for (char ch : p.output)
    if (!p.sizes.count(ch)) c.fail(std::string("output index '") + ch + "' appears in no operand");
  return p;
}

}  // namespace

void infer_einsum(OpContext& c) {
  const Equation p = read_equation(c);
  Shape out;
  for (char ch : p.output) out.push_back(p.sizes.at(ch));
  c.set_output(0, c.in_dtype(0), out);
}

// Einsum contracts as one loop nest over every distinct index: macs = product of all index
// sizes for two or more operands; a single operand is additions only when it sums an index away
// (sum, trace), and no arithmetic at all when every index survives (transpose, diagonal).
OpCost cost_einsum(const OpContext& c) {
  const Equation p = read_equation(c);
  double all = 1;
  bool reduces = false;
  for (const auto& [ch, size] : p.sizes) {
    all *= static_cast<double>(size);
    if (p.output.find(ch) == std::string::npos) reduces = true;
  }
  OpCost cost;
  if (p.operands.size() >= 2) {
    cost.macs = all * static_cast<double>(p.operands.size() - 1);
    cost.flops = 2 * cost.macs;
  } else if (reduces && computes_in_float(c)) {
    cost.flops = all;
  }
  return cost;
}

namespace {

// The letters of `from` that satisfy `keep`, in from's order.
template <class Keep>
std::string letters_of(const std::string& from, Keep keep) {
  std::string s;
  for (char ch : from)
    if (keep(ch)) s += ch;
  return s;
}

bool has(const std::string& s, char ch) { return s.find(ch) != std::string::npos; }

// An operand's stride along letter ch of the full index sizes: 0 where it lacks the letter or
// broadcasts it (size 1 against a larger size).
int64_t operand_stride(const Equation& e, const std::string& letters, const Shape& shape, char ch) {
  const auto at = letters.find(ch);
  if (at == std::string::npos || shape[at] != e.sizes.at(ch)) return 0;
  return contiguous_strides(shape)[at];
}

int64_t size_of(const Equation& e, const std::string& letters) {
  int64_t n = 1;
  for (char ch : letters) n *= e.sizes.at(ch);
  return n;
}

// The copy from an operand into `order` laid out contiguously.
StridedCopy pack(const Equation& e, const std::string& letters, const Shape& shape, const std::string& order) {
  StridedCopy copy;
  for (char ch : order) {
    copy.dims.push_back(e.sizes.at(ch));
    copy.src_strides.push_back(operand_stride(e, letters, shape, ch));
  }
  copy.dst_strides = contiguous_strides(copy.dims);
  copy.merge_dims();
  return copy;
}

// The operand is `order` as it is: same letters in the same order, nothing broadcast.
bool laid_out_as(const Equation& e, const std::string& letters, const Shape& shape, const std::string& order) {
  if (letters != order) return false;
  for (size_t i = 0; i < letters.size(); ++i)
    if (shape[i] != e.sizes.at(letters[i])) return false;
  return true;
}

bool repeats_a_letter(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (s.find(s[i], i + 1) != std::string::npos) return true;
  return false;
}

// Einsum of one operand that keeps every index: a transpose.
OpPlan plan_transpose(const OpContext& c, const Equation& e) {
  const std::string& in = e.operands[0];
  if (in.size() != e.output.size()) return unsupported("Einsum of one operand that sums an index");
  StridedCopy copy = pack(e, in, c.in_shape(0), e.output);
  return copy_plan({copy});
}

}  // namespace

// Two operands: every index is a batch index (both operands and the output), an m index (A and
// the output), an n index (B and the output) or a summed k index (both operands).
OpPlan plan_einsum(const OpContext& c) {
  if (!float_data(c)) return unsupported("Einsum on non-float tensors");
  const Equation e = read_equation(c);
  for (const auto& op : e.operands)
    if (repeats_a_letter(op)) return unsupported("Einsum taking a diagonal");
  if (repeats_a_letter(e.output)) return unsupported("Einsum writing a diagonal");
  if (e.operands.size() == 1) return plan_transpose(c, e);
  if (e.operands.size() != 2) return unsupported("Einsum of " + std::to_string(e.operands.size()) + " operands");
  const std::string &a = e.operands[0], &b = e.operands[1], &out = e.output;
  for (char ch : a + b)
    if (!has(out, ch) && !(has(a, ch) && has(b, ch))) return unsupported("Einsum summing an index of one operand");
  const std::string batch = letters_of(out, [&](char ch) { return has(a, ch) && has(b, ch); });
  const std::string m = letters_of(out, [&](char ch) { return has(a, ch) && !has(b, ch); });
  const std::string n = letters_of(out, [&](char ch) { return has(b, ch) && !has(a, ch); });
  const std::string k = letters_of(a, [&](char ch) { return has(b, ch) && !has(out, ch); });
  const Shape &sa = c.in_shape(0), &sb = c.in_shape(1);
  ContractionPlan p;
  MatMulParams& g = p.gemm;
  g.batch = size_of(e, batch);
  g.m = size_of(e, m);
  g.n = size_of(e, n);
  g.k = size_of(e, k);
  g.a_batch_stride = g.m * g.k;
  g.b_batch_stride = g.k * g.n;
  g.trans_a = !laid_out_as(e, a, sa, batch + m + k) && laid_out_as(e, a, sa, batch + k + m);
  p.pack_a = !laid_out_as(e, a, sa, batch + m + k) && !g.trans_a;
  if (p.pack_a) p.a_to_packed = pack(e, a, sa, batch + m + k);
  g.trans_b = !laid_out_as(e, b, sb, batch + k + n) && laid_out_as(e, b, sb, batch + n + k);
  p.pack_b = !laid_out_as(e, b, sb, batch + k + n) && !g.trans_b;
  if (p.pack_b) p.b_to_packed = pack(e, b, sb, batch + k + n);
  p.unpack_output = out != batch + m + n;
  if (p.unpack_output) {  // the product [batch, m, n] read in the output's order
    const std::string product = batch + m + n;
    StridedCopy& u = p.packed_to_output;
    Shape product_dims;
    for (char ch : product) product_dims.push_back(e.sizes.at(ch));
    const std::vector<int64_t> product_strides = contiguous_strides(product_dims);
    for (char ch : out) {
      u.dims.push_back(e.sizes.at(ch));
      u.src_strides.push_back(product_strides[product.find(ch)]);
    }
    u.dst_strides = contiguous_strides(u.dims);
    u.merge_dims();
  }
  p.output_rank = out.size();
  for (char ch : out + k) {
    p.loop_dims.push_back(e.sizes.at(ch));
    p.a_loop_strides.push_back(operand_stride(e, a, sa, ch));
    p.b_loop_strides.push_back(operand_stride(e, b, sb, ch));
  }
  return p;
}

}  // namespace modelcost
