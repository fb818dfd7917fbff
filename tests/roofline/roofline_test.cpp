#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>

#include "modelcost/errors.h"
#include "modelcost/roofline.h"
#include "roofline/curved_device.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// An analysis built by hand: tensors, nodes and their costs given directly, so the roofline
// arithmetic is checked independently of the cost rules.
struct HandAnalysis {
  Graph graph;
  Analysis analysis;
  std::deque<NodeCost> costs;

  int tensor(const std::string& name, int32_t dtype, const Shape& shape, bool weight = false) {
    TensorInfo t;
    t.name = name;
    t.dtype = dtype;
    t.shape = shape;
    t.has_shape = true;
    t.is_initializer = weight;
    graph.tensors.push_back(t);
    return static_cast<int>(graph.tensors.size()) - 1;
  }
  void node(const std::string& name, const std::string& op, std::vector<int> in, std::vector<int> out, NodeCost cost) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    graph.nodes.push_back(std::move(n));
    costs.push_back(cost);
  }
  // Call after the last node: node addresses are stable from here on.
  const Analysis& done() {
    analysis.nodes.clear();
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      NodeAnalysis a;
      a.node = &graph.nodes[i];
      a.graph = &graph;
      a.cost = costs[i];
      analysis.nodes.push_back(a);
    }
    return analysis;
  }
};

NodeCost cost(double macs, double flops, double read, double written, bool known = true) {
  NodeCost c;
  c.macs = macs;
  c.flops = flops;
  c.bytes_read = read;
  c.bytes_written = written;
  c.known = known;
  return c;
}

// y[1,1024] = x[1,1024] @ W[1024,1024] in fp32: 1048576 MACs, 2097152 FLOPs,
// reads 4*(1024 + 1048576) = 4198400 bytes, writes 4096.
void add_matmul(HandAnalysis& h, int32_t dtype = kFloat, const std::string& name = "mm") {
  const double size = dtype == kFloat ? 4 : dtype == kFloat16 ? 2 : 1;
  const int x = h.tensor(name + "_x", dtype, {1, 1024});
  const int w = h.tensor(name + "_w", dtype, {1024, 1024}, true);
  const int y = h.tensor(name + "_y", dtype, {1, 1024});
  h.node(name, "MatMul", {x, w}, {y}, cost(1048576, 2097152, size * (1024 + 1048576), size * 1024));
}

const HardwareDb& db() {
  static const HardwareDb instance = load_hardware_db({}, false);
  return instance;
}

}  // namespace

TEST(Roofline, HandComputedNodeOnACustomDevice) {
  HandAnalysis h;
  add_matmul(h);
  const Device device = make_custom_device(/*peak_tflops=*/100, /*bandwidth_gbps=*/1000, 0, /*launch_overhead_us=*/1);
  RooflineOptions options;
  options.model_name = "Tiny";
  options.batch = 1;
  const RooflineReport r = compute_roofline(h.done(), device, options);
  ASSERT_EQ(r.nodes.size(), 1u);
  const NodeRoofline& n = r.nodes[0];
  // memory time 4202496 B / 1e12 B/s = 4.202496 us; compute 2097152 / 1e14 = 0.02097152 us; overhead 1 us.
  EXPECT_DOUBLE_EQ(n.bytes, 4202496);
  EXPECT_DOUBLE_EQ(n.memory_us, 4.202496);
  EXPECT_DOUBLE_EQ(n.compute_us, 0.02097152);
  EXPECT_DOUBLE_EQ(n.overhead_us, 1);
  EXPECT_DOUBLE_EQ(n.predicted_us, 4.202496);
  EXPECT_EQ(n.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(n.intensity, 2097152.0 / 4202496.0);
  EXPECT_DOUBLE_EQ(n.attainable_flops, 2097152.0 / 4202496.0 * 1e12);
  EXPECT_DOUBLE_EQ(n.peak_flops, 1e14);
  EXPECT_EQ(n.path, MathPath::kTensor);  // a custom device's single peak serves both paths
  EXPECT_DOUBLE_EQ(n.share, 1.0);
  EXPECT_DOUBLE_EQ(r.totals.predicted_latency_ms, 4.202496e-3);
  EXPECT_DOUBLE_EQ(r.deployed.predicted_latency_ms, 4.202496e-3);  // one node, one kernel
  EXPECT_EQ(r.dtype, "fp32");
  EXPECT_EQ(r.verdict, "Tiny on custom (100 TFLOP/s, 1000 GB/s), fp32, batch 1: 1 of 1 MatMul kernels memory-bound; "
                       "predicted 0.0042 ms deployed (0.0042 ms as written)");
}

TEST(Roofline, OverheadBoundWhereTheFixedCostIsLargest) {
  HandAnalysis h;
  add_matmul(h);
  const Device device = make_custom_device(100, 1000, 0, /*launch_overhead_us=*/5);
  RooflineOptions options;
  options.model_name = "Tiny";
  const RooflineReport r = compute_roofline(h.done(), device, options);
  // 4.2 us of traffic, 5 us of fixed cost: the kernel takes 5 us and is not called memory-bound.
  EXPECT_EQ(r.nodes[0].bound, Bound::kOverhead);
  EXPECT_STREQ(bound_name(r.nodes[0].bound), "overhead");
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 5);
  EXPECT_EQ(r.totals.overhead_bound, 1u);
  EXPECT_EQ(r.totals.memory_bound, 0u);
  EXPECT_NE(r.verdict.find("0 of 1 MatMul kernels memory-bound, 1 overhead-bound"), std::string::npos) << r.verdict;
}

