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

double apply_unary(UnaryOp op, double x, double alpha, double beta) {
  switch (op) {
    case UnaryOp::kIdentity: return x;
    case UnaryOp::kRelu: return x > 0 ? x : 0;
    case UnaryOp::kSigmoid: return 1 / (1 + std::exp(-x));
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kReciprocal: return 1 / x;
    case UnaryOp::kGelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::kGeluTanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case UnaryOp::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case UnaryOp::kHardSwish: return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    case UnaryOp::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case UnaryOp::kClip: return std::min(std::max(x, alpha), beta);
    case UnaryOp::kSoftplus: return std::log1p(std::exp(x));
    case UnaryOp::kSilu: return x / (1 + std::exp(-x));
    case UnaryOp::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1);
    case UnaryOp::kFloor: return std::floor(x);
    case UnaryOp::kCeil: return std::ceil(x);
  }
  return x;
}

double apply_binary(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return std::pow(a, b);
    case BinaryOp::kMax: return std::max(a, b);
    case BinaryOp::kMin: return std::min(a, b);
    case BinaryOp::kPRelu: return a >= 0 ? a : a * b;
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
  std::vector<int64_t> offset = {base0, base1, 0};
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

void run_elementwise(const OpPlan& p, const std::vector<const HostTensor*>& in, HostTensor& out) {
  if (p.kind == OpKind::kUnary) {
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = static_cast<float>(apply_unary(p.unary, in[0]->data[i], p.alpha, p.beta));
    return;
  }
  for_each_index(p.dims, {p.input_strides[0], p.input_strides[1]}, 0, 0, [&](int64_t i, const std::vector<int64_t>& o) {
    out.data[i] = static_cast<float>(apply_binary(p.binary, in[0]->data[o[0]], in[1]->data[o[1]]));
  });
}

void run_where(const OpPlan& p, const std::vector<const HostTensor*>& in, HostTensor& out) {
  for_each_index(p.dims, {p.input_strides[0], p.input_strides[1], p.input_strides[2]}, 0, 0,
                 [&](int64_t i, const std::vector<int64_t>& o) {
                   out.data[i] = in[0]->data[o[0]] != 0 ? in[1]->data[o[1]] : in[2]->data[o[2]];
                 });
}

void run_batch_norm(const OpPlan& p, const std::vector<const HostTensor*>& in, HostTensor& y) {
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

void run_copies(const OpPlan& p, const std::vector<const HostTensor*>& in, std::vector<HostTensor>& out) {
  if (p.fill_output)
    for (auto& o : out) std::fill(o.data.begin(), o.data.end(), static_cast<float>(p.fill_value));
  for (const StridedCopy& c : p.copies) {
    const HostTensor& src = *in[c.input];
    HostTensor& dst = out[c.output];
    for_each_index(c.dims, {c.src_strides, c.dst_strides}, c.src_offset, c.dst_offset,
                   [&](int64_t, const std::vector<int64_t>& o) { dst.data[o[1]] = src.data[o[0]]; });
  }
}

void run_gather(const OpPlan& p, const HostTensor& data, const HostTensor& indices, HostTensor& out) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t j = 0; j < p.indices; ++j) {
      int64_t k = static_cast<int64_t>(indices.data[j]);
      if (k < 0) k += p.axis_len;
      if (k < 0 || k >= p.axis_len) throw Error(kExitRuntime, "Gather index out of range");
      for (int64_t i = 0; i < p.inner; ++i)
        out.data[(o * p.indices + j) * p.inner + i] = data.data[(o * p.axis_len + k) * p.inner + i];
    }
}

void run_reduce(const OpPlan& p, const HostTensor& x, HostTensor& y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      auto at = [&](int64_t r) { return static_cast<double>(x.data[(o * p.axis_len + r) * p.inner + i]); };
      double acc = p.reduce == ReduceOp::kMax ? -std::numeric_limits<double>::infinity()
                   : p.reduce == ReduceOp::kMin ? std::numeric_limits<double>::infinity() : 0;
      double peak = -std::numeric_limits<double>::infinity();
      if (p.reduce == ReduceOp::kLogSumExp)
        for (int64_t r = 0; r < p.axis_len; ++r) peak = std::max(peak, at(r));
      for (int64_t r = 0; r < p.axis_len; ++r) {
        const double v = at(r);
        switch (p.reduce) {
          case ReduceOp::kSum: case ReduceOp::kMean: acc += v; break;
          case ReduceOp::kMax: acc = std::max(acc, v); break;
          case ReduceOp::kMin: acc = std::min(acc, v); break;
          case ReduceOp::kSumSquare: case ReduceOp::kL2: acc += v * v; break;
          case ReduceOp::kL1: acc += std::fabs(v); break;
          case ReduceOp::kLogSumExp: acc += std::exp(v - peak); break;
        }
      }
      if (p.reduce == ReduceOp::kMean) acc /= static_cast<double>(p.axis_len);
      if (p.reduce == ReduceOp::kL2) acc = std::sqrt(acc);
      if (p.reduce == ReduceOp::kLogSumExp) acc = peak + std::log(acc);
      y.data[o * p.inner + i] = static_cast<float>(acc);
    }
}

void run_softmax(const OpPlan& p, const HostTensor& x, HostTensor& y) {
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

void run_layer_norm(const OpPlan& p, const HostTensor& x, const HostTensor* scale, const HostTensor* bias, HostTensor& y) {
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
  switch (plan.kind) {
    case OpKind::kUnary: case OpKind::kBinary: run_elementwise(plan, in, out[0]); break;
    case OpKind::kCopy: run_copies(plan, in, out); break;
    case OpKind::kGather: run_gather(plan, *in[0], *in[1], out[0]); break;
    case OpKind::kReduce: run_reduce(plan, *in[0], out[0]); break;
    case OpKind::kSoftmax: run_softmax(plan, *in[0], out[0]); break;
    case OpKind::kLayerNorm: run_layer_norm(plan, *in[0], input(1), input(2), out[0]); break;
    case OpKind::kConv: cpu_conv(plan.conv, *in[0], *in[1], input(2), out[0]); break;
    case OpKind::kPool: cpu_pool(plan.pool, *in[0], out[0]); break;
    case OpKind::kMatMul: cpu_matmul(plan.matmul, *in[0], *in[1], input(2), out[0]); break;
    case OpKind::kResize: cpu_resize(plan, *in[0], out[0]); break;
    case OpKind::kWhere: run_where(plan, in, out[0]); break;
    case OpKind::kBatchNorm: run_batch_norm(plan, in, out[0]); break;
    case OpKind::kZeroCost: return;
    case OpKind::kUnsupported: throw Error(kExitRuntime, "node '" + spec.name + "': " + plan.reason);
  }
  for (auto& o : out) round_to_dtype(o);
}

}  // namespace modelcost
