// The project's own kernels added beside the library ones, against the CPU reference: the
// depthwise row kernels run directly (the conv runner would keep cuDNN where it is faster),
// the own pools in both layouts and those cuDNN cannot take (ceil_mode, asymmetric pads), TopK, the index-mapped Pad modes and
// cubic Resize.
#ifdef MODELCOST_HAVE_CUDA

#include "core/cuda_backend.h"
#include "gpu_check.h"

namespace modelcost::testing {
namespace {

using OwnRunnerFactory = std::function<std::unique_ptr<cuda::OperatorRunner>(const NodeSpec&, const OpPlan&, std::string*)>;

// Runs node `name` (fresh random inputs) on the runner `make` gives against the CPU reference.
// Channels-last moves the first input to [N, H, W, C], and every 4-D input with
// `channels_last_weights` (a library conv reads its filters [K, R, S, C] as a deployment stores them).
void check_own_runner(const ModelBuilder& builder, const std::string& name, const std::string& dtype, bool channels_last,
                      double tolerance, const OwnRunnerFactory& make, bool channels_last_weights = false) {
  auto run = analyse(builder);
  const NodeSpec spec = make_node_spec(run->node(name), dtype);
  const OpPlan plan = plan_operation(spec);
  std::string reason;
  auto runner = make(spec, plan, &reason);
  ASSERT_TRUE(runner) << reason;
  std::vector<HostTensor> inputs;
  std::vector<const HostTensor*> in;
  for (size_t i = 0; i < spec.inputs.size(); ++i) inputs.push_back(random_input(spec, plan, i, 300 + i));
  for (const auto& t : inputs) in.push_back(&t);
  auto expected = make_outputs(spec);
  run_cpu_reference(spec, plan, in, expected);
  cuda::CudaBackend backend(0);  // the check's own: a static one would keep CUPTI from later tests
  backend.context().channels_last_half = channels_last;
  std::vector<HostTensor> gpu_inputs = inputs;
  for (size_t i = 0; i < gpu_inputs.size() && channels_last; ++i)
    if (i == 0 || (channels_last_weights && gpu_inputs[i].shape.size() == 4)) gpu_inputs[i] = relayout(gpu_inputs[i], true);
  auto actual = backend.run_with(*runner, spec, gpu_inputs);
  if (channels_last) actual[0] = relayout(actual[0], false);
  EXPECT_LT(relative_error(actual[0], expected[0]), tolerance) << name << " " << dtype << (channels_last ? " NHWC" : " NCHW");
}

void check_own_depthwise(const ModelBuilder& builder, const std::string& name, const std::string& dtype, bool channels_last,
                         double tolerance) {
  check_own_runner(builder, name, dtype, channels_last, tolerance, [](const NodeSpec& spec, const OpPlan& plan, std::string* why) {
    return cuda::make_depthwise_conv_runner(spec, std::get<ConvParams>(plan), why);
  });
}

// A depthwise Conv `name` over input x: `groups` input channels, `filters` filters in all (a
// multiple of groups), a k x k window at `stride`, padded to keep the size at stride 1.
void add_depthwise_conv(ModelBuilder& b, const std::string& x, const std::string& name, int64_t groups, int64_t filters,
                        int64_t k, int64_t stride) {
  const std::string w = "w_" + name, bias = "b_" + name;
  b.weight(w, kFloat, Shape{filters, 1, k, k}).weight(bias, kFloat, Shape{filters});
  auto& conv = b.node("Conv", {x, w, bias}, {name});
  set_attr(conv, "group", groups);
  set_attr(conv, "strides", std::vector<int64_t>{stride, stride});
  set_attr(conv, "pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  b.output(name);
}

// The own depthwise kernel in fp16 channels-last and NCHW, and in fp32.
void check_own_depthwise_in_every_layout(const ModelBuilder& b, const std::string& name) {
  check_own_depthwise(b, name, "fp16", true, 3e-3);
  check_own_depthwise(b, name, "fp16", false, 3e-3);
  check_own_depthwise(b, name, "fp32", false, 1e-5);
}

// A padded 3x3 Conv "y" with its bias over `groups` groups of 16 channels in and out.
ModelBuilder grouped_conv_of_16(int64_t groups) {
  ModelBuilder b;
  const int64_t c = 16 * groups;
  b.input("x", kFloat, Shape{2, c, 10, 9}).weight("w", kFloat, Shape{c, 16, 3, 3}).weight("bias", kFloat, Shape{c});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"});
  set_attr(conv, "group", groups);
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y");
  return b;
}

}  // namespace

TEST(MeasureGpuOwnKernels, DepthwiseRowKernelsInBothLayouts) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  struct Case { const char* name; int64_t k, stride, size; };
  // Small images take the channels-last one-pixel kernel (too few row kernel threads to fill the
  // GPU); the large ones the row kernels in both layouts.
  const Case cases[] = {{"k7s1", 7, 1, 15},      {"k3s1", 3, 1, 9},       {"k3s2", 3, 2, 11},
                        {"k5s2", 5, 2, 13},      {"k5s1", 5, 1, 6},       {"k7s1_large", 7, 1, 96},
                        {"k3s1_large", 3, 1, 96}, {"k3s2_large", 3, 2, 190}, {"k5s2_large", 5, 2, 190},
                        {"k9s1_large", 9, 1, 64}};
  for (const Case& c : cases) {
    const std::string x = std::string("x_") + c.name;
    b.input(x, kFloat, Shape{2, 16, c.size, c.size + 2});
    add_depthwise_conv(b, x, c.name, 16, 16, c.k, c.stride);
  }
  for (const Case& c : cases) check_own_depthwise_in_every_layout(b, c.name);
}

TEST(MeasureGpuOwnKernels, DepthwiseWithAChannelMultiplier) {
  SKIP_WITHOUT_GPU();
  // FastViT's downsampling: 2 filters per input channel, 7x7 and 3x3 at stride 2; 3 filters at
  // stride 1 (odd output channels: one channel per thread in channels-last).
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 8, 14, 15});
  struct Case { const char* name; int64_t multiplier, k, stride; };
  const Case cases[] = {{"m2k7s2", 2, 7, 2}, {"m2k3s2", 2, 3, 2}, {"m3k3s1", 3, 3, 1}};
  for (const Case& c : cases) add_depthwise_conv(b, "x", c.name, 8, 8 * c.multiplier, c.k, c.stride);
  for (const Case& c : cases) check_own_depthwise_in_every_layout(b, c.name);
}

