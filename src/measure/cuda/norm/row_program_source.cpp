#include <fmt/format.h>

#include <algorithm>

#include "modelcost/errors.h"
#include "norm/row_program.h"
#include "pointwise/chain_source.h"

namespace modelcost::cuda {

int64_t RowProgram::rows() const {
  int64_t n = 1;
  for (int64_t d : row_dims) n *= d;
  return n;
}

namespace {

// Where each step's value lives and when it is known: per row (computed once, in the row's scope)
// or per element (computed inside a pass), and after how many of the row's reductions.
struct StepPlace {
  bool per_row = false;
  int phase = 0;
};

int arity(const RowStep& s) { return s.reduction ? 1 : elementwise_arity(s.op); }

std::vector<StepPlace> place_steps(const RowProgram& p) {
  std::vector<StepPlace> place(p.steps.size());
  int reductions = 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const RowStep& s = p.steps[i];
    bool per_row = true;
    int phase = 0;
    for (int k = 0; k < arity(s); ++k) {
      const int o = s.operand[k];
      if (o >= 0) {
        if (o >= int(p.inputs.size())) throw Error(kExitRuntime, "row program: step " + std::to_string(i) + " reads a missing input");
        per_row = per_row && p.inputs[o].column_stride == 0;
      } else {
        const int j = -o - 1;
        if (j >= int(i)) throw Error(kExitRuntime, "row program: step " + std::to_string(i) + " reads a later step");
        per_row = per_row && place[j].per_row;
        phase = std::max(phase, place[j].phase);
      }
    }
    place[i] = s.reduction ? StepPlace{true, ++reductions} : StepPlace{per_row, phase};
  }
  return place;
}

std::string operand_name(int o) { return o >= 0 ? fmt::format("x{}", o) : fmt::format("s{}", -o - 1); }

std::string elementwise_code(const RowStep& s, int i, const char* indent) {
  return elementwise_step_code(i, s.op, s.operand, s.alpha, s.beta, indent);
}

const char* fold_init(ReduceOp f) {
  return f == ReduceOp::kMax ? "__int_as_float(0xff800000)" : f == ReduceOp::kMin ? "__int_as_float(0x7f800000)" : "0.f";
}
std::string combine(ReduceOp f, const std::string& a, const std::string& b) {
  if (f == ReduceOp::kMax) return fmt::format("fmaxf({}, {})", a, b);
  if (f == ReduceOp::kMin) return fmt::format("fminf({}, {})", a, b);
  return fmt::format("({} + {})", a, b);
}
std::string fold_in(ReduceOp f, const std::string& v) {
  const bool square = f == ReduceOp::kSumSquare || f == ReduceOp::kL2;
  return combine(f, "acc", square ? fmt::format("{0} * {0}", v) : v);
}
std::string finish(ReduceOp f, int64_t n) {
  if (f == ReduceOp::kMean) return fmt::format("acc / {}.f", n);
  if (f == ReduceOp::kL2) return "sqrtf(acc)";
  return "acc";
}

// The offset of input k's row r, through constant divisions over the row dims.
std::string row_offset(const RowProgram& p, int k) { return strided_index_offset(p.row_dims, p.inputs[k].row_strides, "r"); }

class SourceWriter {
 public:
  SourceWriter(const RowProgram& p, int threads_per_row)
      : p_(p), place_(place_steps(p)), tpr_(threads_per_row), held_((p.row_length + threads_per_row - 1) / threads_per_row) {
    if (held_ > kHeldPerThread) held_ = 0;
  }

  std::string body() {
    std::string b = fmt::format(
        "  const unsigned lane = threadIdx.x % {0};\n"
        "  for (long long r = (long long)blockIdx.x * {1} + threadIdx.x / {0}; r < {2}LL; r += (long long)gridDim.x * {1}) {{\n",
        tpr_, kRowProgramThreads / tpr_, p_.rows());
    for (size_t k = 0; k < p_.inputs.size(); ++k) {
      b += fmt::format("    const long long b{} = {};\n", k, row_offset(p_, int(k)));
      if (p_.inputs[k].column_stride == 0)
        b += fmt::format("    const float x{} = {};\n", k, load_as_float(p_.inputs[k].type, int(k), fmt::format("b{}", k)));
    }
    if (held_ > 0) b += hold_row();
    int pass = 0;
    b += row_steps(0);
    for (size_t i = 0; i < p_.steps.size(); ++i)
      if (p_.steps[i].reduction) {
        b += reduction_pass(int(i), pass);
        b += row_steps(++pass);
      }
    b += final_pass();
    b += "  }\n";
    return b;
  }

 private:
  // The per-row elementwise steps known after `phase` reductions.
  std::string row_steps(int phase) const {
    std::string b;
    for (size_t i = 0; i < p_.steps.size(); ++i)
      if (!p_.steps[i].reduction && place_[i].per_row && place_[i].phase == phase) b += elementwise_code(p_.steps[i], int(i), "    ");
    return b;
  }

  std::string element_load(size_t k) const {
    const int64_t cs = p_.inputs[k].column_stride;
    const std::string offset = cs == 1 ? fmt::format("b{} + c", k) : fmt::format("b{} + c * {}", k, cs);
    return load_as_float(p_.inputs[k].type, int(k), offset);
  }

  // A short row's elements are loaded once, all at the row's start, into registers: the passes
  // then wait on one round of loads instead of one per element.
  std::string hold_row() const {
    std::string b;
    for (size_t k = 0; k < p_.inputs.size(); ++k)
      if (p_.inputs[k].column_stride != 0) b += fmt::format("    float h{}[{}];\n", k, held_);
    b += fmt::format("#pragma unroll\n    for (int j = 0; j < {}; ++j) {{\n      const long long c = lane + j * {};\n", held_, tpr_);
    for (size_t k = 0; k < p_.inputs.size(); ++k)
      if (p_.inputs[k].column_stride != 0)
        b += fmt::format("      h{}[j] = c < {}LL ? {} : 0.f;\n", k, p_.row_length, element_load(k));
    return b + "    }\n";
  }

