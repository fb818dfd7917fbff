// calibrate's grid of library kernels: cuBLASLt GEMMs, convolutions (1x1, 3x3, strided, grouped,
// depthwise of 3x3 to 9x9) over generic shapes, and elementwise, norm, reduction, pooling and layout
// copy kernels over sizes, one class per kernel class of the plan, fp16, each call prepared by
// the same runners the measurement uses (timed algorithm choice, as cudnn.benchmark) and timed
// two ways: CUPTI kernel records (the kernels' own durations) and a CUDA graph of back-to-back
// calls (durations plus the idle time after each). The kernel curves of the hwdb are fitted to
// these samples (docs/hwdb.md, "Kernel curves").
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "calibrate/calibrate_graph.h"
#include "conv/conv_graph_plans.h"
#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "core/tensor_transfer.h"
#include "modelcost/kernel_plan.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

constexpr int32_t kHalf = 10;       // onnx FLOAT16
constexpr int kGraphCalls = 20;     // calls per graph
constexpr int kGraphReplays = 5;

TensorSpec half_tensor(Shape shape, bool weight = false) {
  TensorSpec t;
  t.present = true;
  t.shape = std::move(shape);
  t.dtype = kHalf;
  t.is_weight = weight;
  return t;
}

struct GridPoint {
  std::string kind, shape;
  NodeSpec spec;
  double flops = 0, k = 0;
};

// The curve a call of this kernel fits: the one the roofline prices its shape by (fp16).
std::string curve_kind(const KernelShape& shape) { return kernel_curve_name(shape, 2); }

GridPoint gemm_point(int64_t batch, int64_t m, int64_t n, int64_t k) {
  GridPoint p;
  p.spec.name = "grid_gemm";
  p.spec.op_type = "MatMul";
  p.spec.opset = 17;
  if (batch == 1) {
    p.spec.inputs = {half_tensor({m, k}), half_tensor({k, n}, true)};
    p.spec.outputs = {half_tensor({m, n})};
  } else {
    p.spec.inputs = {half_tensor({batch, m, k}), half_tensor({batch, k, n})};
    p.spec.outputs = {half_tensor({batch, m, n})};
  }
  p.flops = 2.0 * batch * m * n * k;
  p.k = static_cast<double>(k);
  KernelShape shape;
  shape.cls = KernelClass::kGemm;
  shape.k = p.k;
  shape.n = static_cast<double>(n);
  p.kind = curve_kind(shape);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "B=%lld M=%lld N=%lld K=%lld", (long long)batch, (long long)m, (long long)n, (long long)k);
  p.shape = buf;
  return p;
}

struct ConvShape {
  int64_t batch, in_channels, out_channels, size, kernel, stride, groups;
  int64_t dilation = 1;
};

// The plan's kernel for the conv: names the curve its sample fits, as the roofline picks it.
KernelShape conv_shape(const ConvShape& c) {
  KernelShape s;
  s.taps = static_cast<double>(c.kernel * c.kernel);
  s.dilation = static_cast<double>(c.dilation);
  s.groups = static_cast<double>(c.groups);
  s.group_width = static_cast<double>(c.out_channels / c.groups);
  s.k = static_cast<double>(c.in_channels / c.groups) * s.taps;
  s.cls = c.groups == 1 ? (c.kernel == 1 ? KernelClass::kConv1x1 : KernelClass::kConv)
          : c.in_channels == c.groups ? KernelClass::kDepthwise : KernelClass::kGroupedConv;
  return s;
}

