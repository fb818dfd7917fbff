#include "measure/cpu_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "modelcost/errors.h"

namespace modelcost {

std::vector<HostTensor> make_outputs(const NodeSpec& spec) {
  std::vector<HostTensor> outputs;
  for (const auto& t : spec.outputs) outputs.push_back(t.present ? HostTensor(t.shape, t.dtype) : HostTensor());
  return outputs;
}

namespace {
// The math helpers the expressions of elementwise_ops.h use, in double.
double exp_(double x) { return std::exp(x); }
double log_(double x) { return std::log(x); }
double log1p_(double x) { return std::log1p(x); }
double erf_(double x) { return std::erf(x); }
double tanh_(double x) { return std::tanh(x); }
double sqrt_(double x) { return std::sqrt(x); }
double fabs_(double x) { return std::fabs(x); }
double floor_(double x) { return std::floor(x); }
double ceil_(double x) { return std::ceil(x); }
double rint_(double x) { return std::nearbyint(x); }
double sin_(double x) { return std::sin(x); }
double cos_(double x) { return std::cos(x); }
double tan_(double x) { return std::tan(x); }
double asin_(double x) { return std::asin(x); }
double acos_(double x) { return std::acos(x); }
double atan_(double x) { return std::atan(x); }
double sinh_(double x) { return std::sinh(x); }
double cosh_(double x) { return std::cosh(x); }
double asinh_(double x) { return std::asinh(x); }
double acosh_(double x) { return std::acosh(x); }
double atanh_(double x) { return std::atanh(x); }
double pow_(double x, double y) { return std::pow(x, y); }
double fmod_(double x, double y) { return std::fmod(x, y); }
double clamp_(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }
int64_t int_(double x) { return static_cast<int64_t>(x); }
}  // namespace

double apply_elementwise(ElementwiseOp op, double a, double b, double c, double alpha, double beta) {
  using F = double;
  switch (op) {
#define MC_CASE(name, onnx, flops, expr) \
  case ElementwiseOp::k##name: return expr;
    MC_UNARY_OPS(MC_CASE) MC_BINARY_OPS(MC_CASE) MC_TERNARY_OPS(MC_CASE)
#undef MC_CASE
  }
  return a;
}

namespace {

// Visits every index of dims in row-major order, keeping one running offset per stride set.
template <typename Fn>
void for_each_index(const std::vector<int64_t>& dims, const std::vector<std::vector<int64_t>>& strides,
                    int64_t base0, int64_t base1, Fn fn) {
  const size_t rank = dims.size();
  double total = 1;
  for (int64_t d : dims) total *= static_cast<double>(d);
  if (total == 0) return;
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offset(std::max<size_t>(strides.size(), 2), 0);
  offset[0] = base0;
  offset[1] = base1;
  for (int64_t i = 0; i < static_cast<int64_t>(total); ++i) {
    fn(i, offset);
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      ++index[d];
      for (size_t s = 0; s < strides.size(); ++s) offset[s] += strides[s][d];
      if (index[d] < dims[d]) break;
      for (size_t s = 0; s < strides.size(); ++s) offset[s] -= strides[s][d] * dims[d];
      index[d] = 0;
    }
  }
}

void run_elementwise(const ElementwisePlan& p, const std::vector<const HostTensor*>& in, HostTensor& out) {
  std::vector<std::vector<int64_t>> strides = p.input_strides;
  strides.resize(3, std::vector<int64_t>(p.dims.size(), 0));
  auto value = [&](size_t k, int64_t at) { return k < p.input_strides.size() ? static_cast<double>(in[k]->data[at]) : 0.0; };
  for_each_index(p.dims, strides, 0, 0, [&](int64_t i, const std::vector<int64_t>& o) {
    out.data[i] = static_cast<float>(apply_elementwise(p.op, value(0, o[0]), value(1, o[1]), value(2, o[2]), p.alpha, p.beta));
  });
}

void run_batch_norm(const BatchNormPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  const HostTensor &x = *in[0], &scale = *in[1], &bias = *in[2], &mean = *in[3], &var = *in[4];
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t c = 0; c < p.axis_len; ++c) {
      const double a = scale.data[c] / std::sqrt(static_cast<double>(var.data[c]) + p.epsilon);
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t at = (o * p.axis_len + c) * p.inner + i;
        y.data[at] = static_cast<float>((x.data[at] - mean.data[c]) * a + bias.data[c]);
      }
    }
}

