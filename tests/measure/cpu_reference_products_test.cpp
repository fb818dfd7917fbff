// The CPU reference of Einsum, ConvTranspose, the recurrent layers and the quantization ops:
// hand-computed cases (ONNX's documented examples where it has them), and for the plans'
// GPU forms an independent check on the host: Einsum's packed product against its loop nest,
// ConvTranspose as the adjoint of Conv.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "measure/cpu_reference.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

struct NodeRun {
  NodeSpec spec;
  OpPlan plan;
  std::vector<HostTensor> inputs, outputs;
};

// Runs node `name` on the CPU reference; inputs without values get seeded random contents.
NodeRun run_on(const AnalysisRun& run, const std::string& name, const std::vector<std::vector<float>>& values) {
  NodeRun r{make_node_spec(run.node(name), ""), {}, {}, {}};
  r.plan = plan_operation(r.spec);
  EXPECT_FALSE(is_unsupported(r.plan)) << name << ": " << plan_reason(r.plan);
  for (size_t i = 0; i < r.spec.inputs.size(); ++i) {
    HostTensor t = random_input(r.spec, r.plan, i, 7 + i);
    if (i < values.size() && !values[i].empty()) t.data = values[i];
    r.inputs.push_back(t);
  }
  std::vector<const HostTensor*> in;
  for (size_t i = 0; i < r.inputs.size(); ++i) in.push_back(r.spec.has_input(i) ? &r.inputs[i] : nullptr);
  r.outputs = make_outputs(r.spec);
  run_cpu_reference(r.spec, r.plan, in, r.outputs);
  return r;
}

void host_copy(const StridedCopy& c, const std::vector<float>& src, std::vector<float>& dst) {
  const size_t rank = c.dims.size();
  int64_t n = 1;
  for (int64_t d : c.dims) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, s = c.src_offset, t = c.dst_offset;
    for (size_t d = rank; d-- > 0;) {
      const int64_t idx = rest % c.dims[d];
      rest /= c.dims[d];
      s += idx * c.src_strides[d];
      t += idx * c.dst_strides[d];
    }
    dst[t] = src[s];
  }
}

// The GPU form of a contraction (pack, product, unpack) run on the host.
std::vector<float> packed_form(const ContractionPlan& p, const HostTensor& a, const HostTensor& b, size_t out_elements) {
  const MatMulParams& g = p.gemm;
  HostTensor pa = a, pb = b;
  if (p.pack_a) pa.data.assign(g.batch * g.m * g.k, 0), host_copy(p.a_to_packed, a.data, pa.data);
  if (p.pack_b) pb.data.assign(g.batch * g.k * g.n, 0), host_copy(p.b_to_packed, b.data, pb.data);
  HostTensor product(Shape{g.batch, g.m, g.n}, kFloat);
  cpu_matmul(g, pa, pb, nullptr, product);
  if (!p.unpack_output) return product.data;
  std::vector<float> out(out_elements);
  host_copy(p.packed_to_output, product.data, out);
  return out;
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = a.size() == b.size() ? 0 : 1e9;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::fabs(double(a[i]) - b[i]));
  return d;
}

}  // namespace

