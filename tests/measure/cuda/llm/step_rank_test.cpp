// The deployed serving step's runs (GPU only): a decode step, a prefill and an iteration mixing
// prefill chunks with decodes, each one CUDA graph of the expected kernels, every kernel labelled
// with its role.
#include <gtest/gtest.h>

#include <algorithm>

#include "measure/cuda_entry.h"
#include "modelcost/measure.h"

#ifdef MODELCOST_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/cuda_backend.h"
#include "timing/cupti_timer.h"
#include "timing/wall_ledger.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

ServingStepSpec small_step() {
  ServingStepSpec spec;
  spec.layers = 2;
  spec.hidden = 256;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.head_dim = 64;
  spec.intermediate = 512;
  spec.vocab = 1000;
  spec.batch = 3;
  spec.context = 100;
  spec.warmup = 2;
  spec.repeats = 5;
  return spec;
}

// Whether CUPTI records here, for a failure message: the step's own timer is gone by now, so a
// fresh one attaches as the step's did (or fails for the same reason).
std::string cupti_state() {
  cuda::WallLedger ledger;
  const cuda::CuptiTimer probe(ledger);
  return probe.ok() ? "CUPTI records on" : "CUPTI records off: " + probe.error();
}

// Every kernel of the profiled replay has a known role; the roles in launch order.
std::vector<std::string> checked_roles(const ServingStepTiming& t) {
  EXPECT_FALSE(t.by_role.empty()) << cupti_state() << "; kernels: " << t.kernel_breakdown;
  std::vector<std::string> names;
  int64_t labelled = 0;
  for (const KernelRoleTiming& r : t.by_role) {
    const auto& roles = serving_step_kernel_roles();
    EXPECT_NE(std::find(roles.begin(), roles.end(), r.role), roles.end()) << r.role;
    EXPECT_GT(r.us, 0) << r.role;
    labelled += r.kernels;
    names.push_back(r.role);
  }
  if (!t.by_role.empty()) EXPECT_EQ(labelled, t.kernels);
  return names;
}

int64_t role_kernels(const ServingStepTiming& t, const std::string& role) {
  for (const KernelRoleTiming& r : t.by_role)
    if (r.role == role) return r.kernels;
  return 0;
}

TEST(ServingStep, DecodeRunsAsOneGraphOfTenKernelsPerLayerAndThree) {
  SKIP_WITHOUT_GPU();
  ServingStepSpec spec = small_step();
  const ServingStepTiming t = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(t.measured) << t.reason;
  EXPECT_EQ(t.samples, 5);
  EXPECT_GT(t.median_us, 0);
  EXPECT_LE(t.min_us, t.median_us);
  EXPECT_EQ(t.kernels, 10 * spec.layers + 3) << t.implementation;
  const std::vector<std::string> roles = checked_roles(t);
  ASSERT_FALSE(roles.empty());
  EXPECT_EQ(t.by_role.front().role, "embedding");
  EXPECT_EQ(t.by_role.back().role, "LM head");
  EXPECT_EQ(t.by_role[4].role, "attention");
  EXPECT_EQ(t.by_role[4].kernels, 2 * spec.layers);  // chunks and merge
  spec.head_dim = 80;
  const ServingStepTiming refused = measure_serving_step_on_gpu(spec);
  EXPECT_FALSE(refused.measured);
  EXPECT_NE(refused.reason.find("head_dim 80"), std::string::npos) << refused.reason;
}

// `modelcost llm --measure`'s order: the backend's CUPTI timer is attached (it timed the exported
// graph) when the serving step runs; the step, timed through that backend, keeps its kernel profile.
TEST(ServingStep, ABackendWhoseTimerIsLiveProfilesTheStepItTimes) {
  SKIP_WITHOUT_GPU();
  cuda::CudaBackend backend(0);
  ASSERT_TRUE(backend.timing().cupti().ok()) << backend.timing().cupti().error();
  const ServingStepTiming t = backend.measure_serving_step(small_step());
  ASSERT_TRUE(t.measured) << t.reason;
  EXPECT_EQ(t.kernels, 10 * small_step().layers + 3) << t.implementation;
  EXPECT_FALSE(checked_roles(t).empty());
  EXPECT_GT(t.kernel_busy_us, 0);
}

// A prefill of two prompts of 150 tokens: per layer one rotary and one causal attention kernel,
// the last positions gathered before the final norm and the LM head.
TEST(ServingStep, PrefillRunsNineKernelsPerLayerAndFour) {
  SKIP_WITHOUT_GPU();
  ServingStepSpec spec = small_step();
  spec.batch = 0;
  spec.prefills = 2;
  spec.prefill_tokens = 150;
  const ServingStepTiming t = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(t.measured) << t.reason;
  EXPECT_EQ(t.kernels, 9 * spec.layers + 4) << t.implementation;
  const std::vector<std::string> roles = checked_roles(t);
  ASSERT_FALSE(roles.empty());
  EXPECT_EQ(role_kernels(t, "prefill attention"), spec.layers);
  EXPECT_EQ(role_kernels(t, "attention"), 0);
  EXPECT_EQ(role_kernels(t, "last positions"), 1);
  EXPECT_EQ(roles.back(), "LM head");
  EXPECT_NE(t.implementation.find("causal flash attention 2 x 150 after 0"), std::string::npos) << t.implementation;
}