void run_group_norm(const GroupNormPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
  const HostTensor &x = *in[0], &scale = *in[1], &bias = *in[2];
  const int64_t per_group = p.channels / p.groups, len = per_group * p.spatial;
  for (int64_t row = 0; row < p.batch * p.groups; ++row) {
    const float* v = &x.data[row * len];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += v[j];
    mean /= static_cast<double>(len);
    for (int64_t j = 0; j < len; ++j) var += (v[j] - mean) * (v[j] - mean);
    const double inv = 1 / std::sqrt(var / static_cast<double>(len) + p.epsilon);
    const int64_t group = row % p.groups;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t c = p.per_group_affine ? group : group * per_group + j / p.spatial;
      y.data[row * len + j] = static_cast<float>((v[j] - mean) * inv * scale.data[c] + bias.data[c]);
    }
  }
}

void run_copies(const CopyPlan& p, const std::vector<const HostTensor*>& in, std::vector<HostTensor>& out) {
  if (p.fill_output)
    for (auto& o : out) std::fill(o.data.begin(), o.data.end(), static_cast<float>(p.fill_value));
  for (const StridedCopy& c : p.copies) {
    const HostTensor& src = *in[c.input];
    HostTensor& dst = out[c.output];
    for_each_index(c.dims, {c.src_strides, c.dst_strides}, c.src_offset, c.dst_offset,
                   [&](int64_t, const std::vector<int64_t>& o) { dst.data[o[1]] = src.data[o[0]]; });
  }
}

void run_gather(const GatherPlan& p, const HostTensor& data, const HostTensor& indices, HostTensor& out) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t j = 0; j < p.indices; ++j) {
      int64_t k = static_cast<int64_t>(indices.data[j]);
      if (k < 0) k += p.axis_len;
      if (k < 0 || k >= p.axis_len) throw Error(kExitRuntime, "Gather index out of range");
      for (int64_t i = 0; i < p.inner; ++i)
        out.data[(o * p.indices + j) * p.inner + i] = data.data[(o * p.axis_len + k) * p.inner + i];
    }
}

// One reduced row: at(r) is element r of the row.
template <typename At>
double reduce_row(const ReducePlan& p, At at) {
  const int64_t n = p.axis_len;
  if (p.op == ReduceOp::kArgMax || p.op == ReduceOp::kArgMin) {
    int64_t best = 0;
    for (int64_t r = 1; r < n; ++r) {
      const double v = at(r), b = at(best);
      const bool better = p.op == ReduceOp::kArgMax ? v > b : v < b;
      if (better || (p.select_last_index && v == b)) best = r;
    }
    return static_cast<double>(best);
  }
  double peak = -std::numeric_limits<double>::infinity();
  if (p.op == ReduceOp::kLogSumExp)
    for (int64_t r = 0; r < n; ++r) peak = std::max(peak, at(r));
  double acc = p.op == ReduceOp::kMax ? -std::numeric_limits<double>::infinity()
               : p.op == ReduceOp::kMin ? std::numeric_limits<double>::infinity()
               : p.op == ReduceOp::kProd ? 1 : 0;
  for (int64_t r = 0; r < n; ++r) {
    const double v = at(r);
    switch (p.op) {
      case ReduceOp::kSum: case ReduceOp::kMean: case ReduceOp::kLogSum: acc += v; break;
      case ReduceOp::kMax: acc = std::max(acc, v); break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
      case ReduceOp::kSumSquare: case ReduceOp::kL2: acc += v * v; break;
      case ReduceOp::kL1: acc += std::fabs(v); break;
      case ReduceOp::kLogSumExp: acc += std::exp(v - peak); break;
      case ReduceOp::kProd: acc *= v; break;
      case ReduceOp::kArgMax: case ReduceOp::kArgMin: break;
    }
  }
  if (p.op == ReduceOp::kMean) acc /= static_cast<double>(n);
  if (p.op == ReduceOp::kL2) acc = std::sqrt(acc);
  if (p.op == ReduceOp::kLogSum) acc = std::log(acc);
  if (p.op == ReduceOp::kLogSumExp) acc = peak + std::log(acc);
  return acc;
}

void run_reduce(const ReducePlan& p, const HostTensor& x, HostTensor& y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      auto at = [&](int64_t r) { return static_cast<double>(x.data[(o * p.axis_len + r) * p.inner + i]); };
      y.data[o * p.inner + i] = static_cast<float>(reduce_row(p, at));
    }
}

void run_scan(const ScanPlan& p, const HostTensor& x, HostTensor& y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      double acc = 0;
      for (int64_t step = 0; step < p.axis_len; ++step) {
        const int64_t r = p.reverse ? p.axis_len - 1 - step : step;
        const int64_t at = (o * p.axis_len + r) * p.inner + i;
        const double v = x.data[at];
        if (!p.exclusive) acc += v;
        y.data[at] = static_cast<float>(acc);
        if (p.exclusive) acc += v;
      }
    }
}

void run_range(const HostTensor& start, const HostTensor& delta, HostTensor& y) {
  for (size_t i = 0; i < y.data.size(); ++i)
    y.data[i] = static_cast<float>(start.data[0] + static_cast<double>(i) * delta.data[0]);
}