TEST(Roofline, AchievableCeilingsByDefaultDatasheetOnRequest) {
  HandAnalysis h;
  add_matmul(h, kFloat16);
  Device d = make_custom_device(100, 1000, 0, 1);
  d.uniform_peak_tflops.reset();
  d.tensor_tflops["fp16"] = 100;
  d.achievable.tensor_tflops["fp16"] = 80;
  d.achievable.memory_bandwidth_gbps = 800;
  d.achievable.kernel_overhead_us = 2;
  d.achievable.kernel_gap_us = 0.5;
  const RooflineReport r = compute_roofline(h.done(), d);
  EXPECT_TRUE(r.ceilings.achievable);
  EXPECT_DOUBLE_EQ(r.nodes[0].peak_flops, 80e12);
  EXPECT_DOUBLE_EQ(r.nodes[0].datasheet_peak_flops, 100e12);
  EXPECT_DOUBLE_EQ(r.nodes[0].memory_us, 2101248 / 800e9 * 1e6);
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 2101248 / 800e9 * 1e6 + 0.5);  // max(compute, memory, 2 us) + gap
  ASSERT_EQ(r.roofs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.roofs[0].datasheet_peak_flops, 100e12);
  RooflineOptions sheet;
  sheet.datasheet = true;
  const RooflineReport s = compute_roofline(h.done(), d, sheet);
  EXPECT_FALSE(s.ceilings.achievable);
  EXPECT_DOUBLE_EQ(s.nodes[0].peak_flops, 100e12);
  EXPECT_DOUBLE_EQ(s.nodes[0].predicted_us, 2101248 / 1000e9 * 1e6);
}

// The shared curved device with a 0.5 us gap after each kernel.
Device curved_device_with_gap() {
  Device d = curved_device();
  d.achievable.kernel_gap_us = 0.5;
  return d;
}

TEST(Roofline, CurvePricedKernelsAddTheLibraryGapOthersTheKernelGap) {
  HandAnalysis h;
  add_matmul(h, kFloat16);
  Device d = curved_device_with_gap();
  const double curve_only = compute_roofline(h.done(), d).nodes[0].predicted_us - 0.5;
  d.achievable.library_gap_us = 0.2;
  const RooflineReport r = compute_roofline(h.done(), d);
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, curve_only + 0.2);
  EXPECT_DOUBLE_EQ(r.ceilings.gap_us, 0.5);
  EXPECT_DOUBLE_EQ(r.ceilings.curve_gap_us, 0.2);
  // Without the curves (datasheet ceilings) nothing is added; a device without curves keeps the kernel gap.
  Device plain = d;
  plain.achievable.kernel_curves.clear();
  const RooflineReport p = compute_roofline(h.done(), plain);
  EXPECT_DOUBLE_EQ(p.nodes[0].predicted_us, std::max({p.nodes[0].compute_us, p.nodes[0].memory_us, p.nodes[0].overhead_us}) + 0.5);
}