GridPoint conv_point(const ConvShape& c) {
  const KernelShape shape = conv_shape(c);
  GridPoint p;
  p.kind = curve_kind(shape);
  p.spec.name = "grid_conv";
  p.spec.op_type = "Conv";
  p.spec.opset = 17;
  const int64_t pad = c.dilation * (c.kernel / 2), span = c.dilation * (c.kernel - 1) + 1;
  const int64_t out = (c.size + 2 * pad - span) / c.stride + 1;
  p.spec.inputs = {half_tensor({c.batch, c.in_channels, c.size, c.size}),
                   half_tensor({c.out_channels, c.in_channels / c.groups, c.kernel, c.kernel}, true),
                   half_tensor({c.out_channels}, true)};  // a folded BatchNorm leaves every conv a bias
  p.spec.outputs = {half_tensor({c.batch, c.out_channels, out, out})};
  p.spec.attributes.int_lists["kernel_shape"] = {c.kernel, c.kernel};
  p.spec.attributes.int_lists["strides"] = {c.stride, c.stride};
  p.spec.attributes.int_lists["pads"] = {pad, pad, pad, pad};
  p.spec.attributes.ints["group"] = c.groups;
  if (c.dilation > 1) p.spec.attributes.int_lists["dilations"] = {c.dilation, c.dilation};
  p.flops = 2.0 * c.batch * c.out_channels * out * out * (c.in_channels / c.groups) * c.kernel * c.kernel;
  p.k = shape.k;
  char buf[128];
  std::snprintf(buf, sizeof(buf), "N=%lld C=%lld>%lld %lldx%lld k%lld s%lld g%lld", (long long)c.batch,
                (long long)c.in_channels, (long long)c.out_channels, (long long)c.size, (long long)c.size,
                (long long)c.kernel, (long long)c.stride, (long long)c.groups);
  p.shape = buf;
  if (c.dilation > 1) p.shape += " d" + std::to_string(c.dilation);
  return p;
}

GridPoint add_point(int64_t elements) {
  GridPoint p;
  p.kind = "pointwise";
  p.spec.name = "grid_add";
  p.spec.op_type = "Add";
  p.spec.opset = 14;
  p.spec.inputs = {half_tensor({elements}), half_tensor({elements})};
  p.spec.outputs = {half_tensor({elements})};
  p.flops = static_cast<double>(elements);
  p.shape = "elements=" + std::to_string(elements);
  return p;
}

GridPoint byte_point(const char* kind, const std::string& op, int opset, std::vector<Shape> inputs, Shape output) {
  GridPoint p;
  p.kind = kind;
  p.spec.name = "grid_" + op;
  p.spec.op_type = op;
  p.spec.opset = opset;
  for (auto& shape : inputs) p.spec.inputs.push_back(half_tensor(std::move(shape)));
  p.spec.outputs = {half_tensor(output)};
  p.flops = static_cast<double>(p.spec.inputs[0].elements());
  p.shape = op;
  for (const auto& t : p.spec.inputs) {
    p.shape += " [";
    for (size_t i = 0; i < t.shape.size(); ++i) p.shape += (i ? "x" : "") + std::to_string(t.shape[i]);
    p.shape += "]";
  }
  return p;
}

using Nchw = std::tuple<int64_t, int64_t, int64_t>;  // batch, channels, square size

// Elementwise adds of 4K to 64M elements and per-channel (broadcast) products.
void add_pointwise_points(std::vector<GridPoint>& points) {
  for (int64_t e = int64_t(1) << 12; e <= int64_t(1) << 26; e <<= 2) points.push_back(add_point(e));
  for (auto [n, c, size] : {Nchw{1, 256, 28}, {32, 256, 28}, {32, 64, 112}})
    points.push_back(byte_point("pointwise", "Mul", 14, {{n, c, size, size}, {n, c, 1, 1}}, {n, c, size, size}));
}

// Row LayerNorms over widths of 64 to 1024 and instance norms of image tensors.
void add_norm_points(std::vector<GridPoint>& points) {
  for (int64_t rows : {64, 1024, 16384, 131072})
    for (int64_t width : {64, 256, 1024}) {
      GridPoint p = byte_point("norm", "LayerNormalization", 17, {{rows, width}, {width}, {width}}, {rows, width});
      p.spec.attributes.ints["axis"] = -1;
      p.spec.attributes.floats["epsilon"] = 1e-5;
      points.push_back(p);
    }
  for (auto [n, c, size] : {Nchw{1, 64, 56}, {32, 64, 56}, {32, 256, 14}}) {
    GridPoint p = byte_point("norm", "InstanceNormalization", 6, {{n, c, size, size}, {c}, {c}}, {n, c, size, size});
    p.spec.attributes.floats["epsilon"] = 1e-5;
    points.push_back(p);
  }
}