void run_softmax(const SoftmaxPlan& p, const HostTensor& x, HostTensor& y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      auto index = [&](int64_t r) { return (o * p.axis_len + r) * p.inner + i; };
      double peak = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t r = 0; r < p.axis_len; ++r) peak = std::max(peak, static_cast<double>(x.data[index(r)]));
      for (int64_t r = 0; r < p.axis_len; ++r) sum += std::exp(x.data[index(r)] - peak);
      for (int64_t r = 0; r < p.axis_len; ++r) {
        const double v = x.data[index(r)] - peak;
        y.data[index(r)] = static_cast<float>(p.log_softmax ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
}

void run_layer_norm(const LayerNormPlan& p, const HostTensor& x, const HostTensor* scale, const HostTensor* bias, HostTensor& y) {
  const int64_t n = p.axis_len;
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* row = &x.data[o * n];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += row[j];
    mean /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(n);
    const double inv = 1 / std::sqrt(var + p.epsilon);
    for (int64_t j = 0; j < n; ++j) {
      double v = (row[j] - mean) * inv;
      if (scale) v *= scale->data[j];
      if (bias) v += bias->data[j];
      y.data[o * n + j] = static_cast<float>(v);
    }
  }
}

}  // namespace

void run_cpu_reference(const NodeSpec& spec, const OpPlan& plan, const std::vector<const HostTensor*>& in,
                       std::vector<HostTensor>& out) {
  auto input = [&](size_t i) -> const HostTensor* { return i < in.size() ? in[i] : nullptr; };
  bool ran = true;
  std::visit(Overloaded{
                 [&](const ElementwisePlan& p) { run_elementwise(p, in, out[0]); },
                 [&](const CopyPlan& p) { run_copies(p, in, out); },
                 [&](const GatherPlan& p) { run_gather(p, *in[0], *in[1], out[0]); },
                 [&](const ReducePlan& p) { run_reduce(p, *in[0], out[0]); },
                 [&](const SoftmaxPlan& p) { run_softmax(p, *in[0], out[0]); },
                 [&](const LayerNormPlan& p) { run_layer_norm(p, *in[0], input(1), input(2), out[0]); },
                 [&](const BatchNormPlan& p) { run_batch_norm(p, in, out[0]); },
                 [&](const GroupNormPlan& p) { run_group_norm(p, in, out[0]); },
                 [&](const ScanPlan& p) { run_scan(p, *in[0], out[0]); },
                 [&](const ConvParams& p) { cpu_conv(p, *in[0], *in[1], input(2), out[0]); },
                 [&](const PoolParams& p) { cpu_pool(p, *in[0], out[0]); },
                 [&](const MatMulParams& p) { cpu_matmul(p, *in[0], *in[1], input(2), out[0]); },
                 [&](const ResizePlan& p) { cpu_resize(p, *in[0], out[0]); },
                 [&](const IndexedPlan& p) { cpu_indexed(p, in, out[0]); },
                 [&](const RangePlan&) { run_range(*in[0], *in[2], out[0]); },
                 [&](const TopKPlan& p) { cpu_topk(p, *in[0], out[0], out.size() > 1 && !out[1].data.empty() ? &out[1] : nullptr); },
                 [&](const PadPlan& p) { cpu_pad(p, *in[0], out[0]); },
                 [&](const ContractionPlan& p) { cpu_contraction(p, *in[0], *in[1], out[0]); },
                 [&](const ConvTransposePlan& p) { cpu_conv_transpose(p.conv, *in[0], *in[1], input(2), out[0]); },
                 [&](const RecurrentPlan& p) { cpu_recurrent(p, in, out); },
                 [&](const QuantizePlan& p) { cpu_quantize(p, in, out[0]); },
                 [&](const DynamicQuantizePlan&) { cpu_dynamic_quantize(*in[0], out); },
                 [&](const IntegerMatMulPlan& p) { cpu_integer_matmul(p, in, out[0]); },
                 [&](const QLinearConvPlan& p) { cpu_qlinear_conv(p, in, out[0]); },
                 [&](const RoiAlignPlan& p) { cpu_roi_align(p, in, out[0]); },
                 [&](const NonZeroPlan& p) { cpu_nonzero(p, *in[0], out[0]); },
                 [&](const NmsPlan& p) { cpu_nms(p, *in[0], *in[1], out[0]); },
                 [&](const BranchPlan&) {
                   throw Error(kExitRuntime, "node '" + spec.name + "': the CPU reference does not run If branches");
                 },
                 [&](const ZeroCostPlan&) { ran = false; },
                 [&](const UnsupportedPlan& p) {
                   throw Error(kExitRuntime, "node '" + spec.name + "': " + p.reason);
                 },
             },
             plan);
  if (ran)
    for (auto& o : out) round_to_dtype(o);
}

}  // namespace modelcost