TEST(MeasureCpuReferenceProducts, EinsumLoopNestMatchesHandComputedProducts) {
  ModelBuilder b(13);
  b.input("a", kFloat, Shape{2, 3}).input("v", kFloat, Shape{3});
  set_attr(b.node("Einsum", {"a", "v"}, {"av"}), "equation", std::string("ij,j->i"));
  set_attr(b.node("Einsum", {"a"}, {"at"}), "equation", std::string("ij->ji"));
  b.output("av").output("at");
  auto run = analyse(b);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(run_on(*run, "av", {a, {1, 10, 100}}).outputs[0].data, (std::vector<float>{321, 654}));
  EXPECT_EQ(run_on(*run, "at", {a}).outputs[0].data, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(MeasureCpuReferenceProducts, EinsumPackedProductMatchesTheLoopNest) {
  struct Case { const char* equation; Shape a, b; bool packs; };
  const Case cases[] = {
      {"bhid,bhjd->bhij", {2, 3, 4, 5}, {2, 3, 6, 5}, false},  // attention scores: B transposed, no copy
      {"bhij,bhjd->bhid", {2, 3, 4, 6}, {2, 3, 6, 5}, false},
      {"bij,jk->bik", {2, 4, 3}, {3, 5}, false},
      {"ibnd,jbnd->bnij", {4, 2, 3, 5}, {6, 2, 3, 5}, true},  // Transformer-XL: packs and unpacks
      {"ij,kj->ik", {1, 4}, {3, 4}, false},
      {"b i d, b j d -> b j i", {2, 3, 4}, {2, 5, 4}, true},
  };
  for (const Case& c : cases) {
    ModelBuilder b(13);
    b.input("a", kFloat, c.a).input("b", kFloat, c.b);
    set_attr(b.node("Einsum", {"a", "b"}, {"y"}), "equation", std::string(c.equation));
    b.output("y");
    auto run = analyse(b);
    const NodeRun r = run_on(*run, "y", {});
    const auto& p = std::get<ContractionPlan>(r.plan);
    EXPECT_EQ(p.pack_a || p.pack_b || p.unpack_output, c.packs) << c.equation;
    EXPECT_LT(max_difference(packed_form(p, r.inputs[0], r.inputs[1], r.outputs[0].data.size()), r.outputs[0].data), 1e-5)
        << c.equation;
  }
}

TEST(MeasureCpuReferenceProducts, EinsumOfThreeOperandsNamesItsReason) {
  ModelBuilder b(13);
  b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{4, 3, 5}).input("c", kFloat, Shape{2, 5});
  set_attr(b.node("Einsum", {"a", "b", "c"}, {"y"}), "equation", std::string("bn,anm,bm->ba"));
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(plan_reason(plan_operation(make_node_spec(run->node("y"), ""))), "Einsum of 3 operands");
}

TEST(MeasureCpuReferenceProducts, ConvTransposeHandComputedAndAdjointOfConv) {
  ModelBuilder b(13);
  b.input("x1", kFloat, Shape{1, 1, 3}).input("w1", kFloat, Shape{1, 1, 2});
  auto& one = b.node("ConvTranspose", {"x1", "w1"}, {"y1"});
  set_attr(one, "strides", std::vector<int64_t>{2});
  set_attr(one, "pads", std::vector<int64_t>{1, 1});
  // 2-D, groups, stride, dilation, output_padding, bias.
  b.input("x", kFloat, Shape{2, 4, 5, 4}).input("w", kFloat, Shape{4, 3, 3, 2}).input("bias", kFloat, Shape{6});
  auto& two = b.node("ConvTranspose", {"x", "w", "bias"}, {"y"});
  set_attr(two, "group", int64_t{2});
  set_attr(two, "strides", std::vector<int64_t>{2, 3});
  set_attr(two, "dilations", std::vector<int64_t>{2, 1});
  set_attr(two, "pads", std::vector<int64_t>{1, 0, 1, 0});
  set_attr(two, "output_padding", std::vector<int64_t>{1, 2});
  b.output("y1").output("y");
  auto run = analyse(b);
  // Unpadded [1, 10, 2, 20, 3, 30]; pads 1 and 1 drop the first and last.
  EXPECT_EQ(run_on(*run, "y1", {{1, 2, 3}, {1, 10}}).outputs[0].data, (std::vector<float>{10, 2, 20, 3}));

  // <ConvTranspose(x), y> == <x, Conv(y)> with the same weights (no bias).
  NodeRun r = run_on(*run, "y", {{}, {}, std::vector<float>(6, 0.f)});
  const auto& t = std::get<ConvTransposePlan>(r.plan).conv;
  ConvParams forward = t;
  std::swap(forward.in_channels, forward.out_channels);
  std::swap(forward.in_size, forward.out_size);
  forward.has_bias = false;
  HostTensor probe(r.outputs[0].shape, kFloat), conv_out(r.inputs[0].shape, kFloat);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : probe.data) v = dist(rng);
  cpu_conv(forward, probe, r.inputs[1], nullptr, conv_out);
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < probe.data.size(); ++i) lhs += double(r.outputs[0].data[i]) * probe.data[i];
  for (size_t i = 0; i < conv_out.data.size(); ++i) rhs += double(r.inputs[0].data[i]) * conv_out.data[i];
  EXPECT_NEAR(lhs, rhs, 1e-4 * std::fabs(rhs) + 1e-4);
}