TEST(Roofline, CalibratedCurvesTimeEachKernelByItsClass) {
  HandAnalysis h;
  add_matmul(h, kFloat16);
  const int r_in = 2;  // mm's output (x, w, y) feeds the Relu
  const int r_out = h.tensor("relu_y", kFloat16, {1, 1024});
  h.node("relu", "Relu", {r_in}, {r_out}, cost(0, 1024, 2048, 2048));
  const RooflineReport r = compute_roofline(h.done(), curved_device_with_gap());
  // MatMul, K = 1024: 4 us + 1.024 us of K loop + max(2097152 FLOP / 50 TF = 0.042 us, 2101248 B / 1000 GB/s = 2.101 us).
  const NodeRoofline& mm = r.nodes[0];
  EXPECT_DOUBLE_EQ(mm.overhead_us, 4 + 1.024);
  EXPECT_DOUBLE_EQ(mm.compute_us, 2097152 / 50e12 * 1e6);
  EXPECT_DOUBLE_EQ(mm.memory_us, 2101248 / 1000e9 * 1e6);
  EXPECT_DOUBLE_EQ(mm.predicted_us, 4 + 1.024 + 2101248 / 1000e9 * 1e6 + 0.5);  // and the gap after it
  EXPECT_EQ(mm.bound, Bound::kOverhead);
  // Relu, a pointwise kernel: 3 us + 4096 B / 2000 GB/s; its 1024 FLOPs at the vector fp16 rate.
  const NodeRoofline& relu = r.nodes[1];
  EXPECT_DOUBLE_EQ(relu.overhead_us, 3);
  EXPECT_DOUBLE_EQ(relu.memory_us, 4096 / 2000e9 * 1e6);
  EXPECT_DOUBLE_EQ(relu.predicted_us, 3 + 4096 / 2000e9 * 1e6 + 0.5);
  EXPECT_EQ(relu.bound, Bound::kOverhead);
  // Deployed, the Relu is the MatMul's epilogue: one gemm kernel whose bytes are the group's.
  ASSERT_EQ(r.deployed.launches, 1u);
  const NodeRoofline& g = r.groups[0];
  EXPECT_DOUBLE_EQ(g.overhead_us, 4 + 1.024);
  EXPECT_DOUBLE_EQ(g.predicted_us, 4 + 1.024 + g.bytes / 1000e9 * 1e6 + 0.5);
  // Datasheet ceilings ignore the curves: max(compute, memory, launch overhead) as before.
  RooflineOptions sheet;
  sheet.datasheet = true;
  const RooflineReport s = compute_roofline(h.done(), curved_device_with_gap(), sheet);
  EXPECT_DOUBLE_EQ(s.nodes[0].predicted_us, std::max(2101248 / 1000e9 * 1e6, 1.0));
}

TEST(Roofline, ComputeBoundPastTheRidgePoint) {
  HandAnalysis h;
  const int x = h.tensor("x", kFloat, {1});
  const int y = h.tensor("y", kFloat, {1});
  h.node("big", "Conv", {x}, {y}, cost(5e11, 1e12, 5e5, 5e5));  // intensity 1e6 FLOP/B
  const Device device = make_custom_device(100, 1000);
  const RooflineReport r = compute_roofline(h.done(), device);
  EXPECT_EQ(r.nodes[0].bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 1e12 / 1e14 * 1e6);  // 10000 us
  EXPECT_DOUBLE_EQ(r.nodes[0].attainable_flops, 1e14);
  ASSERT_EQ(r.roofs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.roofs[0].ridge_intensity, 100);  // 1e14 FLOP/s / 1e12 B/s
}