// Softmax and mean over rows of 64 to 1024, and over the spatial axes of image tensors.
void add_reduction_points(std::vector<GridPoint>& points) {
  for (int64_t rows : {1024, 16384, 131072})
    for (int64_t width : {64, 256, 1024}) {
      GridPoint p = byte_point("reduction", "Softmax", 13, {{rows, width}}, {rows, width});
      p.spec.attributes.ints["axis"] = -1;
      points.push_back(p);
    }
  for (auto [n, c, size] : {Nchw{1, 256, 28}, {32, 256, 28}, {32, 64, 112}}) {
    GridPoint p = byte_point("reduction", "ReduceMean", 13, {{n, c, size, size}}, {n, c, 1, 1});
    p.spec.attributes.int_lists["axes"] = {2, 3};
    points.push_back(p);
  }
}

// Global average pools, 3x3 max pools at stride 2 and 3x3 average pools at stride 1 (pooling
// token mixers), over the sizes and channels of image networks.
void add_pooling_points(std::vector<GridPoint>& points) {
  for (auto [n, c, size] : {Nchw{1, 256, 14}, {1, 1024, 7}, {32, 64, 56}, {32, 256, 28}, {32, 1024, 7}})
    points.push_back(byte_point("pooling", "GlobalAveragePool", 1, {{n, c, size, size}}, {n, c, 1, 1}));
  for (auto [n, c, size] : {Nchw{1, 64, 112}, {32, 64, 112}, {32, 256, 28}}) {
    GridPoint p = byte_point("pooling", "MaxPool", 12, {{n, c, size, size}}, {n, c, size / 2, size / 2});
    p.spec.attributes.int_lists["kernel_shape"] = {3, 3};
    p.spec.attributes.int_lists["strides"] = {2, 2};
    p.spec.attributes.int_lists["pads"] = {1, 1, 0, 0};
    points.push_back(p);
  }
  for (auto [n, c, size] : {Nchw{1, 64, 56}, {1, 512, 7}, {32, 64, 56}, {32, 128, 28}, {32, 320, 14}}) {
    GridPoint p = byte_point("pooling", "AveragePool", 11, {{n, c, size, size}}, {n, c, size, size});
    p.spec.attributes.int_lists["kernel_shape"] = {3, 3};
    p.spec.attributes.int_lists["strides"] = {1, 1};
    p.spec.attributes.int_lists["pads"] = {1, 1, 1, 1};
    p.spec.attributes.ints["count_include_pad"] = 0;
    points.push_back(p);
  }
}

// The copies a runtime runs where a layout change does not fold into a neighbour: NCHW to NHWC and
// attention's head transposes, channel concatenations and halving splits (ShuffleNet's shuffle,
// CSP blocks), from batch 1's small tensors to batch 32's.
void add_layout_copy_points(std::vector<GridPoint>& points) {
  for (auto [n, c, size] : {Nchw{1, 64, 56}, {1, 256, 14}, {32, 64, 56}, {32, 256, 14}}) {
    GridPoint p = byte_point("layout_copy", "Transpose", 13, {{n, c, size, size}}, {n, size, size, c});
    p.spec.attributes.int_lists["perm"] = {0, 2, 3, 1};
    points.push_back(p);
  }
  for (auto [n, tokens, heads] : {Nchw{1, 197, 6}, {32, 197, 6}, {32, 784, 2}}) {
    GridPoint p = byte_point("layout_copy", "Transpose", 13, {{n, tokens, heads, 64}}, {n, heads, tokens, 64});
    p.spec.attributes.int_lists["perm"] = {0, 2, 1, 3};
    points.push_back(p);
  }
  for (auto [n, c, size] : {Nchw{1, 58, 28}, {1, 232, 7}, {32, 116, 28}, {32, 232, 14}}) {
    GridPoint p = byte_point("layout_copy", "Concat", 13, {{n, c, size, size}, {n, c, size, size}}, {n, 2 * c, size, size});
    p.spec.attributes.ints["axis"] = 1;
    points.push_back(p);
    GridPoint split = byte_point("layout_copy", "Split", 13, {{n, 2 * c, size, size}}, {n, c, size, size});
    split.spec.outputs.push_back(split.spec.outputs.front());
    split.spec.attributes.ints["axis"] = 1;
    points.push_back(split);
  }
}

