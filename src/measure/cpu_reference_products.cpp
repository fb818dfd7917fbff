// Reference Einsum contractions, ConvTranspose and the recurrent layers for the CPU path: plain
// loop nests read from the plans' own descriptions (the contraction's loop nest, not its
// packed GPU form), so that they check the GPU path rather than repeat it.
#include <cmath>

#include "measure/cpu_reference.h"

namespace modelcost {
namespace {

int64_t product_of(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// Offsets along the loop indices [begin, end) of flat position `flat` (row-major).
void add_offsets(const ContractionPlan& p, size_t begin, size_t end, int64_t flat, int64_t* a, int64_t* b) {
  for (size_t d = end; d-- > begin;) {
    const int64_t i = flat % p.loop_dims[d];
    flat /= p.loop_dims[d];
    *a += i * p.a_loop_strides[d];
    *b += i * p.b_loop_strides[d];
  }
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// One direction of a recurrent layer over the whole sequence (cpu_recurrent's state).
struct RecurrentPass {
  const RecurrentPlan& p;
  const std::vector<const HostTensor*>& in;
  int64_t dir;
  std::vector<double> h, c;  // [batch, hidden]

  const float* weights(size_t input, int64_t cols) const { return &in[input]->data[dir * p.gates() * p.hidden * cols]; }
  double bias(int64_t index) const { return p.has_bias ? in[3]->data[dir * 2 * p.gates() * p.hidden + index] : 0.0; }

  // Row `row` of the gates' weights (gates*hidden x cols) times vector v.
  static double dot(const float* w, int64_t row, int64_t cols, const double* v) {
    double s = 0;
    for (int64_t k = 0; k < cols; ++k) s += w[row * cols + k] * v[k];
    return s;
  }

  // Runs step t for batch row b; writes the new h (and c) into h_next / c_next.
  void step(int64_t t, int64_t b, double* h_next, double* c_next) const {
    const int64_t H = p.hidden, G = p.gates();
    std::vector<double> x(static_cast<size_t>(p.input));
    for (int64_t i = 0; i < p.input; ++i) x[i] = in[0]->data[(t * p.batch + b) * p.input + i];
    const float *w = weights(1, p.input), *r = weights(2, H);
    const double* hp = &h[b * H];
    auto xw = [&](int64_t g, int64_t j) { return dot(w, g * H + j, p.input, x.data()) + bias(g * H + j); };
    auto hr = [&](int64_t g, int64_t j) { return dot(r, g * H + j, H, hp) + bias(G * H + g * H + j); };
    if (p.cell == RecurrentPlan::Cell::kRnn) {
      for (int64_t j = 0; j < H; ++j) h_next[j] = std::tanh(xw(0, j) + hr(0, j));
    } else if (p.cell == RecurrentPlan::Cell::kGru) {
      std::vector<double> z(H), rh(H), rgate(H);
      for (int64_t j = 0; j < H; ++j) {
        z[j] = sigmoid(xw(0, j) + hr(0, j));
        rgate[j] = sigmoid(xw(1, j) + hr(1, j));
        rh[j] = rgate[j] * hp[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        const double candidate_in = p.linear_before_reset ? rgate[j] * hr(2, j)
                                                          : dot(r, 2 * H + j, H, rh.data()) + bias(G * H + 2 * H + j);
        const double candidate = std::tanh(xw(2, j) + candidate_in);
        h_next[j] = (1 - z[j]) * candidate + z[j] * hp[j];
      }
    } else {
      const double* cp = &c[b * H];
      auto peep = [&](int64_t k, int64_t j) { return p.has_peepholes ? in[7]->data[dir * 3 * H + k * H + j] : 0.0; };
      for (int64_t j = 0; j < H; ++j) {  // gates i, o, f, c; peepholes i, o, f
        const double i_gate = sigmoid(xw(0, j) + hr(0, j) + peep(0, j) * cp[j]);
        const double f_gate = sigmoid(xw(2, j) + hr(2, j) + peep(2, j) * cp[j]);
        const double g_gate = std::tanh(xw(3, j) + hr(3, j));
        c_next[j] = f_gate * cp[j] + i_gate * g_gate;
        const double o_gate = sigmoid(xw(1, j) + hr(1, j) + peep(1, j) * c_next[j]);
        h_next[j] = o_gate * std::tanh(c_next[j]);
      }
    }
  }
};

}  // namespace

void cpu_contraction(const ContractionPlan& p, const HostTensor& a, const HostTensor& b, HostTensor& y) {
  const size_t rank = p.loop_dims.size();
  const int64_t outputs = product_of(p.loop_dims, 0, p.output_rank), sums = product_of(p.loop_dims, p.output_rank, rank);
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t a_base = 0, b_base = 0;
    add_offsets(p, 0, p.output_rank, o, &a_base, &b_base);
    double acc = 0;
    for (int64_t s = 0; s < sums; ++s) {
      int64_t ao = a_base, bo = b_base;
      add_offsets(p, p.output_rank, rank, s, &ao, &bo);
      acc += static_cast<double>(a.data[ao]) * b.data[bo];
    }
    y.data[o] = static_cast<float>(acc);
  }
}

// Every input pixel scatters its kernel-sized block: y[o] += x[i] * w where o = i*s - pad + k*d.
void cpu_conv_transpose(const ConvParams& c, const HostTensor& x, const HostTensor& w, const HostTensor* bias, HostTensor& y) {
  const size_t n = c.kernel.size(), shift = 3 - n;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    in[shift + i] = c.in_size[i];
    out[shift + i] = c.out_size[i];
    k[shift + i] = c.kernel[i];
    s[shift + i] = c.strides[i];
    d[shift + i] = c.dilations[i];
    pad[shift + i] = c.pads[i];
  }
  const int64_t in_count = in[0] * in[1] * in[2], out_count = out[0] * out[1] * out[2], k_count = k[0] * k[1] * k[2];
  const int64_t group_in = c.in_channels / c.groups, group_out = c.out_channels / c.groups;
  std::vector<double> acc(y.data.size(), 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t ci = 0; ci < c.in_channels; ++ci) {
      const int64_t g = ci / group_in;
      for (int64_t p = 0; p < in_count; ++p) {
        const int64_t ip[3] = {p / (in[1] * in[2]), p / in[2] % in[1], p % in[2]};
        const double v = x.data[(b * c.in_channels + ci) * in_count + p];
        for (int64_t kk = 0; kk < k_count; ++kk) {
          const int64_t kp[3] = {kk / (k[1] * k[2]), kk / k[2] % k[1], kk % k[2]};
          int64_t o = 0;
          bool inside = true;
          for (int a = 0; a < 3; ++a) {
            const int64_t at = ip[a] * s[a] - pad[a] + kp[a] * d[a];
            inside = inside && at >= 0 && at < out[a];
            o = o * out[a] + at;
          }
          if (!inside) continue;
          for (int64_t m = 0; m < group_out; ++m)
            acc[(b * c.out_channels + g * group_out + m) * out_count + o] += v * w.data[(ci * group_out + m) * k_count + kk];
        }
      }
    }
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t channel = static_cast<int64_t>(i) / out_count % c.out_channels;
    y.data[i] = static_cast<float>(acc[i] + (bias ? bias->data[channel] : 0.0));
  }
}

void cpu_recurrent(const RecurrentPlan& p, const std::vector<const HostTensor*>& in, std::vector<HostTensor>& out) {
  const int64_t H = p.hidden, B = p.batch, D = p.directions;
  for (int64_t dir = 0; dir < D; ++dir) {
    RecurrentPass pass{p, in, dir, std::vector<double>(B * H, 0.0), std::vector<double>(B * H, 0.0)};
    for (int64_t i = 0; i < B * H; ++i) {
      if (p.has_initial_h) pass.h[i] = in[5]->data[dir * B * H + i];
      if (p.has_initial_c) pass.c[i] = in[6]->data[dir * B * H + i];
    }
    const bool backward = p.reverse || dir == 1;
    for (int64_t step = 0; step < p.seq; ++step) {
      const int64_t t = backward ? p.seq - 1 - step : step;
      std::vector<double> h_next(B * H), c_next(B * H);
      for (int64_t b = 0; b < B; ++b) pass.step(t, b, &h_next[b * H], &c_next[b * H]);
      pass.h = h_next;
      if (p.cell == RecurrentPlan::Cell::kLstm) pass.c = c_next;
      if (!out[0].data.empty())
        for (int64_t i = 0; i < B * H; ++i) out[0].data[(t * D + dir) * B * H + i] = static_cast<float>(pass.h[i]);
    }
    for (int64_t i = 0; i < B * H; ++i) {
      if (out.size() > 1 && !out[1].data.empty()) out[1].data[dir * B * H + i] = static_cast<float>(pass.h[i]);
      if (out.size() > 2 && !out[2].data.empty()) out[2].data[dir * B * H + i] = static_cast<float>(pass.c[i]);
    }
  }
}

}  // namespace modelcost