TEST(MeasureCpuReferenceProducts, RecurrentLayersHandComputed) {
  ModelBuilder b(14);
  b.input("x", kFloat, Shape{2, 1, 1}).input("w", kFloat, Shape{1, 1, 1}).input("r", kFloat, Shape{1, 1, 1});
  b.node("RNN", {"x", "w", "r"}, {"rnn_y", "rnn_h"});
  b.input("wg", kFloat, Shape{1, 3, 1}).input("rg", kFloat, Shape{1, 3, 1});
  b.node("GRU", {"x", "wg", "rg"}, {"gru_y"});
  set_attr(b.node("GRU", {"x", "wg", "rg"}, {"gru_lbr_y"}), "linear_before_reset", int64_t{1});
  b.input("wl", kFloat, Shape{1, 4, 1}).input("rl", kFloat, Shape{1, 4, 1});
  b.node("LSTM", {"x", "wl", "rl"}, {"lstm_y", "lstm_h", "lstm_c"});
  b.input("w2", kFloat, Shape{2, 4, 1}).input("r2", kFloat, Shape{2, 4, 1});
  set_attr(b.node("LSTM", {"x", "w2", "r2"}, {"bi_y", "bi_h"}), "direction", std::string("bidirectional"));
  for (const char* n : {"rnn_y", "rnn_h", "gru_y", "gru_lbr_y", "lstm_y", "lstm_h", "lstm_c", "bi_y", "bi_h"}) b.output(n);
  auto run = analyse(b);
  const std::vector<float> x = {1, 2};
  const double h1 = std::tanh(0.5), h2 = std::tanh(1.0 + 0.25 * h1);
  const NodeRun rnn = run_on(*run, "rnn_y", {x, {0.5f}, {0.25f}});
  EXPECT_NEAR(rnn.outputs[0].data[0], h1, 1e-6);
  EXPECT_NEAR(rnn.outputs[0].data[1], h2, 1e-6);
  EXPECT_NEAR(rnn.outputs[1].data[0], h2, 1e-6);
  // One hidden unit and no bias: linear_before_reset changes nothing (r*(h*R) == (r*h)*R).
  const std::vector<float> wg = {0.3f, -0.2f, 0.7f}, rg = {0.5f, 0.4f, -0.6f};
  const auto gru = run_on(*run, "gru_y", {x, wg, rg}).outputs[0].data;
  EXPECT_LT(max_difference(gru, run_on(*run, "gru_lbr_y", {x, wg, rg}).outputs[0].data), 1e-6);
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double z = sig(0.3), candidate = std::tanh(0.7);
  EXPECT_NEAR(gru[0], (1 - z) * candidate, 1e-6);  // h0 = 0
  // LSTM gates i, o, f, c; first step from zero state: c = i*g, h = o*tanh(c).
  const std::vector<float> wl = {0.1f, 0.2f, 0.3f, 0.4f}, rl = {0.5f, 0.6f, 0.7f, 0.8f};
  const NodeRun lstm = run_on(*run, "lstm_y", {x, wl, rl});
  const double c1 = sig(0.1) * std::tanh(0.4), lh1 = sig(0.2) * std::tanh(c1);
  EXPECT_NEAR(lstm.outputs[0].data[0], lh1, 1e-6);
  const double c2 = sig(0.6 + 0.7 * lh1) * c1 + sig(0.2 + 0.5 * lh1) * std::tanh(0.8 + 0.8 * lh1);
  EXPECT_NEAR(lstm.outputs[2].data[0], c2, 1e-6);
  EXPECT_NEAR(lstm.outputs[1].data[0], sig(0.4 + 0.6 * lh1) * std::tanh(c2), 1e-6);
  // Bidirectional: the reverse direction ends at t = 0, so Y[0, 1] is its final h.
  const NodeRun bi = run_on(*run, "bi_y", {x});
  EXPECT_FLOAT_EQ(bi.outputs[0].data[1], bi.outputs[1].data[1]);
  EXPECT_FLOAT_EQ(bi.outputs[0].data[2], bi.outputs[1].data[0]);
}