TEST(Roofline, ReinterpretAndUncostedNodesAddNothing) {
  HandAnalysis h;
  add_matmul(h);
  const int y = 2;
  const int z = h.tensor("z", kFloat, {1024});
  h.node("view", "Reshape", {y}, {z}, cost(0, 0, 0, 0));
  h.node("mystery", "MyOp", {z}, {h.tensor("q", kFloat, {1024})}, cost(0, 0, 0, 0, /*known=*/false));
  const Device device = make_custom_device(100, 1000, 0, 1);
  const RooflineReport r = compute_roofline(h.done(), device);
  EXPECT_EQ(r.nodes[1].bound, Bound::kNone);
  EXPECT_FALSE(r.nodes[1].launches);
  EXPECT_DOUBLE_EQ(r.nodes[1].predicted_us, 0);
  EXPECT_FALSE(r.nodes[2].costed);
  EXPECT_DOUBLE_EQ(r.nodes[2].predicted_us, 0);
  EXPECT_EQ(r.totals.uncosted, 1u);
  EXPECT_EQ(r.totals.no_bound, 1u);
  EXPECT_EQ(r.totals.launches, 1u);
  EXPECT_DOUBLE_EQ(r.totals.predicted_latency_ms, 4.202496e-3);
  EXPECT_NE(r.verdict.find("(1 uncosted nodes not included)"), std::string::npos) << r.verdict;
}

TEST(Roofline, SharesSumToOneAndTotalsSum) {
  HandAnalysis h;
  add_matmul(h, kFloat, "a");
  add_matmul(h, kFloat, "b");
  const int x = h.tensor("x", kFloat, {1000});
  h.node("act", "Relu", {x}, {h.tensor("r", kFloat, {1000})}, cost(0, 1000, 4000, 4000));
  const Device device = make_custom_device(100, 1000, 0, 1);
  const RooflineReport r = compute_roofline(h.done(), device);
  // Relu: 8000 B / 1e12 = 0.008 us, under the 1 us overhead.
  EXPECT_DOUBLE_EQ(r.nodes[2].predicted_us, 1);
  EXPECT_EQ(r.nodes[2].bound, Bound::kOverhead);
  EXPECT_EQ(r.nodes[2].path, MathPath::kVector);
  const double total_us = 2 * 4.202496 + 1;
  EXPECT_NEAR(r.totals.predicted_latency_ms, total_us / 1e3, 1e-15);
  EXPECT_NEAR(r.nodes[0].share + r.nodes[1].share + r.nodes[2].share, 1.0, 1e-12);
  EXPECT_NEAR(r.nodes[2].share, 1 / total_us, 1e-12);
  EXPECT_EQ(r.totals.memory_bound, 2u);
  EXPECT_EQ(r.totals.overhead_bound, 1u);
}

// Datasheet ceilings: the peaks themselves (the derived achievable figures are docs/hwdb.md's).
TEST(Roofline, MatrixOpsUseTensorPeaksByDtype) {
  const Device& a100 = db().resolve("a100");
  RooflineOptions datasheet;
  datasheet.datasheet = true;
  {
    HandAnalysis h;
    add_matmul(h, kFloat16);
    const RooflineReport r = compute_roofline(h.done(), a100, datasheet);
    EXPECT_EQ(r.nodes[0].path, MathPath::kTensor);
    EXPECT_EQ(r.nodes[0].peak_dtype, "fp16");
    EXPECT_DOUBLE_EQ(r.nodes[0].peak_flops, 312e12);
    EXPECT_EQ(r.dtype, "fp16");
  }
  {
    HandAnalysis h;
    add_matmul(h, kFloat);
    const RooflineReport r = compute_roofline(h.done(), a100, datasheet);
    EXPECT_EQ(r.nodes[0].path, MathPath::kVector);  // fp32 MatMul without --dtype tf32: CUDA cores
    EXPECT_DOUBLE_EQ(r.nodes[0].peak_flops, 19.5e12);
    // max(bytes / 2039e9 B/s = 2.06 us, 3 us overhead)
    EXPECT_DOUBLE_EQ(r.nodes[0].memory_us, 4202496 / 2039e9 * 1e6);
    EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 3);
  }
  {
    HandAnalysis h;
    add_matmul(h, kFloat);
    RooflineOptions tf32 = datasheet;
    tf32.dtype = "tf32";
    const RooflineReport r = compute_roofline(h.done(), a100, tf32);
    EXPECT_EQ(r.nodes[0].peak_dtype, "tf32");
    EXPECT_DOUBLE_EQ(r.nodes[0].peak_flops, 156e12);
    EXPECT_DOUBLE_EQ(r.nodes[0].bytes, 4202496);  // tf32 keeps fp32 storage
  }
}