TEST(MeasureGpuOwnKernels, CeilModeAndAsymmetricPools) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 13, 13});
  auto& max_pool = b.node("MaxPool", {"x"}, {"ceil_max"});
  set_attr(max_pool, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(max_pool, "strides", std::vector<int64_t>{2, 2});
  set_attr(max_pool, "ceil_mode", int64_t{1});
  auto& avg_pool = b.node("AveragePool", {"x"}, {"ceil_avg"});
  set_attr(avg_pool, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(avg_pool, "strides", std::vector<int64_t>{2, 2});
  set_attr(avg_pool, "pads", std::vector<int64_t>{0, 1, 1, 0});
  set_attr(avg_pool, "ceil_mode", int64_t{1});
  set_attr(avg_pool, "count_include_pad", int64_t{1});
  b.output("ceil_max").output("ceil_avg");
  check_both(b, "ceil_max", 1e-6, 1e-6);
  check_both(b, "ceil_avg", 1e-6, 2e-3);
}

// A grouped conv node (4 groups of 16 channels, with its bias) as one cuDNN graph, channels-last.
TEST(MeasureGpuOwnKernels, GroupedConvNodeAsCudnnGraph) {
  SKIP_WITHOUT_GPU();
  const ModelBuilder b = grouped_conv_of_16(4);
  const auto graph = [](const NodeSpec&, const OpPlan& plan, std::string* why) {
    return cuda::make_conv_graph_runner(std::get<ConvParams>(plan), why);
  };
  check_own_runner(b, "y", "fp16", true, 5e-3, graph, /*channels_last_weights=*/true);
}

// A depthwise conv node (64 channels, 3x3 and 5x5 windows) as cuDNN's conv-only graph, its bias
// then added in place over the channels-last rows, channels-last.
TEST(MeasureGpuOwnKernels, DepthwiseNodeAsConvGraphThenBiasAdd) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 64, 12, 10});
  add_depthwise_conv(b, "x", "k3", 64, 64, 3, 1);
  add_depthwise_conv(b, "x", "k5s2", 64, 64, 5, 2);
  const auto graph_then_bias = [](const NodeSpec&, const OpPlan& plan, std::string* why) {
    return cuda::make_conv_graph_runner(std::get<ConvParams>(plan), why);
  };
  for (const char* name : {"k3", "k5s2"}) check_own_runner(b, name, "fp16", true, 5e-3, graph_then_bias, /*channels_last_weights=*/true);
}

