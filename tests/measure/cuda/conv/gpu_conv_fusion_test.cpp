// The ways a dense conv runs beside cuDNN's conv call, each forced (the measurement would keep
// whichever is fastest) and checked against the CPU reference channels-last: a 1x1 conv as one
// cuBLASLt GEMM (per node, and in a group with its bias and ReLU in the epilogue), and a conv with
// its bias and SiLU, ReLU6, Sigmoid or residual + ReLU as one cuDNN graph. Skips without a GPU.
#ifdef MODELCOST_HAVE_CUDA

#include "conv/conv_graph_plans.h"
#include "core/cuda_backend.h"
#include "deployed/group_runner.h"
#include "measure/cuda/deployed/gpu_group_check.h"

namespace modelcost::testing {
namespace {

// `groups` > 1: 64 channels in and out, 64 / groups per group.
ModelBuilder conv_then(const std::string& activation, int64_t kernel, bool residual = false, int64_t groups = 1) {
  ModelBuilder b(13);
  const int64_t in = groups > 1 ? 64 : 24, out = groups > 1 ? 64 : 32;
  b.input("x", kFloat, Shape{2, in, 10, 9}).input("skip", kFloat, Shape{2, out, 10, 9});
  b.weight("w", kFloat, Shape{out, in / groups, kernel, kernel}).weight("bias", kFloat, Shape{out});
  b.floats("lo", {0.f}, {}).floats("hi", {0.5f}, {});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  const int64_t pad = kernel / 2;
  set_attr(conv, "pads", std::vector<int64_t>{pad, pad, pad, pad});
  if (groups > 1) set_attr(conv, "group", groups);
  std::string last = "c";
  if (residual) {
    b.node("Add", {"c", "skip"}, {"s"});
    last = "s";
  }
  if (activation == "Silu") {
    b.node("Sigmoid", {last}, {"g"});
    b.node("Mul", {last, "g"}, {"y"});
  } else if (activation == "Clip") {
    b.node("Clip", {last, "lo", "hi"}, {"y"});
  } else {
    b.node(activation, {last}, {"y"});
  }
  b.output("y");
  return b;
}

// The group's epilogue as the test states it: the conv's own bias, the residual `skip` where
// given, `activation` last, written to the group's output.
cuda::GroupKernelFactory forced(bool gemm, cuda::EpilogueActivation activation, double clip = 0) {
  return [=](const cuda::GroupView& view, std::string* why) {
    cuda::MatrixEpilogue e;
    e.anchor = view.group.anchor;
    e.output = view.group.outputs.front();
    e.activation = activation;
    e.clip = clip;
    for (size_t m : view.group.members)
      if (view.node(m).op_type == "Add") e.residual = view.node(m).inputs[1];
    return gemm ? cuda::make_fused_gemm_kernel(view, e, why) : cuda::make_conv_graph_kernel(view, e, why);
  };
}

}  // namespace

TEST(MeasureGpuConvFusion, PointwiseConvRunsAsOneGemmChannelsLast) {
  SKIP_WITHOUT_GPU();
  auto run = analyse(conv_then("Relu", 1));
  const NodeSpec spec = make_node_spec(run->node("c"), "fp16");
  const OpPlan plan = plan_operation(spec);
  ASSERT_TRUE(std::holds_alternative<ConvParams>(plan)) << plan_reason(plan);
  std::string reason;
  auto runner = cuda::make_conv_gemm_runner(spec, std::get<ConvParams>(plan), &reason);
  ASSERT_TRUE(runner) << reason;
  std::vector<HostTensor> inputs;
  std::vector<const HostTensor*> in;
  for (size_t i = 0; i < spec.inputs.size(); ++i) inputs.push_back(random_input(spec, plan, i, 500 + i));
  for (const auto& t : inputs) in.push_back(&t);
  auto expected = make_outputs(spec);
  run_cpu_reference(spec, plan, in, expected);
  cuda::CudaBackend backend(0);  // the check's own: a static one would keep CUPTI from later tests
  backend.context().channels_last_half = true;
  std::vector<HostTensor> gpu_inputs = inputs;
  for (size_t i = 0; i < 2; ++i) gpu_inputs[i] = relayout(gpu_inputs[i], true);
  auto actual = backend.run_with(*runner, spec, gpu_inputs);
  EXPECT_LT(relative_error(relayout(actual[0], false), expected[0]), 3e-3);
  EXPECT_EQ(runner->implementation().find("conv 1x1 as GEMM: cublasLt"), size_t{0}) << runner->implementation();
  // NCHW is not one GEMM: the runner refuses it, so the timed choice leaves it out.
  backend.context().channels_last_half = false;
  auto nchw = cuda::make_conv_gemm_runner(spec, std::get<ConvParams>(plan), &reason);
  EXPECT_THROW(backend.run_with(*nchw, spec, inputs), Error);
  // A padded 3x3 conv is not one GEMM.
  auto padded = analyse(conv_then("Relu", 3));
  const NodeSpec spec3 = make_node_spec(padded->node("c"), "fp16");
  const OpPlan plan3 = plan_operation(spec3);
  ASSERT_TRUE(std::holds_alternative<ConvParams>(plan3)) << plan_reason(plan3);
  EXPECT_FALSE(cuda::make_conv_gemm_runner(spec3, std::get<ConvParams>(plan3), &reason));
}

TEST(MeasureGpuConvFusion, PointwiseConvGroupRunsAsGemmWithBiasReluEpilogue) {
  SKIP_WITHOUT_GPU();
  const GroupResult r = run_group_with(*analyse(conv_then("Relu", 1)), "c", "fp16", true, forced(true, cuda::EpilogueActivation::kRelu));
  EXPECT_EQ(r.gpu.runner.find("conv 1x1 as GEMM: cublasLt +bias +relu epilogue"), size_t{0}) << r.gpu.runner;
  expect_close(r, 3e-3);
}

TEST(MeasureGpuConvFusion, ConvWithSiluRelu6OrSigmoidIsOneCudnnGraph) {
  SKIP_WITHOUT_GPU();
  struct Case { const char* activation; cuda::EpilogueActivation fused; const char* label; int64_t kernel; };
  const Case cases[] = {{"Silu", cuda::EpilogueActivation::kSwish, "+silu", 1},
                        {"Silu", cuda::EpilogueActivation::kSwish, "+silu", 3},
                        {"Clip", cuda::EpilogueActivation::kClippedRelu, "+relu6", 1},
                        {"Sigmoid", cuda::EpilogueActivation::kSigmoid, "+sigmoid", 3}};
  for (const Case& c : cases) {
    const GroupResult r =
        run_group_with(*analyse(conv_then(c.activation, c.kernel)), "c", "fp16", true, forced(false, c.fused, 0.5));
    EXPECT_EQ(r.gpu.runner.find(std::string("cudnn graph conv+bias") + c.label + " NHWC"), size_t{0}) << r.gpu.runner;
    expect_close(r, 5e-3);
  }
}

TEST(MeasureGpuConvFusion, ConvWithResidualAndReluIsOneCudnnGraph) {
  SKIP_WITHOUT_GPU();
  const GroupResult r =
      run_group_with(*analyse(conv_then("Relu", 3, true)), "c", "fp16", true, forced(false, cuda::EpilogueActivation::kRelu));
  EXPECT_EQ(r.gpu.runner.find("cudnn graph conv+bias+add+relu NHWC"), size_t{0}) << r.gpu.runner;
  expect_close(r, 5e-3);
}

// RepVGG's block: the 3x3 conv, the 1x1 branch's output and the identity branch's summed before
// the ReLU. cuDNN's fused call takes one residual; its graph takes both, and in the measurement it is
// timed against the fused call followed by a chain.
TEST(MeasureGpuConvFusion, ConvWithTwoResidualsAndReluIsOneCudnnGraph) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 16, 10, 10}).input("branch", kFloat, Shape{2, 16, 10, 10}).input("identity", kFloat, Shape{2, 16, 10, 10});
  b.weight("w", kFloat, Shape{16, 16, 3, 3}).weight("bias", kFloat, Shape{16});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"c", "branch"}, {"s"});
  b.node("Add", {"s", "identity"}, {"t"});
  b.node("Relu", {"t"}, {"y"});
  b.output("y");
  const auto run = analyse(b);
  const GroupResult graph = run_group_with(*run, "c", "fp16", true, [](const cuda::GroupView& view, std::string* why) {
    const auto& m = view.group.members;  // conv, add, add, relu
    cuda::MatrixEpilogue e;
    e.anchor = m[0];
    e.residual = view.node(m[1]).inputs[1];
    e.second_residual = view.node(m[2]).inputs[1];
    e.activation = cuda::EpilogueActivation::kRelu;
    e.output = view.node(m[3]).outputs[0];
    return cuda::make_conv_graph_kernel(view, e, why);
  });
  EXPECT_EQ(graph.gpu.runner.find("cudnn graph conv+bias+add+add+relu NHWC"), size_t{0}) << graph.gpu.runner;
  expect_close(graph, 5e-3);
  const GroupResult chosen = run_group_with(*run, "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    return cuda::make_group_kernel(view).kernel;
  });
  EXPECT_NE(chosen.gpu.runner.find("cudnn graph conv+bias+add+add+relu NHWC"), std::string::npos) << chosen.gpu.runner;
  expect_close(chosen, 5e-3);
}