TEST(MeasureCpuReferenceProducts, QuantizationOpsOnOnnxExamples) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{5}).input("s", kFloat, Shape{}).input("z", kUint8, Shape{});
  b.node("QuantizeLinear", {"x", "s", "z"}, {"q"});
  b.input("qi", kUint8, Shape{3});
  b.node("DequantizeLinear", {"qi", "s", "z"}, {"dq"});
  b.input("dx", kFloat, Shape{6});
  b.node("DynamicQuantizeLinear", {"dx"}, {"dy", "dy_scale", "dy_zero"});
  b.input("ma", kUint8, Shape{4, 3}).input("mb", kUint8, Shape{3, 2}).input("maz", kUint8, Shape{}).input("mbz", kUint8, Shape{});
  b.node("MatMulInteger", {"ma", "mb", "maz", "mbz"}, {"mi"});
  b.input("qa", kUint8, Shape{2, 4}).input("qb", kUint8, Shape{4, 3});
  for (const char* n : {"qas", "qbs", "qys"}) b.input(n, kFloat, Shape{});
  for (const char* n : {"qaz", "qbz", "qyz"}) b.input(n, kUint8, Shape{});
  b.node("QLinearMatMul", {"qa", "qas", "qaz", "qb", "qbs", "qbz", "qys", "qyz"}, {"qm"});
  for (const char* n : {"q", "dq", "dy", "dy_scale", "dy_zero", "mi", "qm"}) b.output(n);
  auto run = analyse(b);
  // round(x / 0.5) + 10, half to even, saturated: -2+10, 1+10 (0.52), 0+10 (0.5 rounds to 0), 11, 255.
  EXPECT_EQ(run_on(*run, "q", {{-1, 0.26f, 0.25f, 0.5f, 300}, {0.5f}, {10}}).outputs[0].data,
            (std::vector<float>{8, 11, 10, 11, 255}));
  EXPECT_EQ(run_on(*run, "dq", {{0, 10, 255}, {0.5f}, {10}}).outputs[0].data, (std::vector<float>{-5, 0, 122.5f}));
  const NodeRun dynamic = run_on(*run, "dy", {{0, 2, -3, -2.5f, 1.34f, 0.5f}});
  EXPECT_EQ(dynamic.outputs[0].data, (std::vector<float>{153, 255, 0, 26, 221, 179}));
  EXPECT_NEAR(dynamic.outputs[1].data[0], 0.0196078, 1e-6);
  EXPECT_EQ(dynamic.outputs[2].data[0], 153);
  EXPECT_EQ(run_on(*run, "mi", {{11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, {1, 4, 2, 5, 3, 6}, {12}, {0}}).outputs[0].data,
            (std::vector<float>{-38, -83, -44, -98, -50, -113, -56, -128}));
  EXPECT_EQ(run_on(*run, "qm", {{208, 236, 0, 238, 3, 214, 255, 29}, {0.0066f}, {113},
                                {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}, {0.00705f}, {114}, {0.0107f}, {118}})
                .outputs[0].data,
            (std::vector<float>{168, 115, 255, 1, 66, 151}));
}

// QLinearConv against the float Conv of the zero-point-shifted integers, requantized.
TEST(MeasureCpuReferenceProducts, QLinearConvMatchesTheShiftedFloatConv) {
  ModelBuilder b(13);
  b.input("x", kUint8, Shape{1, 4, 6, 5}).input("xs", kFloat, Shape{}).input("xz", kUint8, Shape{});
  b.input("w", kInt8, Shape{6, 2, 3, 3}).input("ws", kFloat, Shape{6}).input("wz", kInt8, Shape{6});
  b.input("ys", kFloat, Shape{}).input("yz", kUint8, Shape{}).input("bias", kInt32, Shape{6});
  auto& conv = b.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"}, {"y"});
  set_attr(conv, "group", int64_t{2});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "strides", std::vector<int64_t>{2, 1});
  b.output("y");
  auto run = analyse(b);
  const NodeRun r = run_on(*run, "y", {{}, {0.02f}, {3}, {}, {0.01f, 0.02f, 0.01f, 0.015f, 0.01f, 0.02f}, {0, 0, 0, 0, 0, 0},
                                       {0.75f}, {100}, {5, -5, 0, 10, 3, 1}});
  const auto& p = std::get<QLinearConvPlan>(r.plan);
  EXPECT_TRUE(p.per_channel_weight);
  // Padding holds the zero point, so shift x by it before the float conv.
  HostTensor x = r.inputs[0], y(r.outputs[0].shape, kFloat);
  for (float& v : x.data) v -= 3;
  cpu_conv(p.conv, x, r.inputs[3], nullptr, y);
  const int64_t plane = y.shape[2] * y.shape[3];
  for (size_t i = 0; i < y.data.size(); ++i) {
    const int64_t m = static_cast<int64_t>(i) / plane % 6;
    const float multiplier = 0.02f * r.inputs[4].data[m] / 0.75f;
    const float want = std::clamp(std::nearbyint((y.data[i] + r.inputs[8].data[m]) * multiplier) + 100.f, 0.f, 255.f);
    ASSERT_EQ(r.outputs[0].data[i], want) << i;
  }
}

}  // namespace modelcost::testing
