// GPU runs of Einsum (packed cuBLASLt products), ConvTranspose (cuDNN backward data), the
// recurrent layers (cuBLASLt products + own step kernels) and the quantization kernels against
// the CPU reference, through the runner the measurement picks.
#ifdef MODELCOST_HAVE_CUDA

#include "gpu_check.h"

namespace modelcost::testing {
namespace {

TEST(MeasureGpuProductKernels, EinsumContractions) {
  SKIP_WITHOUT_GPU();
  struct Case { const char* name; const char* equation; Shape a, b; };
  const Case cases[] = {
      {"scores", "bhid,bhjd->bhij", {2, 3, 16, 8}, {2, 3, 24, 8}},
      {"context", "bhij,bhjd->bhid", {2, 3, 16, 24}, {2, 3, 24, 8}},
      {"shared", "bij,jk->bik", {2, 16, 12}, {12, 20}},
      {"xl", "ibnd,jbnd->bnij", {10, 2, 3, 8}, {12, 2, 3, 8}},
      {"swapped", "bid,bjd->bji", {2, 9, 8}, {2, 7, 8}},
      {"broadcast", "bij,bjk->bik", {1, 5, 6}, {3, 6, 4}},
  };
  ModelBuilder b(13);
  for (const Case& c : cases) {
    const std::string a = std::string("a_") + c.name, bb = std::string("b_") + c.name;
    b.input(a, kFloat, c.a).input(bb, kFloat, c.b);
    set_attr(b.node("Einsum", {a, bb}, {c.name}), "equation", std::string(c.equation));
    b.output(c.name);
  }
  b.input("t", kFloat, Shape{3, 4, 5});
  set_attr(b.node("Einsum", {"t"}, {"transpose"}), "equation", std::string("abc->cab"));
  b.output("transpose");
  for (const Case& c : cases) check_both(b, c.name, 1e-5, 3e-3);
  check_both(b, "transpose", 1e-7, 1e-7);
}

TEST(MeasureGpuProductKernels, ConvTransposeThroughBackwardData) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 8, 7, 6}).weight("w", kFloat, Shape{8, 4, 3, 3}).weight("bias", kFloat, Shape{8});
  auto& grouped = b.node("ConvTranspose", {"x", "w", "bias"}, {"grouped"});
  set_attr(grouped, "group", int64_t{2});
  set_attr(grouped, "strides", std::vector<int64_t>{2, 2});
  set_attr(grouped, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(grouped, "output_padding", std::vector<int64_t>{1, 1});
  b.weight("w16", kFloat, Shape{8, 16, 4, 4});
  auto& upsample = b.node("ConvTranspose", {"x", "w16"}, {"upsample"});  // FCN's 2x upsampling form
  set_attr(upsample, "strides", std::vector<int64_t>{2, 2});
  set_attr(upsample, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("grouped").output("upsample");
  check_both(b, "grouped", 1e-5, 3e-3);
  check_both(b, "upsample", 1e-5, 3e-3);
}

TEST(MeasureGpuProductKernels, RecurrentLayers) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(14);
  const int64_t seq = 5, batch = 3, input = 6, hidden = 8;
  b.input("x", kFloat, Shape{seq, batch, input});
  b.input("h0", kFloat, Shape{2, batch, hidden}).input("c0", kFloat, Shape{2, batch, hidden});
  b.weight("lw", kFloat, Shape{2, 4 * hidden, input}).weight("lr", kFloat, Shape{2, 4 * hidden, hidden});
  b.weight("lb", kFloat, Shape{2, 8 * hidden}).weight("lp", kFloat, Shape{2, 3 * hidden});
  auto& lstm = b.node("LSTM", {"x", "lw", "lr", "lb", "", "h0", "c0", "lp"}, {"lstm", "lstm_h", "lstm_c"});
  set_attr(lstm, "direction", std::string("bidirectional"));
  set_attr(lstm, "hidden_size", hidden);
  b.weight("gw", kFloat, Shape{1, 3 * hidden, input}).weight("gr", kFloat, Shape{1, 3 * hidden, hidden});
  b.weight("gb", kFloat, Shape{1, 6 * hidden});
  b.node("GRU", {"x", "gw", "gr", "gb"}, {"gru", "gru_h"});
  set_attr(b.node("GRU", {"x", "gw", "gr", "gb"}, {"gru_lbr"}), "linear_before_reset", int64_t{1});
  b.weight("rw", kFloat, Shape{1, hidden, input}).weight("rr", kFloat, Shape{1, hidden, hidden});
  // A plan needs output 0 (an omitted Y is a named reason, "node without output"), so Y is kept.
  auto& rnn = b.node("RNN", {"x", "rw", "rr"}, {"rnn_y", "rnn_h"});
  rnn.set_name("rnn_h");
  set_attr(rnn, "direction", std::string("reverse"));
  for (const char* n : {"lstm", "lstm_h", "lstm_c", "gru", "gru_h", "gru_lbr", "rnn_y", "rnn_h"}) b.output(n);
  for (const char* n : {"lstm", "gru", "gru_lbr", "rnn_h"}) check_both(b, n, 1e-5, 5e-3);
}

TEST(MeasureGpuProductKernels, QuantizationOps) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 4, 5}).input("axis_scale", kFloat, Shape{4}).input("axis_zero", kInt8, Shape{4});
  set_attr(b.node("QuantizeLinear", {"x", "axis_scale", "axis_zero"}, {"q"}), "axis", int64_t{1});
  b.input("s", kFloat, Shape{}).input("z", kUint8, Shape{}).input("qx", kUint8, Shape{2, 4, 5});
  b.node("DequantizeLinear", {"qx", "s", "z"}, {"dq"});
  b.node("DynamicQuantizeLinear", {"x"}, {"dy", "dy_scale", "dy_zero"});
  b.input("a", kUint8, Shape{2, 17, 40}).input("bm", kInt8, Shape{40, 23}).input("az", kUint8, Shape{}).input("bz", kInt8, Shape{23});
  b.node("MatMulInteger", {"a", "bm", "az", "bz"}, {"mi"});
  b.input("as", kFloat, Shape{}).input("bs", kFloat, Shape{}).input("ys", kFloat, Shape{}).input("bzs", kInt8, Shape{});
  b.input("yz", kUint8, Shape{});
  b.node("QLinearMatMul", {"a", "as", "az", "bm", "bs", "bzs", "ys", "yz"}, {"qm"});
  b.input("cx", kUint8, Shape{2, 8, 9, 7}).input("cw", kInt8, Shape{6, 4, 3, 3}).input("cws", kFloat, Shape{6});
  b.input("cwz", kInt8, Shape{6}).input("cb", kInt32, Shape{6});
  auto& conv = b.node("QLinearConv", {"cx", "s", "z", "cw", "cws", "cwz", "ys", "yz", "cb"}, {"qc"});
  set_attr(conv, "group", int64_t{2});
  set_attr(conv, "strides", std::vector<int64_t>{2, 1});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  for (const char* n : {"q", "dq", "dy", "dy_scale", "dy_zero", "mi", "qm", "qc"}) b.output(n);
  for (const char* n : {"q", "dq", "dy", "mi"}) check_node(b, n, "fp32", 1e-6);
  // Requantized products: a rounding tie may land one step apart.
  check_node(b, "qm", "fp32", 1e-2);
  check_node(b, "qc", "fp32", 1e-2);
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
