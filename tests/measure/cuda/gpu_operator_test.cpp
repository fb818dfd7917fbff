// Every GPU operator against the CPU reference on small random inputs, in fp32 and fp16; then
// whole models through the GPU backend. Skips without an NVIDIA GPU (and compiles to nothing
// without the CUDA toolkit).
#ifdef MODELCOST_HAVE_CUDA

#include "gpu_check.h"

namespace modelcost::testing {

TEST(MeasureGpuOperators, UnaryActivations) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4, 5});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Abs", "Neg"}) b.node(op, {"x"}, {std::string("y") + op});
  b.floats("lo", {-0.5f}, {}).floats("hi", {0.25f}, {});
  b.node("Clip", {"x", "lo", "hi"}, {"clip"});
  b.output("yRelu").output("clip");
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Abs", "Neg"}) check_both(b, std::string("y") + op, 2e-6);
  check_both(b, "clip");
}

TEST(MeasureGpuOperators, BroadcastBinary) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4, 8}).input("row", kFloat, Shape{8}).input("chan", kFloat, Shape{3, 1, 1});
  b.input("same", kFloat, Shape{2, 3, 4, 8}).input("odd", kFloat, Shape{2, 3, 5, 7}).input("col", kFloat, Shape{5, 1});
  b.node("Add", {"x", "row"}, {"add_row"});
  b.node("Mul", {"x", "chan"}, {"mul_chan"});
  b.node("Sub", {"x", "same"}, {"sub_same"});
  b.node("Div", {"odd", "col"}, {"div_col"});
  // GELU's x / sqrt(2): fp16 divides with __fdividef, vector path (8 halves per thread).
  b.floats("sqrt2", {1.41421356f}, {});
  b.node("Div", {"x", "sqrt2"}, {"div_scalar"});
  b.output("add_row").output("mul_chan").output("sub_same").output("div_col").output("div_scalar");
  for (const char* n : {"add_row", "mul_chan", "sub_same", "div_scalar"}) check_both(b, n);
  check_node(b, "div_col", "fp32", 1e-5);
}

TEST(MeasureGpuOperators, DataMovement) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4, 8}).input("z", kFloat, Shape{2, 5, 4, 8}).input("idx", kInt64, Shape{5});
  set_attr(b.node("Transpose", {"x"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  set_attr(b.node("Transpose", {"x"}, {"t2"}), "perm", std::vector<int64_t>{3, 1, 0, 2});
  set_attr(b.node("Concat", {"x", "z"}, {"cat"}), "axis", int64_t{1});
  b.ints("st", {1, 2}).ints("en", {3, 8}).ints("ax", {1, 3}).ints("sp", {1, 3});
  b.node("Slice", {"x", "st", "en", "ax", "sp"}, {"sl"});
  b.ints("one", {1}, {});
  set_attr(b.node("Gather", {"z", "one"}, {"gs"}), "axis", int64_t{1});
  set_attr(b.node("Gather", {"z", "idx"}, {"gi"}), "axis", int64_t{2});
  b.ints("pads", {0, 0, 1, 2, 0, 0, 3, 0});
  b.node("Pad", {"x", "pads"}, {"pad"});
  b.ints("shape", {2, 3, 4, 8});
  b.input("small", kFloat, Shape{3, 1, 8});
  b.node("Expand", {"small", "shape"}, {"ex"});
  for (const char* n : {"t", "t2", "cat", "sl", "gs", "pad", "ex"}) b.output(n);
  b.output("gi");
  for (const char* n : {"t", "t2", "cat", "sl", "gs", "pad", "ex"}) check_both(b, n, 1e-7, 1e-7);
  check_node(b, "gi", "fp32", 1e-7);
  check_node(b, "gi", "fp16", 1e-7);
}

// A Concat of many inputs and a Split into several outputs run as one batched copy: inputs of
// odd and even channel counts (the common vector width drops), and axes inner and outer.
TEST(MeasureGpuOperators, BatchedConcatAndSplit) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  std::vector<std::string> parts;
  for (int k = 0; k < 20; ++k) {
    parts.push_back("p" + std::to_string(k));
    b.input(parts.back(), kFloat, Shape{2, 1 + (k * 7) % 9, 5, 6});
  }
  set_attr(b.node("Concat", parts, {"cat"}), "axis", int64_t{1});
  set_attr(b.node("Concat", {"p0", "p9"}, {"cat_w"}), "axis", int64_t{3});
  b.input("x", kFloat, Shape{4, 24, 8});
  b.ints("sizes", {8, 8, 8});
  set_attr(b.node("Split", {"x", "sizes"}, {"s0", "s1", "s2"}), "axis", int64_t{1});
  for (const char* n : {"cat", "cat_w", "s0", "s1", "s2"}) b.output(n);
  for (const char* n : {"cat", "cat_w", "s0"}) check_both(b, n, 1e-7, 1e-7);  // s0 names the Split node
}

TEST(MeasureGpuOperators, ReductionsSoftmaxLayerNorm) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{4, 3, 197}).input("img", kFloat, Shape{2, 16, 7, 7}).input("seq", kFloat, Shape{2, 9, 768});
  b.weight("gamma", kFloat, Shape{768}).weight("beta", kFloat, Shape{768});
  set_attr(b.node("ReduceMean", {"x"}, {"rm"}), "axes", std::vector<int64_t>{-1});
  set_attr(b.node("ReduceMax", {"x"}, {"rmax"}), "axes", std::vector<int64_t>{1});
  b.node("GlobalAveragePool", {"img"}, {"gap"});
  b.node("Softmax", {"x"}, {"sm"});
  set_attr(b.node("Softmax", {"x"}, {"sm1"}), "axis", int64_t{1});
  b.node("LayerNormalization", {"seq", "gamma", "beta"}, {"ln"});
  for (const char* n : {"rm", "rmax", "gap", "sm", "sm1", "ln"}) b.output(n);
  for (const char* n : {"rm", "rmax", "gap", "sm", "sm1"}) check_both(b, n, 1e-5, 3e-3);
  check_both(b, "ln", 1e-5, 3e-3);
}