  // A loop over the row's elements (lane, lane + threads, ...) computing the per-element steps
  // known after `phase` reductions; `tail` runs for each element after them.
  std::string element_loop(int phase, const std::string& tail) const {
    std::string b;
    if (held_ > 0)
      b = fmt::format("#pragma unroll\n    for (int j = 0; j < {0}; ++j) {{\n      const long long c = lane + j * {1};\n"
                      "      if (c >= {2}LL) break;\n",
                      held_, tpr_, p_.row_length);
    else
      b = fmt::format("#pragma unroll 4\n    for (long long c = lane; c < {}LL; c += {}) {{\n", p_.row_length, tpr_);
    for (size_t k = 0; k < p_.inputs.size(); ++k)
      if (p_.inputs[k].column_stride != 0)
        b += fmt::format("      const float x{} = {};\n", k, held_ > 0 ? fmt::format("h{}[j]", k) : element_load(k));
    for (size_t i = 0; i < p_.steps.size(); ++i)
      if (!p_.steps[i].reduction && !place_[i].per_row && place_[i].phase <= phase)
        b += elementwise_code(p_.steps[i], int(i), "      ");
    return b + tail + "    }\n";
  }

  std::string reduction_pass(int i, int phase) const {
    const RowStep& s = p_.steps[i];
    const std::string value = operand_name(s.operand[0]);
    std::string b = fmt::format("    float s{};\n    {{\n    float acc = {};\n", i, fold_init(s.fold));
    b += element_loop(phase, fmt::format("      acc = {};\n", fold_in(s.fold, value)));
    b += "    for (int o = 16; o > 0; o >>= 1) { const float other = __shfl_xor_sync(0xffffffffu, acc, o); acc = " +
         combine(s.fold, "acc", "other") + "; }\n";
    if (tpr_ > 32) {
      b += "    if (threadIdx.x % 32 == 0) mc_partial[threadIdx.x / 32] = acc;\n    __syncthreads();\n    acc = mc_partial[0];\n";
      for (int w = 1; w < tpr_ / 32; ++w) b += fmt::format("    acc = {};\n", combine(s.fold, "acc", fmt::format("mc_partial[{}]", w)));
      b += "    __syncthreads();\n";
    }
    return b + fmt::format("    s{} = {};\n    }}\n", i, finish(s.fold, p_.row_length));
  }

  std::string final_pass() const {
    std::string stores, row_stores;
    for (size_t o = 0; o < p_.outputs.size(); ++o) {
      const RowOutput& out = p_.outputs[o];
      const std::string value = fmt::format("s{}", out.step);
      if (out.per_row)
        row_stores += "      " + store_from_float(out.type, int(o), "r", value) + "\n";
      else
        stores += "      " + store_from_float(out.type, int(o), fmt::format("r * {}LL + c", p_.row_length), value) + "\n";
    }
    const int last_phase = int(std::count_if(p_.steps.begin(), p_.steps.end(), [](const RowStep& s) { return s.reduction; }));
    std::string b = stores.empty() ? "" : element_loop(last_phase, stores);
    if (!row_stores.empty()) b += "    if (lane == 0) {\n" + row_stores + "    }\n";
    return b;
  }

  static constexpr int64_t kHeldPerThread = 16;  // registers per input a thread may hold a row in
  const RowProgram& p_;
  const std::vector<StepPlace> place_;
  const int tpr_;
  int64_t held_ = 0;  // elements each thread holds, 0 where the row is too long to hold
};

}  // namespace

RowProgramSource row_program_source(const RowProgram& p, int multiprocessors) {
  if (p.inputs.size() > size_t(kChainMaxInputs) || p.outputs.size() > size_t(kChainMaxOutputs))
    throw Error(kExitRuntime, "row program: more inputs or outputs than the kernel's argument holds");
  for (const RowOutput& out : p.outputs)
    if (out.step < 0 || out.step >= int(p.steps.size())) throw Error(kExitRuntime, "row program: an output of a missing step");
  RowProgramSource out;
  // A warp per row where a row is short or there are rows enough to fill the GPU, else a block.
  const int64_t rows = p.rows();
  out.threads_per_row = p.row_length >= 1024 && rows < int64_t(multiprocessors) * 16 ? kRowProgramThreads : 32;
  const int64_t rows_per_block = kRowProgramThreads / out.threads_per_row;
  out.blocks = std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, int64_t(multiprocessors) * 16);
  SourceWriter writer(p, out.threads_per_row);
  out.text = fmt::format(
      "{}struct ChainArgs {{ const void* input[{}]; void* output[{}]; }};\n"
      "extern \"C\" __global__ void __launch_bounds__({}) {}(const ChainArgs args) {{\n"
      "  using namespace device_math;\n  typedef float F;\n{}{}}}\n",
      generated_preamble(), kChainMaxInputs, kChainMaxOutputs, kRowProgramThreads, kRowProgramKernelName,
      out.threads_per_row > 32 ? fmt::format("  __shared__ float mc_partial[{}];\n", kRowProgramThreads / 32) : "",
      writer.body());
  return out;
}

ChainArgs row_program_args(const RowProgram& p) {
  ChainArgs args;
  for (size_t k = 0; k < p.inputs.size(); ++k) args.input[k] = p.inputs[k].data;
  for (size_t o = 0; o < p.outputs.size(); ++o) args.output[o] = p.outputs[o].data;
  return args;
}

}  // namespace modelcost::cuda
