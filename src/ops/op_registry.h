// The op rule table. Each op family file in src/ops/defs/ declares, per op, the rule that
// gives its outputs' shapes, the rule that gives its cost and how measurement runs it (the
// builder of its measured kind, or why it is not measured), and registers them in one entry.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "modelcost/analysis.h"
#include "ops/measured_kinds.h"
#include "ops/op_context.h"
#include "ops/op_traits.h"

namespace modelcost {

// Highest ai.onnx opset whose ops have rules here (ONNX 1.19). A model importing a newer one is
// analysed with these rules after a warning; only a standard op without a rule is refused.
constexpr int kMaxKnownOnnxOpset = 24;

// Work a cost rule reports. Bytes default to every input read and every output written
// (at each tensor's dtype); a rule overrides them only where the op moves nothing.
struct OpCost {
  double macs = 0;
  double flops = 0;
  bool moves_no_data = false;  // Reshape-like: reinterprets a buffer, 0 bytes
  // >= 0: replaces the default read of every input in full (gathers and slices read only the
  // elements they select).
  double bytes_read = -1;
  // Control flow: how the costs of the node's subgraphs add in.
  double subgraph_repeats = 1;  // Loop trip count, Scan length
  bool subgraph_max = false;    // If: the heavier branch, not the sum
  int subgraph_only = -1;       // If with a known condition: index in Node::subgraphs of the only body that runs
  bool estimate = false;        // an upper bound (e.g. a Loop with an unknown trip count)
  // Quantized (non-float) weight initializers counted in params, as (input index, logical elements):
  // MatMulNBits' packed uint8 B holds K*N weights. Counted only where that input is an initializer.
  std::vector<std::pair<size_t, double>> quantized_weights;
};

using ShapeRule = void (*)(OpContext&);
using CostRule = OpCost (*)(const OpContext&);
// Reads a shaped node into the measured kind that runs it (UnsupportedPlan with the reason
// when this node cannot run: its dtypes, attributes or unknown inputs).
using PlanRule = OpPlan (*)(const OpContext&);

// How measurement runs an op: the builder of its plan, or the reason no node of it is measured.
struct MeasureRule {
  PlanRule plan = nullptr;
  std::string_view reason;  // when plan is null: why ("" = no measurement kernel yet, unnamed)
  MeasureRule() = default;
  MeasureRule(PlanRule builder) : plan(builder) {}  // NOLINT: rows name the builder alone
};
// A row's MeasureRule for an op measurement does not run, with the reason reports show.
inline MeasureRule not_measured(std::string_view reason) {
  MeasureRule m;
  m.reason = reason;
  return m;
}

// How many inputs and outputs a node of an op has, omitted optional ones ("" names) counted.
// A row writes `inputs(2, 4)` (and one output) or `inputs(2, 7).outputs(1, 2)`.
constexpr int kNoLimit = -1;
struct Arity {
  int min_inputs = 0;
  int max_inputs = kNoLimit;
  int min_outputs = 0;
  int max_outputs = kNoLimit;
  constexpr Arity outputs(int min, int max) const { return {min_inputs, max_inputs, min, max}; }
};
constexpr Arity inputs(int min, int max) { return {min, max, 1, 1}; }

struct OpRule {
  std::string_view domain;   // "" = ai.onnx, "com.microsoft", ...
  std::string_view op_type;
  ShapeRule infer = nullptr;  // sets every output's dtype and shape
  CostRule cost = nullptr;
  MeasureRule measure = {};
  // Checked before the rule runs, for ops the ONNX library here has no schema for (contrib
  // domains, ops newer than the library; from ONNX Runtime's and ONNX's own schemas). Ops
  // with a schema are checked against it instead; ops without either (user rules) are not.
  std::optional<Arity> arity = std::nullopt;
  // Set by the block the row is declared in (OpRegistry::add(traits, rows)).
  OpTraits traits = {};
};

class OpRegistry {
 public:
  void add(const OpRule& rule);
  // A block of rows sharing their traits: `r.add(OpForm::kPointwise, {...rows...})`.
  void add(OpTraits traits, std::initializer_list<OpRule> rules) {
    for (OpRule r : rules) {
      r.traits = traits;
      add(r);
    }
  }
  const OpRule* find(const std::string& domain, const std::string& op_type) const;
  size_t size() const { return rules_.size(); }
  std::vector<const OpRule*> all() const;

  // The table of every registered family, built once.
  static const OpRegistry& instance();

 private:
  std::unordered_map<std::string, OpRule> rules_;
};

// One registration function per op family file (src/ops/defs/<family>.cpp).
void register_math_ops(OpRegistry&);
void register_logical_ops(OpRegistry&);
void register_generator_ops(OpRegistry&);
void register_nn_ops(OpRegistry&);
void register_tensor_ops(OpRegistry&);
void register_reduction_ops(OpRegistry&);
void register_controlflow_ops(OpRegistry&);
void register_quantization_ops(OpRegistry&);
void register_attention_ops(OpRegistry&);
void register_rotary_embedding_ops(OpRegistry&);
void register_com_microsoft_ops(OpRegistry&);
void register_recent_onnx_ops(OpRegistry&);
void register_nchwc_ops(OpRegistry&);
void register_onnx_ml_ops(OpRegistry&);
void register_ms_quantized_ops(OpRegistry&);

// The traits of a node's op; unset (OpForm::kUnset) for an op without a rule or a user rule.
OpTraits op_traits(const std::string& domain, const std::string& op_type);

// Domain spellings that mean the standard domain.
inline bool is_standard_domain(std::string_view d) { return d.empty() || d == "ai.onnx"; }

}  // namespace modelcost