// A grouped conv of 3 groups of 16 channels (RegNetX's few wide groups) as a dense conv over
// block-diagonal filters, channels-last and NCHW.
TEST(MeasureGpuOwnKernels, FewGroupConvAsBlockDiagonalDenseConv) {
  SKIP_WITHOUT_GPU();
  const ModelBuilder b = grouped_conv_of_16(3);
  const auto dense = [](const NodeSpec& spec, const OpPlan& plan, std::string* why) {
    return cuda::make_block_diagonal_conv_runner(spec, std::get<ConvParams>(plan), why);
  };
  check_own_runner(b, "y", "fp16", true, 5e-3, dense, /*channels_last_weights=*/true);
  check_own_runner(b, "y", "fp16", false, 5e-3, dense);
  check_own_runner(b, "y", "fp32", false, 1e-3, dense);
}

// The thin product kernel: CaiT's talking-heads mix of 4 heads over a batch of rows (the weights
// shared by the batch), and a Gemm with its [N] bias over transposed weights.
TEST(MeasureGpuOwnKernels, ThinProducts) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("heads", kFloat, Shape{2, 37, 4}).weight("mix", kFloat, Shape{4, 4});
  b.node("MatMul", {"heads", "mix"}, {"mixed"});
  b.input("x", kFloat, Shape{53, 12}).weight("w", kFloat, Shape{7, 12}).weight("c", kFloat, Shape{7});
  set_attr(b.node("Gemm", {"x", "w", "c"}, {"projected"}), "transB", int64_t{1});
  b.output("mixed").output("projected");
  const auto thin = [](const NodeSpec& spec, const OpPlan& plan, std::string* why) {
    return cuda::make_thin_product_runner(spec, std::get<MatMulParams>(plan), why);
  };
  for (const char* name : {"mixed", "projected"}) {
    check_own_runner(b, name, "fp32", false, 1e-5, thin);
    check_own_runner(b, name, "fp16", false, 3e-3, thin);
  }
}

// The skinny weight stream: a classifier head at batch 1 (a Gemm over weights [1000, 2048] with
// its bias: the last block of 16 outputs partly empty) and a bias-free product of 3 rows.
TEST(MeasureGpuOwnKernels, SkinnyProducts) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 2048}).weight("w", kFloat, Shape{1000, 2048}).weight("c", kFloat, Shape{1000});
  set_attr(b.node("Gemm", {"x", "w", "c"}, {"logits"}), "transB", int64_t{1});
  b.input("rows", kFloat, Shape{3, 96}).weight("v", kFloat, Shape{40, 96});
  set_attr(b.node("Gemm", {"rows", "v"}, {"projected"}), "transB", int64_t{1});
  b.output("logits").output("projected");
  const auto skinny = [](const NodeSpec& spec, const OpPlan& plan, std::string* why) {
    return cuda::make_skinny_product_runner(spec, std::get<MatMulParams>(plan), why);
  };
  for (const char* name : {"logits", "projected"}) check_own_runner(b, name, "fp16", false, 3e-3, skinny);
}

// The own pooling kernel channels-last (8 channels per thread, and one where C is odd) and NCHW:
// PoolFormer's 3x3 average at stride 1 without the pads in the count, a strided max pool.
TEST(MeasureGpuOwnKernels, PoolsInBothLayouts) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 16, 13, 12}).input("odd", kFloat, Shape{2, 5, 9, 9});
  auto pool = [&](const char* op, const std::string& x, const std::string& y, int64_t stride, int64_t include_pad) {
    auto& node = b.node(op, {x}, {y});
    set_attr(node, "kernel_shape", std::vector<int64_t>{3, 3});
    set_attr(node, "strides", std::vector<int64_t>{stride, stride});
    set_attr(node, "pads", std::vector<int64_t>{1, 1, 1, 1});
    if (std::string(op) == "AveragePool") set_attr(node, "count_include_pad", include_pad);
    b.output(y);
  };
  pool("AveragePool", "x", "avg", 1, 0);
  pool("AveragePool", "x", "avg_padded", 2, 1);
  pool("MaxPool", "x", "max", 2, 0);
  pool("AveragePool", "odd", "avg_odd", 1, 0);
  const auto own = [](const NodeSpec& spec, const OpPlan& plan, std::string* why) { return cuda::make_kernel_runner(spec, plan, why); };
  for (const char* name : {"avg", "avg_padded", "max", "avg_odd"}) {
    check_own_runner(b, name, "fp16", true, 3e-3, own);
    check_own_runner(b, name, "fp16", false, 3e-3, own);
    check_own_runner(b, name, "fp32", false, 1e-6, own);
  }
}