// A chunk of 64 tokens after 200 cached beside three decodes: both attentions in every layer.
TEST(ServingStep, MixedIterationRunsBothAttentions) {
  SKIP_WITHOUT_GPU();
  ServingStepSpec spec = small_step();
  spec.prefills = 1;
  spec.prefill_tokens = 64;
  spec.prefill_past = 200;
  const ServingStepTiming t = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(t.measured) << t.reason;
  EXPECT_EQ(t.kernels, 12 * spec.layers + 4) << t.implementation;
  checked_roles(t);
  EXPECT_EQ(role_kernels(t, "prefill attention"), spec.layers);
  EXPECT_EQ(role_kernels(t, "attention"), 2 * spec.layers);
  EXPECT_EQ(role_kernels(t, "rotary + KV append"), 2 * spec.layers);
  spec.batch = 0;
  spec.prefills = 0;
  const ServingStepTiming empty = measure_serving_step_on_gpu(spec);
  EXPECT_FALSE(empty.measured);
  EXPECT_NE(empty.reason.find("no sequence"), std::string::npos) << empty.reason;
}

// A mixture of experts after one dense layer: per MoE layer the router, two routing kernels, the
// grouped gate/up and down products with the activation between, the combine, and a shared
// expert's three, as a decode step and as a prefill.
TEST(ServingStep, MixtureOfExpertsRunsTheExpertKernels) {
  SKIP_WITHOUT_GPU();
  ServingStepSpec spec = small_step();
  spec.layers = 3;
  spec.experts = 8;
  spec.experts_per_token = 2;
  spec.expert_width = 64;
  spec.shared_expert_width = 128;
  spec.dense_layers = 1;
  const int64_t moe_layers = 2;
  const ServingStepTiming decode = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(decode.measured) << decode.reason;
  EXPECT_EQ(decode.kernels, 10 * spec.layers + 3 + (4 + 3) * moe_layers) << decode.implementation;
  checked_roles(decode);
  EXPECT_EQ(role_kernels(decode, "routing"), 2 * moe_layers);
  EXPECT_EQ(role_kernels(decode, "expert gate/up product"), moe_layers);
  EXPECT_EQ(role_kernels(decode, "shared down product"), moe_layers);
  EXPECT_EQ(role_kernels(decode, "gate/up product"), 1);  // the dense layer's
  EXPECT_NE(decode.implementation.find("tiles of 16"), std::string::npos) << decode.implementation;
  spec.batch = 0;
  spec.prefills = 2;
  spec.prefill_tokens = 300;
  const ServingStepTiming prefill = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(prefill.measured) << prefill.reason;
  EXPECT_EQ(prefill.kernels, 9 * spec.layers + 4 + (4 + 3) * moe_layers) << prefill.implementation;
  EXPECT_NE(prefill.implementation.find("tiles of 128"), std::string::npos) << prefill.implementation;
  spec.expert_width = 80;
  const ServingStepTiming refused = measure_serving_step_on_gpu(spec);
  EXPECT_FALSE(refused.measured);
  EXPECT_NE(refused.reason.find("multiple of 32"), std::string::npos) << refused.reason;
}

// DeepSeek's multi-head latent attention (latent 512, rotary 64, 16 heads): per layer the first
// product, the append, then a decode's absorbed query product, latent attention's two kernels and
// value product, a prefill's latent up product, K/V expansion and flash attention; a low-rank
// query pair adds its norm and second product.
TEST(ServingStep, LatentAttentionRunsItsAbsorbedDecodeAndExpandedPrefill) {
  SKIP_WITHOUT_GPU();
  ServingStepSpec spec = small_step();
  spec.heads = 16;
  spec.kv_heads = 16;
  spec.head_dim = 192;
  spec.kv_lora_rank = 512;
  spec.rope_head_dim = 64;
  spec.nope_head_dim = 128;
  spec.v_head_dim = 128;
  spec.context = 300;
  const ServingStepTiming decode = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(decode.measured) << decode.reason;
  EXPECT_EQ(decode.kernels, 12 * spec.layers + 3) << decode.implementation;
  checked_roles(decode);
  EXPECT_EQ(role_kernels(decode, "query absorb product"), spec.layers);
  EXPECT_EQ(role_kernels(decode, "attention"), 2 * spec.layers);
  EXPECT_NE(decode.implementation.find("latent decoding"), std::string::npos) << decode.implementation;
  spec.prefills = 1;
  spec.prefill_tokens = 64;
  spec.prefill_past = 200;
  const ServingStepTiming mixed = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(mixed.measured) << mixed.reason;
  EXPECT_EQ(mixed.kernels, 16 * spec.layers + 4) << mixed.implementation;
  EXPECT_EQ(role_kernels(mixed, "latent up product"), spec.layers);
  EXPECT_EQ(role_kernels(mixed, "prefill attention"), spec.layers);
  spec.batch = 0;
  spec.q_lora_rank = 128;
  const ServingStepTiming prefill = measure_serving_step_on_gpu(spec);
  ASSERT_TRUE(prefill.measured) << prefill.reason;
  EXPECT_EQ(prefill.kernels, 13 * spec.layers + 4) << prefill.implementation;
  EXPECT_EQ(role_kernels(prefill, "query up product"), spec.layers);
  spec.rope_head_dim = 32;
  const ServingStepTiming refused = measure_serving_step_on_gpu(spec);
  EXPECT_FALSE(refused.measured);
  EXPECT_NE(refused.reason.find("rotary key of 32"), std::string::npos) << refused.reason;
}

}  // namespace
}  // namespace modelcost::testing
#endif