// Grouped 3x3 convs of 4 to 64 channels per group (stride 1 and 2; 2 to 128 groups) and depthwise convs of 3x3 to
// 9x9 windows, over the channel and size ranges of image networks.
void add_grouped_conv_points(std::vector<GridPoint>& points) {
  for (int64_t batch : {1, 32}) {
    for (int64_t size : {7, 14, 28, 56}) {
      for (int64_t c : {128, 512})
        for (int64_t width : {4, 8, 16, 64}) points.push_back(conv_point({batch, c, c, size, 3, 1, c / width}));
      points.push_back(conv_point({batch, 96, 96, size, 3, 1, 96 / 24}));  // a width tiles fit badly
      points.push_back(conv_point({batch, 256, 256, size * 2, 3, 2, 256 / 8}));
      for (int64_t c : {32, 144, 576}) points.push_back(conv_point({batch, c, c, size, 3, 1, c}));
      for (int64_t c : {96, 384}) points.push_back(conv_point({batch, c, c, size, 3, 2, c}));
      for (int64_t c : {96, 768}) points.push_back(conv_point({batch, c, c, size, 7, 1, c}));
      if (size <= 28) {
        for (int64_t c : {240, 672}) points.push_back(conv_point({batch, c, c, size, 5, 1, c}));
        points.push_back(conv_point({batch, 768, 768, size, 9, 1, 768}));
      }
    }
    points.push_back(conv_point({batch, 32, 32, 112, 3, 1, 32}));
    points.push_back(conv_point({batch, 96, 96, 112, 3, 2, 96}));
  }
}

// Dilated windows (segmentation backbones and their pyramid pooling): dense 3x3 convs dilated 2, 4
// and 12, and depthwise 3x3 and 5x5 ones dilated 2.
void add_dilated_points(std::vector<GridPoint>& points) {
  for (int64_t batch : {1, 32})
    for (int64_t size : {28, 56}) {
      for (int64_t c : {128, 256, 512})
        for (int64_t d : {2, 4}) points.push_back(conv_point({batch, c, c, size, 3, 1, 1, d}));
      if (size == 28)
        for (int64_t c : {256, 512}) points.push_back(conv_point({batch, 2 * c, c, size, 3, 1, 1, 12}));
      for (auto [c, kernel] : {std::pair<int64_t, int64_t>{480, 3}, {672, 5}})
        points.push_back(conv_point({batch, c, c, size, kernel, 1, c, 2}));
    }
}

// Shapes libraries tile badly (each fits the curve tile_aligned names, as the roofline prices it):
// GEMMs and 1x1 convs with a dimension that is not a multiple of 8 elements, image stems (3 input
// channels), 3x3 convs of 16 to 408 channels, grouped convs of 24 or 48 channels per group, dilated
// windows.
void add_alignment_points(std::vector<GridPoint>& points) {
  add_dilated_points(points);
  for (int64_t m : {256, 4096, 32768})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{384, 196}, {196, 384}, {1024, 196}, {196, 1024}, {100, 100}, {36, 256}, {256, 36}})
      points.push_back(gemm_point(1, m, n, k));
  for (int64_t batch : {1, 32}) {
    for (int64_t size : {14, 56}) {
      for (auto [cin, cout] : {std::pair<int64_t, int64_t>{36, 144}, {144, 36}, {20, 120}})
        points.push_back(conv_point({batch, cin, cout, size, 1, 1, 1}));
      for (int64_t c : {16, 20, 24, 32, 36, 48, 72, 96, 136, 192, 200, 408}) points.push_back(conv_point({batch, c, c, size, 3, 1, 1}));
      for (int64_t width : {24, 48})
        for (int64_t groups : {4, 16, 32})
          if (size < 56 || width * groups <= 384) points.push_back(conv_point({batch, width * groups, width * groups, size, 3, 1, groups}));
    }
    for (int64_t c : {16, 32}) points.push_back(conv_point({batch, c, c, 112, 3, 1, 1}));
    for (int64_t cout : {16, 32, 64}) {
      points.push_back(conv_point({batch, 3, cout, 224, 3, 2, 1}));
      points.push_back(conv_point({batch, 3, cout, 224, 7, 2, 1}));
    }
  }
}

