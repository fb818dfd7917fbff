// The ceilings and shared helpers of step_pricer.h.
#include "llm/step_pricer.h"

#include <algorithm>

namespace modelcost {
namespace {


const KernelCurve* curve(const Device& d, const char* name) {
  auto it = d.achievable.kernel_curves.find(name);
  return it == d.achievable.kernel_curves.end() ? nullptr : &it->second;
}

}  // namespace

Ceilings step_ceilings(const StepSetup& s) {
  const Device& d = *s.device;
  const AchievableCeilings& a = d.achievable;
  Ceilings c;
  const double matrix = d.achievable_flops(s.gemm_peak.path, s.gemm_peak.dtype);
  c.matrix_flops = matrix > 0 ? matrix : s.gemm_peak.flops_per_s;
  // The attention kernel scores in fp32 on the vector units.
  const PeakChoice vector = choose_peak(d, MathPath::kVector, "fp32");
  const double vector_achievable = d.achievable_flops(vector.path, vector.dtype);
  c.vector_flops = vector_achievable > 0 ? vector_achievable : vector.flops_per_s;
  c.bandwidth = a.memory_bandwidth_gbps > 0 ? a.memory_bandwidth_gbps * 1e9 : d.bandwidth_bytes_per_s();
  c.fixed_us = deployed_fixed_us(d);
  // The curves are kernel durations: in the step's graph each call adds the library gap.
  c.gap_us = a.library_gap_us > 0 ? a.library_gap_us : a.kernel_gap_us;
  c.sm_count = d.compute_units;
  if (a.attention_load_scale > 0) c.attention_load_scale = a.attention_load_scale;
  // The curves describe fp16 kernels: other precisions keep the roofline.
  if (s.act == "fp16" && s.kv == "fp16") {
    c.gemm_one = curve(d, "decode_gemm_m1");
    c.gemm_many = curve(d, "decode_gemm_m32");
    c.attention = curve(d, "decode_attention");
    c.rowwise = curve(d, "decode_rowwise");
    c.norm = curve(d, "decode_norm");
    if (!c.norm) c.norm = c.rowwise;  // an entry calibrated before the norm had its own class
    c.gemm = curve(d, "gemm");
    c.expert_gemm = curve(d, "expert_gemm");
    c.expert_routing = curve(d, "expert_routing");
    // The prefill's own causal kernel; the per-node report's attention kernel where it was not timed.
    c.prefill_attention = curve(d, "prefill_attention");
    if (!c.prefill_attention) {
      c.prefill_attention = curve(d, "attention");
      c.prefill_attention_gap_us = c.gap_us;
    }
  }
  return c;
}

// Adds kernels and time to `role`'s entry, appended in first-seen order.
void add_to_role(std::vector<KernelRoleTime>& roles, const std::string& role, double kernels, double ms) {
  auto it = std::find_if(roles.begin(), roles.end(), [&](const KernelRoleTime& r) { return r.role == role; });
  if (it == roles.end()) it = roles.insert(roles.end(), KernelRoleTime{role, 0, 0});
  it->kernels += kernels;
  it->ms += ms;
}

// Bytes per stored weight element of the layers' GEMMs at the setup's weight precision.
double weight_element_bytes(const StepSetup& s) {
  double bytes = 0, elements = 0;
  for (const WeightGemm& g : s.model->gemms) {
    bytes += gemm_weight_bytes(s, g);
    elements += static_cast<double>(g.k) * static_cast<double>(g.n) * static_cast<double>(g.experts);
  }
  return elements > 0 ? bytes / elements : s.act_bytes;
}

}  // namespace modelcost