TEST(Roofline, DtypeOptionRecastsFloatBytesOnly) {
  HandAnalysis h;
  add_matmul(h, kFloat);
  // A quantized matmul: uint8 operands, float scales.
  const int a = h.tensor("qa", kUint8, {1, 1024});
  const int as = h.tensor("qa_scale", kFloat, {});
  const int az = h.tensor("qa_zero", kUint8, {});
  const int b = h.tensor("qb", kUint8, {1024, 1024}, true);
  const int y = h.tensor("qy", kUint8, {1, 1024});
  const double qread = 1024 + 4 + 1 + 1048576, qwritten = 1024;
  h.node("qmm", "QLinearMatMul", {a, as, az, b, as, az, as, az}, {y}, cost(1048576, 2097152, qread + 2 * 5, qwritten));
  const Analysis& analysis = h.done();
  const Device& a100 = db().resolve("a100");
  RooflineOptions fp16;
  fp16.dtype = "fp16";
  const RooflineReport r = compute_roofline(analysis, a100, fp16);
  EXPECT_DOUBLE_EQ(r.nodes[0].bytes, 4202496 / 2.0);
  EXPECT_EQ(r.nodes[0].peak_dtype, "fp16");
  EXPECT_EQ(r.nodes[0].path, MathPath::kTensor);
  EXPECT_DOUBLE_EQ(r.nodes[0].flops, 2097152);  // FLOPs never change with the dtype
  // The quantized node stays int8; only its three float scales (4 bytes each read) shrink to 2 bytes.
  EXPECT_EQ(r.nodes[1].compute_dtype, "int8");
  EXPECT_DOUBLE_EQ(r.nodes[1].peak_flops, 624e12);
  const double original = qread + 2 * 5 + qwritten;
  const double recast_ratio = (original - 3 * 2) / original;
  EXPECT_DOUBLE_EQ(r.nodes[1].bytes, original * recast_ratio);
  EXPECT_DOUBLE_EQ(recast_element_size(kFloat, "fp8"), 1);
  EXPECT_DOUBLE_EQ(recast_element_size(kInt64, "fp16"), 8);
  EXPECT_DOUBLE_EQ(recast_element_size(kFloat16, ""), 2);
}

TEST(Roofline, FallbacksOnDevicesWithoutAPeak) {
  HandAnalysis h;
  add_matmul(h, kFloat16);
  const int x = h.tensor("x", kFloat16, {1000});
  h.node("act", "Relu", {x}, {h.tensor("r", kFloat16, {1000})}, cost(0, 1000, 2000, 2000));
  const Analysis& analysis = h.done();
  const RooflineReport cpu = compute_roofline(analysis, db().resolve("epyc-9654"));
  EXPECT_EQ(cpu.nodes[0].path, MathPath::kVector);
  EXPECT_EQ(cpu.nodes[0].peak_dtype, "fp32");
  EXPECT_DOUBLE_EQ(cpu.nodes[0].peak_flops, 10.9056e12);
  RooflineOptions fp8;
  fp8.dtype = "fp8";
  RooflineOptions fp8_datasheet = fp8;
  fp8_datasheet.datasheet = true;
  const RooflineReport a100 = compute_roofline(analysis, db().resolve("a100"), fp8_datasheet);
  EXPECT_EQ(a100.nodes[0].peak_dtype, "fp16");  // no fp8 Tensor Cores on Ampere
  EXPECT_EQ(a100.nodes[1].peak_dtype, "fp16");  // fp8 elementwise runs at the vector fp16 rate
  EXPECT_DOUBLE_EQ(a100.nodes[1].peak_flops, 78e12);
  const RooflineReport h100 = compute_roofline(analysis, db().resolve("h100"), fp8);
  EXPECT_EQ(h100.nodes[0].peak_dtype, "fp8");
  EXPECT_DOUBLE_EQ(h100.nodes[0].datasheet_peak_flops, 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.nodes[0].peak_flops, db().resolve("h100").achievable.tensor_tflops.at("fp8") * 1e12);
}

TEST(Roofline, RejectsAnUnknownDtype) {
  HandAnalysis h;
  add_matmul(h);
  RooflineOptions bad;
  bad.dtype = "fp12";
  try {
    compute_roofline(h.done(), make_custom_device(1, 1), bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("fp12"), std::string::npos);
  }
}