TEST(MeasureGpuOperators, ConvolutionAndPooling) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 8, 10, 10}).weight("w", kFloat, Shape{16, 8, 3, 3}).weight("bias", kFloat, Shape{16});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"conv"});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "strides", std::vector<int64_t>{2, 2});
  b.weight("dw", kFloat, Shape{8, 1, 3, 3});
  auto& depthwise = b.node("Conv", {"x", "dw"}, {"depthwise"});
  set_attr(depthwise, "group", int64_t{8});
  set_attr(depthwise, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& mp = b.node("MaxPool", {"x"}, {"mp"});
  set_attr(mp, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(mp, "strides", std::vector<int64_t>{2, 2});
  set_attr(mp, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& ap = b.node("AveragePool", {"x"}, {"ap"});
  set_attr(ap, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(ap, "strides", std::vector<int64_t>{2, 2});
  // 3 input channels: a patch conv (kernel == stride) runs as gather + GEMM; a 5x5/2 stem takes
  // the timed choice of layout and algorithm.
  b.input("rgb", kFloat, Shape{2, 3, 32, 30}).weight("patch_w", kFloat, Shape{16, 3, 8, 6}).weight("patch_b", kFloat, Shape{16});
  auto& patch = b.node("Conv", {"rgb", "patch_w", "patch_b"}, {"patch"});
  set_attr(patch, "strides", std::vector<int64_t>{8, 6});
  b.weight("stem_w", kFloat, Shape{8, 3, 5, 5}).weight("stem_b", kFloat, Shape{8});
  auto& stem = b.node("Conv", {"rgb", "stem_w", "stem_b"}, {"stem"});
  set_attr(stem, "strides", std::vector<int64_t>{2, 2});
  set_attr(stem, "pads", std::vector<int64_t>{2, 2, 2, 2});
  // Kernels within their strides gather spaced patches: a strided 1x1 and a 2x2 window every 3.
  b.weight("skip_w", kFloat, Shape{16, 3, 1, 1}).weight("spaced_w", kFloat, Shape{16, 3, 2, 2});
  set_attr(b.node("Conv", {"rgb", "skip_w"}, {"skip"}), "strides", std::vector<int64_t>{2, 2});
  set_attr(b.node("Conv", {"rgb", "spaced_w"}, {"spaced"}), "strides", std::vector<int64_t>{3, 3});
  b.node("Conv", {"rgb", "skip_w"}, {"mix"});  // 1x1, stride 1: channels-last the input is the GEMM's matrix
  b.output("conv").output("depthwise").output("mp").output("ap").output("patch").output("stem").output("skip").output("spaced").output("mix");
  // fp32 convolutions may run on TF32 tensor cores (PyTorch's cuDNN default): ~1e-3 relative.
  check_both(b, "conv", 5e-3, 3e-3);
  check_both(b, "depthwise", 5e-3, 3e-3);
  check_both(b, "patch", 5e-3, 3e-3);
  check_both(b, "skip", 5e-3, 3e-3);
  check_both(b, "spaced", 5e-3, 3e-3);
  check_node(b, "spaced", "fp16", 3e-3, /*channels_last=*/true);
  check_node(b, "skip", "fp16", 3e-3, /*channels_last=*/true);  // a patch row of 3, padded to 8 for the GEMM
  check_both(b, "mix", 5e-3, 3e-3);
  check_node(b, "mix", "fp16", 3e-3, /*channels_last=*/true);
  check_both(b, "stem", 5e-3, 3e-3);
  check_both(b, "mp", 1e-7, 1e-7);
  check_both(b, "ap", 1e-6, 2e-3);
  check_node(b, "conv", "fp16", 3e-3, /*channels_last=*/true);
  check_node(b, "patch", "fp16", 3e-3, /*channels_last=*/true);
  check_node(b, "mp", "fp16", 1e-7, /*channels_last=*/true);
}

TEST(MeasureGpuOperators, MatMulAndGemm) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 5, 16}).weight("w", kFloat, Shape{16, 24});
  b.node("MatMul", {"x", "w"}, {"shared"});
  b.input("q", kFloat, Shape{2, 4, 8, 16}).input("k", kFloat, Shape{2, 4, 16, 8});
  b.node("MatMul", {"q", "k"}, {"batched"});
  b.input("a", kFloat, Shape{6, 32}).weight("fw", kFloat, Shape{10, 32}).weight("fb", kFloat, Shape{10});
  set_attr(b.node("Gemm", {"a", "fw", "fb"}, {"gemm"}), "transB", int64_t{1});
  b.weight("full", kFloat, Shape{6, 10});
  auto& g2 = b.node("Gemm", {"a", "fw", "full"}, {"gemm_full"});
  set_attr(g2, "transB", int64_t{1});
  set_attr(g2, "beta", 0.5f);
  b.output("shared").output("batched").output("gemm").output("gemm_full");
  for (const char* n : {"shared", "batched", "gemm", "gemm_full"}) check_both(b, n, 1e-5, 3e-3);
}

