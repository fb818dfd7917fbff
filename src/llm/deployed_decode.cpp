// The deployed decode step's prediction (step_model.h): the kernels the CUDA module runs for
// `modelcost llm --measure`, each priced from the hardware database's achievable figures as
// calibrate derives them: a small kernel takes its traffic time plus the kernel overhead plus
// the gap to the next one.
#include <algorithm>
#include <cmath>

#include "llm/step_model.h"

namespace modelcost {
namespace {

constexpr int64_t kKernelsPerLayer = 10;
constexpr int64_t kKernelsOutsideLayers = 3;  // embedding, final norm, LM head

struct Ceilings {
  double matrix_flops = 0, vector_flops = 0, bandwidth = 0, fixed_us = 0;
};

Ceilings ceilings(const StepSetup& s) {
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
  return c;
}

// Bytes per stored weight element of the layers' GEMMs at the setup's weight precision.
double weight_element_bytes(const StepSetup& s) {
  double bytes = 0, elements = 0;
  for (const WeightGemm& g : s.model->gemms) {
    bytes += gemm_weight_bytes(s, g);
    elements += static_cast<double>(g.k) * static_cast<double>(g.n);
  }
  return elements > 0 ? bytes / elements : s.act_bytes;
}

// Accumulates kernels into the step's parts.
class StepPricer {
 public:
  StepPricer(const StepSetup& s, StepTime& t) : c_(ceilings(s)), t_(t) {}
  void matrix(double flops, double bytes) { t_.gemm_ms += add(flops / c_.matrix_flops, bytes); }
  void attention(double flops, double bytes) { t_.attention_ms += add(flops / c_.vector_flops, bytes); }
  void elementwise(double bytes) { t_.elementwise_ms += add(0, bytes); }

 private:
  double add(double compute_s, double bytes) {
    t_.kernels += 1;
    t_.launch_ms += c_.fixed_us * 1e-3;
    return std::max(compute_s, bytes / c_.bandwidth) * 1e3;
  }
  Ceilings c_;
  StepTime& t_;
};

}  // namespace

double deployed_fixed_us(const Device& d) {
  const AchievableCeilings& a = d.achievable;
  return (a.kernel_overhead_us > 0 ? a.kernel_overhead_us : d.launch_overhead_us) + a.kernel_gap_us;
}

int64_t deployed_decode_kernels(const DecoderModel& m, int64_t tp) {
  const int64_t kernels = kKernelsPerLayer * m.layers + kKernelsOutsideLayers;
  return tp > 1 ? kernels + 2 * m.layers + 1 : kernels;
}

StepTime predict_deployed_decode(const StepSetup& s, int64_t batch, int64_t context) {
  const DecoderModel& m = *s.model;
  const double tp = static_cast<double>(s.tp), b = static_cast<double>(batch), ctx = static_cast<double>(context);
  const double a = s.act_bytes, w = weight_element_bytes(s), h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim);
  const double heads = s.heads_per_device, kv_heads = static_cast<double>(s.kv_heads_per_device);
  const double q = heads * d, qkv = (heads + 2 * kv_heads) * d;
  const double width = static_cast<double>(m.mlp_intermediate) / tp, mlp_out = (m.gated_mlp ? 2 : 1) * width;
  const double vocab = std::ceil(static_cast<double>(m.vocab) / tp);
  StepTime t;
  StepPricer price(s, t);
  price.elementwise(2 * b * h * a);  // the embedding rows
  for (int64_t layer = 0; layer < m.layers; ++layer) {
    price.elementwise(2 * b * h * a + h * a);                              // RMSNorm
    price.matrix(2 * b * h * qkv, h * qkv * w + b * (h + qkv) * a);        // QKV
    price.elementwise(2 * b * qkv * a);                                    // rotary, cache append
    price.attention(4 * b * heads * d * ctx, b * kv_heads * ctx * d * 2 * s.kv_bytes + b * q * a);  // chunks
    price.elementwise(2 * b * q * a);                                      // merge
    price.matrix(2 * b * q * h, q * h * w + b * (q + 2 * h) * a);          // output + residual
    price.elementwise(2 * b * h * a + h * a);                              // RMSNorm
    price.matrix(2 * b * h * mlp_out, h * mlp_out * w + b * (h + mlp_out) * a);  // gate/up
    price.elementwise(b * (mlp_out + width) * a);                          // SiLU * up (or GELU)
    price.matrix(2 * b * width * h, width * h * w + b * (width + 2 * h) * a);  // down + residual
  }
  price.elementwise(2 * b * h * a + h * a);                                // final RMSNorm
  price.matrix(2 * b * h * vocab, h * vocab * w + b * (h + vocab) * a);    // LM head
  if (s.tp > 1) {
    const Ceilings c = ceilings(s);
    const double block = allreduce_ms(b * h * a, s.tp, s.allreduce_gbps, s.allreduce_latency_us, s.collective);
    const double gather = 0.5 * allreduce_ms(b * static_cast<double>(m.vocab) * a, s.tp, s.allreduce_gbps,
                                             s.allreduce_latency_us, s.collective);
    t.communication_ms = 2 * m.layers * block + gather;
    t.kernels += 2 * m.layers + 1;
    t.launch_ms += (2 * m.layers + 1) * c.fixed_us * 1e-3;
  }
  return t;
}

}  // namespace modelcost