// Generic shapes: powers of two for the GEMMs, the channel and size ranges of image networks for
// the convolutions; no model's layer list.
std::vector<GridPoint> grid_points() {
  std::vector<GridPoint> points;
  for (int64_t m : {16, 64, 256, 1024, 4096, 16384})
    for (int64_t n : {256, 1024, 4096})
      for (int64_t k : {256, 1024, 4096}) points.push_back(gemm_point(1, m, n, k));
  for (int64_t b : {16, 256})
    for (int64_t mn : {64, 256})
      for (int64_t k : {64, 256}) points.push_back(gemm_point(b, mn, mn, k));
  for (int64_t batch : {1, 32})
    for (int64_t size : {7, 14, 28, 56}) {
      for (int64_t cin : {64, 256, 1024})
        for (int64_t cout : {64, 256, 1024}) points.push_back(conv_point({batch, cin, cout, size, 1, 1, 1}));
      for (int64_t c : {64, 128, 256, 512}) points.push_back(conv_point({batch, c, c, size, 3, 1, 1}));
      for (int64_t c : {64, 256}) points.push_back(conv_point({batch, c, c, size * 2, 3, 2, 1}));
    }
  // 1x1 convs a few channels deep over large images (inverted-residual expansions): where their
  // traffic streams slower than deep products' (the conv1x1 curve's k_half).
  for (int64_t batch : {1, 32})
    for (int64_t size : {56, 112})
      for (auto [cin, cout] : {std::pair<int64_t, int64_t>{16, 96}, {24, 144}, {32, 192}, {64, 384}})
        points.push_back(conv_point({batch, cin, cout, size, 1, 1, 1}));
  add_grouped_conv_points(points);
  add_alignment_points(points);
  add_pointwise_points(points);
  add_norm_points(points);
  add_reduction_points(points);
  add_pooling_points(points);
  add_layout_copy_points(points);
  return points;
}

// Time per call in a CUDA graph of kGraphCalls back-to-back calls, median of the replays.
double graph_call_us(Timing& timing, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream) {
  return graph_time_per_launch_us(timing, stream, {kGraphCalls, 1, kGraphReplays}, [&](int) { launch(stream); });
}

constexpr int kFreshSamples = 15;

// Median summed kernel durations of `launch` when only its first input is in L2, as in a model:
// the previous kernel just wrote it, while the weights and any other input come from DRAM. Before
// each call L2 is flushed and the first input read once (outside the timed kernels). 0 where
// `timer` is off.
double fresh_kernel_us(CuptiTimer& timer, const std::function<void(cudaStream_t)>& launch, const DeviceTensor& first,
                       L2Flush& flush, cudaStream_t stream) {
  if (!timer.ok()) return 0;
  const size_t touch = first.bytes() / 16 * 16;
  DeviceBuffer scratch(std::max<size_t>(touch, 16));
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  timer.collect();
  std::vector<uint64_t> ids;
  for (int i = 0; i < kFreshSamples; ++i) {
    flush.flush(stream);
    if (touch > 0) launch_stream_copy(first.data, scratch.data(), touch, 264, stream);
    ids.push_back(timer.next_external_id());
    timer.push(ids.back());
    launch(stream);
    timer.pop();
  }
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto spans = timer.collect();
  std::vector<double> us;
  for (uint64_t id : ids)
    if (auto it = spans.find(id); it != spans.end()) us.push_back(it->second.kernel_ns / 1e3);
  if (us.empty()) return 0;
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

bool CudaBackend::time_library_call(const NodeSpec& spec, LibraryKernelSample& sample) {
  const OpPlan plan = plan_operation(spec);
  std::string reason;
  auto runner = make_runner(spec, plan, &reason);
  if (!runner) return false;
  std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
  if (slots_.size() < in.size() + out.size()) slots_.resize(in.size() + out.size());
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].spec = spec.inputs[i];
    slots_[i].resize(std::max<size_t>(in[i].bytes(), 16));
    in[i].data = slots_[i].data();
    fill_input(spec, plan, i, in[i].data, 1 + i, context_.stream);
    sample.bytes += static_cast<double>(in[i].bytes());
  }
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].spec = spec.outputs[o];
    DeviceBuffer& slot = slots_[in.size() + o];
    slot.resize(std::max<size_t>(out[o].bytes(), 16));
    out[o].data = slot.data();
    sample.bytes += static_cast<double>(out[o].bytes());
  }
  runner->prepare(in, out, context_);
  sample.implementation = runner->implementation();
  return time_grid_call([&](cudaStream_t s) { runner->launch(s); }, in[0], sample);
}