TEST(MeasureGpuOperators, Resize) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 2, 5, 6});
  b.floats("roi", {}, {0}).floats("scales", {1, 1, 2, 2});
  b.node("Resize", {"x", "roi", "scales"}, {"nearest"});
  set_attr(b.node("Resize", {"x", "roi", "scales"}, {"linear"}), "mode", std::string("linear"));
  b.output("nearest").output("linear");
  check_both(b, "nearest", 1e-7, 1e-7);
  check_both(b, "linear", 1e-6, 3e-3);
}

// Output rows of whole 8-element runs take the row kernel (16-byte stores); an odd scale and
// align_corners move the source coordinates off the pixel grid.
TEST(MeasureGpuOperators, ResizeByRowRuns) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 5, 12});
  b.floats("roi", {}, {0}).floats("scales", {1, 1, 2.4f, 2});
  b.node("Resize", {"x", "roi", "scales"}, {"nearest"});
  set_attr(b.node("Resize", {"x", "roi", "scales"}, {"linear"}), "mode", std::string("linear"));
  auto& corners = b.node("Resize", {"x", "roi", "scales"}, {"corners"});
  set_attr(corners, "mode", std::string("linear"));
  set_attr(corners, "coordinate_transformation_mode", std::string("align_corners"));
  b.output("nearest").output("linear").output("corners");
  check_both(b, "nearest", 1e-7, 1e-7);
  check_both(b, "linear", 1e-6, 3e-3);
  check_both(b, "corners", 1e-6, 3e-3);
}

// More rows than the grid has row lanes: each thread walks several rows with its columns kept.
TEST(MeasureGpuOperators, ResizeRowsBeyondOneGrid) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4, 64, 64, 64});
  b.floats("roi", {}, {0}).floats("scales", {1, 1, 2, 2});
  set_attr(b.node("Resize", {"x", "roi", "scales"}, {"linear"}), "mode", std::string("linear"));
  b.node("Resize", {"x", "roi", "scales"}, {"nearest"});
  b.output("linear").output("nearest");
  check_both(b, "linear", 1e-6, 3e-3);
  check_both(b, "nearest", 1e-7, 1e-7);
}

