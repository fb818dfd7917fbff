// The vector work of a library call's epilogue that the product's curve does not time.
#include "../../src/roofline/library_epilogue.h"

#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "modelcost/fusion.h"
#include "modelcost/roofline.h"
#include "roofline/curved_device.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// x [64,196] @ w [196,384] + bias -> erf GELU. In fp32 the operand rows are whole 16-byte units and
// cuBLASLt runs the GELU in the GEMM's epilogue: 29 fp32 operations per output at the vector rate
// (the achievable one where the entry has it). In fp16 they are not, and the GELU is a chain kernel
// priced as its own traffic instead.
TEST(LibraryEpilogue, ACublasGeluCostsItsOutputsAtTheVectorRate) {
  const auto run = analyse(gemm_bias_gelu(64, 196, 384));
  const FusionPlan plan = fuse(run->analysis);
  ASSERT_EQ(plan.groups.size(), 1u);
  const FusedGroup& g = plan.groups[0];
  Device d = curved_device();  // 10 TFLOP/s of fp32 vector math
  const double outputs = 64 * 384;
  EXPECT_NEAR(gelu_epilogue_us(g, d, 4, false), outputs * 29 / 10e12 * 1e6, 1e-12);
  EXPECT_EQ(gelu_epilogue_us(g, d, 2, false), 0);  // unaligned fp16 rows: a second kernel
  d.achievable.vector_tflops["fp32"] = 5;
  EXPECT_NEAR(gelu_epilogue_us(g, d, 4, true), outputs * 29 / 5e12 * 1e6, 1e-12);
  EXPECT_NEAR(gelu_epilogue_us(g, d, 4, false), outputs * 29 / 10e12 * 1e6, 1e-12);  // datasheet ceilings
  d.kind = "cpu";
  EXPECT_EQ(gelu_epilogue_us(g, d, 4, false), 0);  // no cuBLASLt
}

// The roofline adds it to the group, on the work that runs longer inside a whole model's graph.
TEST(LibraryEpilogue, TheDeployedGroupCarriesIt) {
  const auto with = analyse(gemm_bias_gelu(64, 256, 384));
  RooflineOptions fp16;
  fp16.dtype = "fp16";
  Device d = curved_device();
  d.achievable.in_graph_work_scale = 1.5;
  const RooflineReport r = compute_roofline(with->analysis, d, fp16);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_FALSE(r.groups[0].library_tail);  // 256 fp16 elements: aligned rows
  d.vector_tflops["fp32"] = 1e9;  // the epilogue's vector work made free
  const RooflineReport free = compute_roofline(with->analysis, d, fp16);
  EXPECT_NEAR(r.groups[0].predicted_us - free.groups[0].predicted_us, 1.5 * 64 * 384 * 29 / 10e12 * 1e6, 1e-6);
}

}  // namespace
}  // namespace modelcost::testing