// Rows of 1024 elements or more reduce with a block per row: 16-byte loads where the row length
// is a multiple of the vector (40x40), one element at a time where not (33x33, 1100).
TEST(MeasureGpuOwnKernels, LongRowReductionsVectorAndScalar) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("even", kFloat, Shape{2, 3, 40, 40}).input("odd", kFloat, Shape{1, 2, 33, 33}).input("rows", kFloat, Shape{3, 1100});
  b.node("GlobalAveragePool", {"even"}, {"gap_even"});
  b.node("GlobalAveragePool", {"odd"}, {"gap_odd"});
  b.node("GlobalMaxPool", {"even"}, {"max_even"});
  set_attr(b.node("ReduceSumSquare", {"rows"}, {"sumsq"}), "axes", std::vector<int64_t>{1});
  b.output("gap_even").output("gap_odd").output("max_even").output("sumsq");
  for (const char* name : {"gap_even", "gap_odd", "max_even", "sumsq"}) check_both(b, name, 1e-5, 3e-3);
}

// Columns along a long non-last axis in fewer tiles than the GPU has SMs (CoaT's softmax over
// tokens, 8 heads of 8 channels) share each tile among a cluster of blocks, their partials merged
// through distributed shared memory; many tiles keep a 256-thread block each.
TEST(MeasureGpuOwnKernels, ColumnSoftmaxAndReductionFewAndManyTiles) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("few", kFloat, Shape{1, 2, 3137, 8}).input("many", kFloat, Shape{160, 70, 8});
  set_attr(b.node("Softmax", {"few"}, {"softmax_few"}), "axis", int64_t{2});
  set_attr(b.node("LogSoftmax", {"many"}, {"log_softmax_many"}), "axis", int64_t{1});
  set_attr(b.node("ReduceMean", {"few"}, {"mean_few"}), "axes", std::vector<int64_t>{2});
  set_attr(b.node("ReduceMax", {"many"}, {"max_many"}), "axes", std::vector<int64_t>{1});
  for (const char* name : {"softmax_few", "log_softmax_many", "mean_few", "max_many"}) b.output(name);
  for (const char* name : {"softmax_few", "log_softmax_many", "mean_few", "max_many"}) check_both(b, name, 1e-5, 3e-3);
}

TEST(MeasureGpuOwnKernels, TopKLargestAndSmallest) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("scores", kFloat, Shape{3, 100}).ints("k", {5}, Shape{1});
  b.node("TopK", {"scores", "k"}, {"top", "top_index"});
  auto& low = b.node("TopK", {"scores", "k"}, {"low", "low_index"});
  set_attr(low, "largest", int64_t{0});
  b.output("top").output("top_index").output("low").output("low_index");
  check_node(b, "top", "fp32", 1e-7);
  check_node(b, "low", "fp32", 1e-7);
}

// One long row (a detection head's scores) takes the device-wide radix sort instead of the
// segmented sort: ties in fp16 must still put the lower index first.
TEST(MeasureGpuOwnKernels, TopKOfOneLongRow) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("scores", kFloat, Shape{1, 20000}).ints("k", {300}, Shape{1});
  b.node("TopK", {"scores", "k"}, {"top", "top_index"});
  auto& low = b.node("TopK", {"scores", "k"}, {"low", "low_index"});
  set_attr(low, "largest", int64_t{0});
  b.output("top").output("top_index").output("low").output("low_index");
  for (const char* dtype : {"fp32", "fp16"}) {
    check_node(b, "top", dtype, 1e-7);
    check_node(b, "low", dtype, 1e-7);
  }
}

TEST(MeasureGpuOwnKernels, PadReflectEdgeAndWrap) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(19);
  b.input("x", kFloat, Shape{2, 3, 5, 6}).ints("pads", {0, 0, 2, 1, 0, 0, 1, 3}, Shape{8});
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    set_attr(b.node("Pad", {"x", "pads"}, {mode}), "mode", std::string(mode));
    b.output(mode);
  }
  for (const char* mode : {"reflect", "edge", "wrap"}) check_both(b, mode, 1e-7, 1e-7);
}

TEST(MeasureGpuOwnKernels, CubicResize) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 3, 7, 9}).floats("roi", {}, {0}).floats("scales", {1, 1, 2, 1.5f});
  auto& up = b.node("Resize", {"x", "roi", "scales"}, {"cubic"});
  set_attr(up, "mode", std::string("cubic"));
  auto& excl = b.node("Resize", {"x", "roi", "scales"}, {"cubic_excl"});
  set_attr(excl, "mode", std::string("cubic"));
  set_attr(excl, "exclude_outside", int64_t{1});
  set_attr(excl, "cubic_coeff_a", -0.5f);
  b.output("cubic").output("cubic_excl");
  check_both(b, "cubic", 1e-5, 3e-3);
  check_both(b, "cubic_excl", 1e-5, 3e-3);
}

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