// Upsampling by 4 and 8 (a segmentation head's logits): a run's eight outputs share two or three
// source columns; the edges clamp.
TEST(MeasureGpuOperators, ResizeLargeUpsampling) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 5, 7, 9});
  b.floats("roi", {}, {0}).floats("by4", {1, 1, 4, 4}).floats("by8", {1, 1, 8, 8});
  set_attr(b.node("Resize", {"x", "roi", "by4"}, {"four"}), "mode", std::string("linear"));
  set_attr(b.node("Resize", {"x", "roi", "by8"}, {"eight"}), "mode", std::string("linear"));
  auto& corners = b.node("Resize", {"x", "roi", "by8"}, {"corners"});
  set_attr(corners, "mode", std::string("linear"));
  set_attr(corners, "coordinate_transformation_mode", std::string("align_corners"));
  b.output("four").output("eight").output("corners");
  for (const char* n : {"four", "eight", "corners"}) check_both(b, n, 1e-6, 3e-3);
}

TEST(MeasureGpuOperators, TiledTransposes) {
  SKIP_WITHOUT_GPU();
  // Innermost output dim strided in the input while another dim is contiguous there: the
  // shared-memory tile path (2-byte elements in fp16, 4-byte in fp32), with partial tiles.
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 37, 3, 40}).input("k", kFloat, Shape{3, 197, 64}).input("c", kFloat, Shape{5, 33, 17});
  set_attr(b.node("Transpose", {"x"}, {"t4"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 1});
  set_attr(b.node("Transpose", {"c"}, {"rev"}), "perm", std::vector<int64_t>{2, 1, 0});
  b.output("t4").output("kt").output("rev");
  for (const char* n : {"t4", "kt", "rev"}) check_both(b, n, 1e-7, 1e-7);
}

