#include "ops/op_registry.h"

namespace modelcost {

namespace {
std::string key(std::string_view domain, std::string_view op_type) {
  std::string k(is_standard_domain(domain) ? "" : domain);
  k += "::";
  k += op_type;
  return k;
}
}  // namespace

void OpRegistry::add(const OpRule& rule) { rules_[key(rule.domain, rule.op_type)] = rule; }

const OpRule* OpRegistry::find(const std::string& domain, const std::string& op_type) const {
  auto it = rules_.find(key(domain, op_type));
  return it == rules_.end() ? nullptr : &it->second;
}

std::vector<const OpRule*> OpRegistry::all() const {
  std::vector<const OpRule*> out;
  for (const auto& [k, r] : rules_) out.push_back(&r);
  return out;
}

OpTraits op_traits(const std::string& domain, const std::string& op_type) {
  const OpRule* rule = OpRegistry::instance().find(domain, op_type);
  return rule ? rule->traits : OpTraits{};
}

const char* op_form_name(OpForm form) {
  switch (form) {
    case OpForm::kUnset: return "unset";
    case OpForm::kConv: return "conv";
    case OpForm::kGemm: return "gemm";
    case OpForm::kAttention: return "attention";
    case OpForm::kPointwise: return "pointwise";
    case OpForm::kReduction: return "reduction";
    case OpForm::kNorm: return "norm";
    case OpForm::kPooling: return "pooling";
    case OpForm::kLayout: return "layout";
    case OpForm::kGather: return "gather";
    case OpForm::kScatter: return "scatter";
    case OpForm::kOther: return "other";
  }
  return "unset";
}

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_math_ops(r);
    register_logical_ops(r);
    register_generator_ops(r);
    register_nn_ops(r);
    register_tensor_ops(r);
    register_reduction_ops(r);
    register_controlflow_ops(r);
    register_quantization_ops(r);
    register_attention_ops(r);
    register_rotary_embedding_ops(r);
    register_com_microsoft_ops(r);
    register_recent_onnx_ops(r);
    register_nchwc_ops(r);
    register_onnx_ml_ops(r);
    register_ms_quantized_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace modelcost