TEST(Roofline, VerdictCountsTheHeaviestMatrixOp) {
  HandAnalysis h;
  // Two Conv layers, one memory-bound and one compute-bound, plus a heavier-in-time Relu that is
  // not a matrix op and so does not name the verdict.
  const int x = h.tensor("x", kFloat, {1});
  h.node("c1", "Conv", {x}, {h.tensor("y1", kFloat, {1})}, cost(5e5, 1e6, 1e6, 1e6));
  h.node("c2", "Conv", {x}, {h.tensor("y2", kFloat, {1})}, cost(5e11, 1e12, 1e6, 1e6));
  h.node("relu", "Relu", {x}, {h.tensor("y3", kFloat, {1})}, cost(0, 1e9, 1e12, 1e12));
  RooflineOptions o;
  o.model_name = "Net";
  const RooflineReport r = compute_roofline(h.done(), make_custom_device(100, 1000), o);
  EXPECT_EQ(r.verdict.rfind("Net on custom (100 TFLOP/s, 1000 GB/s), fp32: 1 of 2 Conv kernels memory-bound; predicted ", 0), 0u)
      << r.verdict;
  o.view = "as-written";
  const RooflineReport w = compute_roofline(h.done(), make_custom_device(100, 1000), o);
  EXPECT_EQ(w.verdict.rfind("Net on custom (100 TFLOP/s, 1000 GB/s), fp32: 1 of 2 Conv layers memory-bound; predicted ", 0), 0u)
      << w.verdict;
  EXPECT_NE(w.verdict.find("ms as written ("), std::string::npos) << w.verdict;
}

// The same arithmetic through the real pipeline: ModelBuilder graph, shape engine, cost rules.
TEST(Roofline, PipelineGraphOnACustomDevice) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 256});
  b.weight("w", kFloat, {256, 512});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto run = analyse(b);
  const RooflineReport r = compute_roofline(run->analysis, make_custom_device(10, 100, 0, 2));
  ASSERT_EQ(r.nodes.size(), 2u);
  // MatMul: 2*4*256*512 FLOPs; bytes 4*(4*256 + 256*512 + 4*512) = 536576.
  EXPECT_DOUBLE_EQ(r.nodes[0].flops, 1048576);
  EXPECT_DOUBLE_EQ(r.nodes[0].bytes, 536576);
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 536576 / 100e9 * 1e6);
  EXPECT_EQ(r.nodes[0].bound, Bound::kMemory);
  // Relu: 2048 elements, 4*2*2048 bytes: 0.16 us of traffic under the 2 us overhead.
  EXPECT_DOUBLE_EQ(r.nodes[1].bytes, 16384);
  EXPECT_DOUBLE_EQ(r.nodes[1].predicted_us, 2);
  EXPECT_EQ(r.nodes[1].bound, Bound::kOverhead);
  // Deployed, the Relu runs in the MatMul's epilogue: one kernel reading x and w, writing z.
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_DOUBLE_EQ(r.groups[0].bytes, 536576);
  EXPECT_DOUBLE_EQ(r.groups[0].flops, 1048576 + 2048);
  EXPECT_DOUBLE_EQ(r.deployed.predicted_latency_ms, 536576 / 100e9 * 1e3);
  EXPECT_DOUBLE_EQ(r.totals.predicted_latency_ms, (536576 / 100e9 * 1e6 + 2) / 1e3);
  EXPECT_DOUBLE_EQ(r.latency_ms(), r.deployed.predicted_latency_ms);
}

}  // namespace modelcost::testing

namespace modelcost::testing {

TEST(Roofline, FoldedShapeArithmeticRunsNoKernel) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  b.node("Shape", {"x"}, {"s"});
  b.node("Reshape", {"x", "s"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto run = analyse(b);
  const RooflineReport r = compute_roofline(run->analysis, make_custom_device(10, 100, 0, 2));
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_TRUE(r.nodes[0].folded);  // Shape of a fully shaped tensor is a constant
  EXPECT_FALSE(r.nodes[0].launches);
  EXPECT_DOUBLE_EQ(r.nodes[0].predicted_us, 0);
  EXPECT_EQ(r.totals.folded, 1u);
  EXPECT_EQ(r.totals.launches, 1u);  // only the Relu
  EXPECT_FALSE(r.nodes[2].folded);
}

}  // namespace modelcost::testing