TEST(MeasureGpuOperators, ThinTransposes) {
  SKIP_WITHOUT_GPU();
  // A side of 8, 4 or 2 elements (CoaT's heads of 8 channels): one packed vector a thread, read
  // (rows thin in the source) or written (columns thin in the destination); 8 fp32 elements are
  // 32 bytes, past the vector: the tile path.
  ModelBuilder b(13);
  b.input("rows8", kFloat, Shape{2, 3, 40, 8}).input("cols8", kFloat, Shape{2, 3, 8, 40});
  b.input("rows4", kFloat, Shape{3, 50, 4}).input("cols2", kFloat, Shape{3, 2, 70});
  set_attr(b.node("Transpose", {"rows8"}, {"a"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  set_attr(b.node("Transpose", {"cols8"}, {"b"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  set_attr(b.node("Transpose", {"rows4"}, {"c"}), "perm", std::vector<int64_t>{0, 2, 1});
  set_attr(b.node("Transpose", {"cols2"}, {"d"}), "perm", std::vector<int64_t>{0, 2, 1});
  b.output("a").output("b").output("c").output("d");
  for (const char* n : {"a", "b", "c", "d"}) check_both(b, n, 1e-7, 1e-7);
}

TEST(MeasureGpuOperators, SoftmaxAndLayerNormRowLengths) {
  SKIP_WITHOUT_GPU();
  // Softmax rows of 1..32 per lane held in registers, and the long-row fallback; layer norm in
  // 16-byte vectors (768: 3 vectors per lane in fp16), one block per row for wider rows (4096;
  // 8200: 5 vectors a thread in fp16, past the block kernel in fp32) and the scalar fallback (100).
  ModelBuilder b(17);
  b.input("s20", kFloat, Shape{3, 20}).input("s1000", kFloat, Shape{5, 1000}).input("s3000", kFloat, Shape{2, 3000});
  b.node("Softmax", {"s20"}, {"sm20"});
  b.node("Softmax", {"s1000"}, {"sm1000"});
  b.node("Softmax", {"s3000"}, {"sm3000"});
  b.node("LogSoftmax", {"s1000"}, {"lsm1000"});
  // 197 (ViT's attention rows): 4 rows per warp, 45 rows leave the last warp's group partial.
  b.input("s197", kFloat, Shape{3, 15, 197});
  b.node("Softmax", {"s197"}, {"sm197"});
  b.node("LogSoftmax", {"s197"}, {"lsm197"});
  b.input("l768", kFloat, Shape{6, 768}).input("l100", kFloat, Shape{7, 100}).input("l2048", kFloat, Shape{3, 2048});
  b.weight("g768", kFloat, Shape{768}).weight("g100", kFloat, Shape{100}).weight("b100", kFloat, Shape{100});
  b.weight("g2048", kFloat, Shape{2048});  // ONNX requires the scale (the arity check refuses a node without)
  b.node("LayerNormalization", {"l768", "g768"}, {"ln768"});
  b.node("LayerNormalization", {"l100", "g100", "b100"}, {"ln100"});
  b.node("LayerNormalization", {"l2048", "g2048"}, {"ln2048"});
  b.input("l4096", kFloat, Shape{3, 4096}).input("l8200", kFloat, Shape{2, 8200});
  b.weight("g4096", kFloat, Shape{4096}).weight("b4096", kFloat, Shape{4096}).weight("g8200", kFloat, Shape{8200});
  b.node("LayerNormalization", {"l4096", "g4096", "b4096"}, {"ln4096"});
  b.node("LayerNormalization", {"l8200", "g8200"}, {"ln8200"});
  // Short rows several to a warp (8 to 64 channels: 1 to 16 vectors; row counts that leave the
  // last warp's rows partial).
  for (int64_t width : {8, 24, 32, 64}) {
    const std::string w = std::to_string(width);
    b.input("l" + w, kFloat, Shape{45, width}).weight("g" + w, kFloat, Shape{width}).weight("b" + w, kFloat, Shape{width});
    b.node("LayerNormalization", {"l" + w, "g" + w, "b" + w}, {"ln" + w});
  }
  for (const char* n : {"sm20", "sm1000", "sm3000", "lsm1000", "sm197", "lsm197", "ln768", "ln100", "ln2048", "ln4096", "ln8200",
                        "ln8", "ln24", "ln32", "ln64"})
    b.output(n);
  for (const char* n : {"sm20", "sm1000", "sm3000", "lsm1000", "sm197", "lsm197"}) check_both(b, n, 1e-5, 3e-3);
  for (const char* n : {"ln768", "ln100", "ln2048", "ln4096", "ln8200", "ln8", "ln24", "ln32", "ln64"}) check_both(b, n, 1e-5, 3e-3);
}

TEST(MeasureGpuOperators, InstanceAndGroupNorm) {
  SKIP_WITHOUT_GPU();
  // A row per channel (16-byte vectors over 8x8 pixels); poolformer's single group per image, long
  // enough to be sliced; groups of 2 channels of 35 pixels (scalar loads) with scale and bias per
  // channel and per group.
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{2, 6, 8, 8}).weight("s6", kFloat, Shape{6}).weight("b6", kFloat, Shape{6});
  b.node("InstanceNormalization", {"x", "s6", "b6"}, {"in"});
  b.input("image", kFloat, Shape{2, 1, 40000}).weight("s1", kFloat, Shape{1}).weight("b1", kFloat, Shape{1});
  b.node("InstanceNormalization", {"image", "s1", "b1"}, {"in_long"});
  b.input("odd", kFloat, Shape{3, 4, 5, 7}).weight("s4", kFloat, Shape{4}).weight("b4", kFloat, Shape{4});
  b.weight("s2", kFloat, Shape{2}).weight("b2", kFloat, Shape{2});
  set_attr(b.node("GroupNormalization", {"odd", "s4", "b4"}, {"gn"}), "num_groups", int64_t{2});
  set_attr(b.node("GroupNormalization", {"odd", "s2", "b2"}, {"gn_per_group"}), "num_groups", int64_t{2});
  for (const char* n : {"in", "in_long", "gn", "gn_per_group"}) b.output(n);
  for (const char* n : {"in", "in_long", "gn", "gn_per_group"}) check_both(b, n, 1e-4, 5e-3);
}

TEST(MeasureGpuOperators, LongColumnsSplitOverBlocks) {
  SKIP_WITHOUT_GPU();
  // Softmax over tokens with a small inner dim (a factorized attention's [B, heads, N, C]) and
  // reductions over an NHWC image: columns of thousands of elements split over a block's threads.
  ModelBuilder b(17);
  b.input("tokens", kFloat, Shape{2, 3, 3000, 8}).input("nhwc", kFloat, Shape{2, 20, 20, 40});
  set_attr(b.node("Softmax", {"tokens"}, {"sm"}), "axis", int64_t{2});
  set_attr(b.node("LogSoftmax", {"tokens"}, {"lsm"}), "axis", int64_t{2});
  set_attr(b.node("ReduceMean", {"nhwc"}, {"mean"}), "axes", std::vector<int64_t>{1, 2});
  set_attr(b.node("ReduceL2", {"nhwc"}, {"l2"}), "axes", std::vector<int64_t>{1, 2});
  set_attr(b.node("ReduceMax", {"tokens"}, {"max"}), "axes", std::vector<int64_t>{2});
  set_attr(b.node("ReduceLogSumExp", {"tokens"}, {"lse"}), "axes", std::vector<int64_t>{2});
  for (const char* n : {"sm", "lsm", "mean", "l2", "max", "lse"}) b.output(n);
  for (const char* n : {"sm", "lsm", "mean", "l2", "max", "lse"}) check_both(b, n, 1e-5, 3e-3);
}

TEST(MeasureGpuOperators, BatchNormWhereTileCast) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(15);
  b.input("x", kFloat, Shape{2, 6, 5, 7});
  for (const char* p : {"scale", "bias", "mean", "var"}) b.weight(p, kFloat, Shape{6});
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"bn"});
  // Planes of 8 x 8: whole 16-byte vectors of one channel (the vector kernel).
  b.input("planes", kFloat, Shape{2, 6, 8, 8});
  b.node("BatchNormalization", {"planes", "scale", "bias", "mean", "var"}, {"bn_vectors"});
  b.input("cond", kBool, Shape{5, 1}).input("a", kFloat, Shape{2, 5, 8}).input("z", kFloat, Shape{8});
  b.node("Where", {"cond", "a", "z"}, {"where"});
  b.ints("reps", {2, 1, 3});
  b.node("Tile", {"a", "reps"}, {"tile"});
  set_attr(b.node("Cast", {"a"}, {"half"}), "to", int64_t{kFloat16});
  b.input("h", kFloat16, Shape{3, 9});
  set_attr(b.node("Cast", {"h"}, {"single"}), "to", int64_t{kFloat});
  for (const char* n : {"bn", "bn_vectors", "where", "tile", "half", "single"}) b.output(n);
  check_both(b, "bn", 1e-5, 3e-3);
  check_both(b, "bn_vectors", 1e-5, 3e-3);
  check_both(b, "where", 1e-7, 1e-7);
  check_both(b, "tile", 1e-7, 1e-7);
  check_node(b, "half", "", 1e-7);    // fp32 -> fp16 (the model's own dtypes)
  check_node(b, "single", "", 1e-7);  // fp16 -> fp32
}

TEST(MeasureGpuBackend, MeasuresResNet50NodesAndWholeModel) {
  SKIP_WITHOUT_GPU();
  ShapeOptions shapes;
  shapes.dims["batch"] = 1;
  shapes.dims["batch_size"] = 1;
  auto run = analyse_file(std::string(MODELCOST_SOURCE_DIR) + "/samples/resnet50.onnx", shapes);
  auto backend = make_backend(false);
  EXPECT_TRUE(backend->device().is_gpu);
  MeasureOptions o;
  o.dtype = "fp16";
  o.max_seconds_per_node = 0.05;
  auto nodes = measure_nodes(run->analysis, *backend, o);
  for (size_t i = 0; i < nodes.size(); ++i)
    EXPECT_TRUE(nodes[i].measured) << run->analysis.nodes[i].node->name << ": " << nodes[i].reason;
  ModelMeasurement whole = measure_model(run->analysis, *backend, o, nodes);
  ASSERT_TRUE(whole.measured) << whole.reason;
  EXPECT_GT(whole.median_us, 0);
  EXPECT_GT(whole.sum_of_node_medians_us, 0);
  // The replay's own kernels: at least one per Conv (53), busy no longer than the replay, and
  // the same work as the per-node runs (L2 state and clocks differ, hence the wide margin).
  ASSERT_TRUE(whole.has_kernel_breakdown);
  EXPECT_GE(whole.kernels_per_run, 53);
  EXPECT_GT(whole.kernel_busy_us, 0);
  EXPECT_LE(whole.kernel_busy_us, whole.kernel_span_us * 1.001);
  EXPECT_LE(whole.kernel_span_us, whole.median_us * 1.05);
  EXPECT_NEAR(whole.kernel_busy_us / whole.sum_of_node_medians_us, 1.0, 0.4);
}

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