// A depthwise conv followed by SiLU deploys as one kernel: cuDNN's graph of conv + bias + SiLU
// ranks first a grouped runtime-fusion engine that the graphs of the conv alone, with its bias or
// with ReLU/ReLU6 do not offer (EfficientNet-B0's 3x3 and 5x5 depthwise convs ran 1.2-2.3x faster
// so on the H200). The grid times that graph on the call's buffers and keeps the faster, as the
// deployed runtime's timed choice does.
void CudaBackend::time_depthwise_with_silu(const NodeSpec& spec, LibraryKernelSample& sample) {
  const OpPlan plan = plan_operation(spec);
  const ConvParams* conv = std::get_if<ConvParams>(&plan);
  if (!conv || !conv->has_bias || spec.inputs.size() != 3 || slots_.size() < 4) return;
  MatrixEpilogue silu;
  silu.activation = EpilogueActivation::kSwish;
  try {
    std::string why;
    auto kernel = make_conv_graph_kernel_on(*conv, spec.outputs[0].dtype, silu,
                                         {slots_[0].data(), slots_[1].data(), slots_[2].data(), slots_[3].data()}, context_, &why);
    if (!kernel) return;  // cuDNN runs no plan of this graph: the node's figure stands
    DeviceTensor first;
    first.spec = spec.inputs[0];
    first.data = slots_[0].data();
    LibraryKernelSample fused = sample;
    if (!time_grid_call([&](cudaStream_t s) { kernel->launch(s); }, first, fused) || !(fused.model_us() < sample.model_us()))
      return;
    fused.implementation = kernel->implementation() + " (the conv with its bias and SiLU, against " + sample.implementation + ")";
    sample = fused;
  } catch (const std::exception&) {  // a CUDA call failed while timing it: the node's figure stands
    cudaGetLastError();
  }
}

bool CudaBackend::time_grid_call(const std::function<void(cudaStream_t)>& launch, const DeviceTensor& first,
                                 LibraryKernelSample& sample) {
  SampleConfig config;
  config.rule.min_samples = 10;
  config.rule.max_noise = 0.02;
  config.rule.convergence = Convergence::kSpread;
  config.rule.max_seconds = 0.05;
  const NodeMeasurement m = sample_launches(timing_, launch, context_.stream, config, nullptr);
  sample.kernel_us = m.median_us;
  sample.kernels = static_cast<int>(m.kernels.size());
  sample.graph_us = graph_call_us(timing_, launch, context_.stream);
  sample.fresh_us = fresh_kernel_us(timing_.cupti(), launch, first, l2_flush(), context_.stream);
  return sample.kernel_us > 0;
}

void CudaBackend::calibrate_library_kernels(CalibrationResult& r) {
  const bool autotune = context_.autotune, channels_last = context_.channels_last_half;
  context_.autotune = true;  // the algorithm a deployment's timed choice (cudnn.benchmark) finds
  context_.channels_last_half = true;
  for (const GridPoint& p : grid_points()) {
    LibraryKernelSample s;
    s.kind = p.kind;
    s.shape = p.shape;
    s.flops = p.flops;
    s.k = p.k;
    try {
      if (!time_library_call(p.spec, s)) continue;
      r.library_kernels.push_back(s);
      if (p.kind != "depthwise") continue;
      // The same conv with a SiLU in its kernel: the depthwise_swish curve's sample.
      s.kind = "depthwise_swish";
      s.shape += " silu";
      time_depthwise_with_silu(p.spec, s);
      r.library_kernels.push_back(s);
    } catch (const Error& e) {
      cudaGetLastError();
      cudaStreamSynchronize(context_.stream);
    }
  }
  slots_.clear();
  calibrate_attention_kernels(r.library_kernels);
  context_.autotune = autotune;
  context_.channels_last_half = channels_last;
  r.library_curves = fit_library_curves(r.library_kernels);
  r.notes.push_back("library kernels: " + std::to_string(r.library_kernels.size()) +
                    " fp16 cuBLASLt GEMMs, dense, grouped and depthwise convolutions (timed choice, NHWC), flash attention, "
                    "pointwise, norm, reduction, pooling and layout copy kernels on "
                    "generic shapes; CUPTI kernel durations, median, with all data in L2 and with only the first input in L2 "
                    "(fresh); gap: CUDA graph of 20 back-to-back calls (CUPTI detached) less the warm durations, median over the grid");
}

}  // namespace modelcost::cuda