// In the measurement, the conv + SiLU group runs whichever of the graph and the conv + chain is
// faster, and names both.
TEST(MeasureGpuConvFusion, ConvSiluGroupTimesTheGraphAgainstConvThenChain) {
  SKIP_WITHOUT_GPU();
  const GroupResult r = run_group_with(*analyse(conv_then("Silu", 3)), "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    return cuda::make_group_kernel(view).kernel;
  });
  EXPECT_NE(r.gpu.runner.find("cudnn graph conv+bias+silu"), std::string::npos) << r.gpu.runner;
  EXPECT_NE(r.gpu.runner.find("timed choice"), std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
}

// A model's graphs are built before its groups are prepared (several at once): the conv + SiLU
// group asks for its graph, the graph is built once for two identical requests and left untimed,
// and the group's kernel then times the built plans. A conv + ReLU group asks for none (cuDNN's
// fused call runs ReLU).
TEST(MeasureGpuConvFusion, GroupGraphsArePrebuiltThenTimedByTheGroupKernel) {
  SKIP_WITHOUT_GPU();
  const GroupResult r = run_group_with(*analyse(conv_then("Silu", 3)), "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    const std::optional<cuda::ConvGraphRequest> request = cuda::conv_graph_request(view);
    EXPECT_TRUE(request && request->epilogue.activation == cuda::EpilogueActivation::kSwish);
    if (!request) return std::unique_ptr<cuda::GroupKernel>();
    const size_t before = view.cuda.choices.size();
    cuda::prebuild_conv_graphs({*request, *request}, view.cuda);
    EXPECT_EQ(view.cuda.choices.size(), before + 1);
    const auto built = view.cuda.choice<cuda::ConvGraphPlans>(cuda::graph_key(request->conv, request->dtype, request->epilogue));
    EXPECT_TRUE(built && built->refused.empty() && !built->plans.empty() && !built->timed);
    auto kernel = cuda::make_group_kernel(view).kernel;
    EXPECT_TRUE(built && built->timed);
    return kernel;
  });
  EXPECT_NE(r.gpu.runner.find("cudnn graph conv+bias+silu"), std::string::npos) << r.gpu.runner;
  expect_close(r, 5e-3);
  run_group_with(*analyse(conv_then("Relu", 3)), "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    EXPECT_FALSE(cuda::conv_graph_request(view));
    return cuda::make_group_kernel(view).kernel;
  });
}

// A grouped conv (4 groups of 16 channels) with its bias, residual and ReLU as one cuDNN graph; in
// the measurement, timed against the conv's own runner and a chain.
TEST(MeasureGpuConvFusion, GroupedConvWithResidualAndReluIsOneCudnnGraph) {
  SKIP_WITHOUT_GPU();
  const auto analysis = analyse(conv_then("Relu", 3, true, 4));
  const GroupResult forced_graph = run_group_with(*analysis, "c", "fp16", true, forced(false, cuda::EpilogueActivation::kRelu));
  EXPECT_EQ(forced_graph.gpu.runner.find("cudnn graph conv+bias+add+relu NHWC"), size_t{0}) << forced_graph.gpu.runner;
  expect_close(forced_graph, 5e-3);
  const GroupResult chosen = run_group_with(*analysis, "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    return cuda::make_group_kernel(view).kernel;
  });
  EXPECT_NE(chosen.gpu.runner.find("timed choice"), std::string::npos) << chosen.gpu.runner;
  expect_close(chosen, 5e-3);
}

// A depthwise conv (64 channels) and its ReLU6 as PyTorch runs them: cuDNN's conv alone, without
// its bias (a graph of the conv only), then one chain adding the bias per channel of the
// channels-last bytes before the clip; in the measurement, timed against the own kernel with its
// epilogue and the conv + bias + ReLU6 graph.
TEST(MeasureGpuConvFusion, DepthwiseConvThenBiasChainMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  const auto analysis = analyse(conv_then("Clip", 3, false, 64));
  const GroupResult bare = run_group_with(*analysis, "c", "fp16", true, [](const cuda::GroupView& view, std::string* why) {
    std::vector<size_t> rest;
    for (size_t m : view.group.members)
      if (m != view.group.anchor) rest.push_back(m);
    auto chain = cuda::make_bias_chain_kernel(view, view.group.anchor, rest, why);
    auto conv = chain ? cuda::make_bare_conv_graph_kernel(view, view.group.anchor, why) : nullptr;
    if (!conv) return std::unique_ptr<cuda::GroupKernel>();
    std::vector<std::unique_ptr<cuda::GroupKernel>> kernels;
    kernels.push_back(std::move(conv));
    kernels.push_back(std::move(chain));
    return cuda::make_kernel_sequence(std::move(kernels));
  });
  EXPECT_NE(bare.gpu.runner.find("cudnn graph conv NHWC"), std::string::npos) << bare.gpu.runner;
  EXPECT_NE(bare.gpu.runner.find("bias,Clip"), std::string::npos) << bare.gpu.runner;
  expect_close(bare, 5e-3);
  const GroupResult chosen = run_group_with(*analysis, "c", "fp16", true, [](const cuda::GroupView& view, std::string*) {
    return cuda::make_group_kernel(view).kernel;
  });
  EXPECT_NE(chosen.gpu.runner.find("timed choice"), std::string::npos) << chosen.gpu.runner;
  expect_close(chosen, 5e-3);
}

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
