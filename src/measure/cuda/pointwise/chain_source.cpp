#include "pointwise/chain_source.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/device_math_list.h"

namespace modelcost::cuda {
namespace {

#define MC_EXPRESSION_TEXT(name, onnx, flops, expr) \
  case ElementwiseOp::k##name: return #expr;
const char* expression_text(ElementwiseOp op) {
  switch (op) {
    MC_UNARY_OPS(MC_EXPRESSION_TEXT)
    MC_BINARY_OPS(MC_EXPRESSION_TEXT)
    MC_TERNARY_OPS(MC_EXPRESSION_TEXT)
  }
  return "a";
}
#undef MC_EXPRESSION_TEXT

#define MC_HELPER_TEXT(type, name, params, body) "__device__ __forceinline__ " #type " " #name #params " { return " #body "; }\n"
// Conversions through PTX: the source needs no header.
constexpr const char* kPreamble =
    "namespace device_math {\n" MC_DEVICE_MATH(MC_HELPER_TEXT) "}\n"
    "typedef unsigned short mc_u16;\n"
    "typedef unsigned int mc_u32;\n"
    "struct __align__(16) mc_v4 { mc_u32 x, y, z, w; };\n"
    "__device__ __forceinline__ mc_u32 mc_word(const mc_v4& q, int j) { return j == 0 ? q.x : j == 1 ? q.y : j == 2 ? q.z : q.w; }\n"
    "__device__ __forceinline__ float mc_f16(mc_u16 h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "__device__ __forceinline__ mc_u16 mc_to_f16(float f) { mc_u16 h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "__device__ __forceinline__ float mc_bf16(mc_u16 h) { return __uint_as_float(((mc_u32)h) << 16); }\n"
    "__device__ __forceinline__ mc_u16 mc_to_bf16(float f) { mc_u16 h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n";
#undef MC_HELPER_TEXT

enum class Access { kContiguous, kScalar, kStrided };

// The chain's dims with size-1 dims dropped and neighbours merged where every input steps
// through them alike; strides per input over the merged dims.
struct Iteration {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // [input][dim]
  int64_t elements = 1;
};

Iteration merge_dims(const ChainProgram& p) {
  Iteration it;
  it.strides.resize(p.inputs);
  for (int d = 0; d < p.rank; ++d) {
    it.elements *= p.dims[d];
    if (p.dims[d] == 1) continue;
    bool merge = !it.dims.empty();
    for (int k = 0; k < p.inputs && merge; ++k) merge = it.strides[k].back() == p.strides[k][d] * p.dims[d];
    if (merge) {
      it.dims.back() *= p.dims[d];
      for (int k = 0; k < p.inputs; ++k) it.strides[k].back() = p.strides[k][d];
      continue;
    }
    it.dims.push_back(p.dims[d]);
    for (int k = 0; k < p.inputs; ++k) it.strides[k].push_back(p.strides[k][d]);
  }
  return it;
}

Access access(const Iteration& it, int k) {
  bool contiguous = true, scalar = true;
  int64_t expected = 1;
  for (size_t d = it.dims.size(); d-- > 0;) {
    contiguous = contiguous && it.strides[k][d] == expected;
    scalar = scalar && it.strides[k][d] == 0;
    expected *= it.dims[d];
  }
  return scalar ? Access::kScalar : contiguous ? Access::kContiguous : Access::kStrided;
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

std::string load(const ChainProgram& p, int k, const std::string& offset) { return load_as_float(p.input_type[k], k, offset); }

// Element j (a constant after unrolling) of the 8-wide vector loaded as q<k>_<part>.
std::string vector_element(ElementType type, const std::string& q) {
  switch (type) {
    case ElementType::kFloat16: return fmt::format("mc_f16((mc_u16)(mc_word({0}_0, j >> 1) >> ((j & 1) * 16)))", q);
    case ElementType::kBFloat16: return fmt::format("mc_bf16((mc_u16)(mc_word({0}_0, j >> 1) >> ((j & 1) * 16)))", q);
    default: return fmt::format("__uint_as_float(mc_word(j < 4 ? {0}_0 : {0}_1, j & 3))", q);
  }
}

int vectors_of_8(ElementType type) { return type == ElementType::kFloat32 ? 2 : 1; }

// The offset of input k for flat element index i, through constant divisions.
std::string strided_offset(const Iteration& it, int k) { return strided_index_offset(it.dims, it.strides[k], "i"); }

std::string step_code(const ChainProgram& p, int s) {
  const ChainStep& st = p.step[s];
  return elementwise_step_code(s, st.op, st.operand, st.alpha, st.beta, "      ");
}

std::string store_code(const ChainProgram& p, int o, bool vector) {
  const std::string value = fmt::format("r{}", o);
  const ElementType t = p.output_type[o];
  if (!vector) return "      " + store_from_float(t, o, "i", value + "[j]") + "\n";
  std::string code;
  for (int part = 0; part < vectors_of_8(t); ++part) {
    std::string words[4];
    for (int w = 0; w < 4; ++w) {
      if (t == ElementType::kFloat32) {
        words[w] = fmt::format("__float_as_uint({}[{}])", value, part * 4 + w);
      } else {
        const char* to = t == ElementType::kFloat16 ? "mc_to_f16" : "mc_to_bf16";
        words[w] = fmt::format("(mc_u32){0}({1}[{2}]) | ((mc_u32){0}({1}[{3}]) << 16)", to, value, 2 * w, 2 * w + 1);
      }
    }
    code += fmt::format("    {{ mc_v4 q; q.x = {}; q.y = {}; q.z = {}; q.w = {};\n      ((mc_v4*)args.output[{}])[w * {} + {}] = q; }}\n",
                        words[0], words[1], words[2], words[3], o, vectors_of_8(t), part);
  }
  return code;
}

}  // namespace

const char* generated_preamble() { return kPreamble; }
const char* elementwise_expression(ElementwiseOp op) { return expression_text(op); }

std::string float_literal(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("__int_as_float(0x{:08x})", bits);
}

std::string strided_index_offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, const char* index) {
  std::string sum;
  int64_t inner = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (strides[d] != 0 && dims[d] != 1) {
      std::string at = inner == 1 ? std::string(index) : fmt::format("({} / {})", index, inner);
      if (d > 0) at = fmt::format("({} % {})", at, dims[d]);
      sum += fmt::format("{}{} * {}", sum.empty() ? "" : " + ", at, strides[d]);
    }
    inner *= dims[d];
  }
  return sum.empty() ? "0" : sum;
}

std::string elementwise_step_code(int s, ElementwiseOp op, const int8_t* operands, float alpha, float beta,
                                  const std::string& indent) {
  std::string operand[3] = {"0.f", "0.f", "0.f"};
  for (int k = 0; k < elementwise_arity(op); ++k)
    operand[k] = operands[k] >= 0 ? fmt::format("x{}", operands[k]) : fmt::format("s{}", -operands[k] - 1);
  return fmt::format(
      "{0}float s{1};\n{0}{{ const float a = {2}, b = {3}, c = {4}, alpha = {5}, beta = {6};\n"
      "{0}  (void)a; (void)b; (void)c; (void)alpha; (void)beta; s{1} = (float)({7}); }}\n",
      indent, s, operand[0], operand[1], operand[2], float_literal(alpha), float_literal(beta), expression_text(op));
}

std::string load_as_float(ElementType type, int k, const std::string& offset) {
  switch (type) {
    case ElementType::kFloat16: return fmt::format("mc_f16(((const mc_u16*)args.input[{}])[{}])", k, offset);
    case ElementType::kBFloat16: return fmt::format("mc_bf16(((const mc_u16*)args.input[{}])[{}])", k, offset);
    default: return fmt::format("((const float*)args.input[{}])[{}]", k, offset);
  }
}

std::string store_from_float(ElementType type, int o, const std::string& offset, const std::string& value) {
  switch (type) {
    case ElementType::kFloat16: return fmt::format("((mc_u16*)args.output[{}])[{}] = mc_to_f16({});", o, offset, value);
    case ElementType::kBFloat16: return fmt::format("((mc_u16*)args.output[{}])[{}] = mc_to_bf16({});", o, offset, value);
    default: return fmt::format("((float*)args.output[{}])[{}] = {};", o, offset, value);
  }
}

ChainArgs chain_args(const ChainProgram& p) {
  ChainArgs args;
  for (int k = 0; k < p.inputs; ++k) args.input[k] = p.input[k];
  for (int o = 0; o < p.outputs; ++o) args.output[o] = p.output[o];
  return args;
}

ChainSource chain_source(const ChainProgram& p) {
  const Iteration it = merge_dims(p);
  std::vector<Access> modes;
  bool vector = it.elements % 8 == 0;
  for (int k = 0; k < p.inputs; ++k) {
    modes.push_back(access(it, k));
    if (modes.back() == Access::kContiguous) vector = vector && aligned(p.input[k]);
  }
  for (int o = 0; o < p.outputs; ++o) vector = vector && aligned(p.output[o]);
  ChainSource out;
  out.vector = vector ? 8 : 1;
  out.work_items = it.elements / out.vector;
  const char* index = it.elements < (int64_t(1) << 31) ? "unsigned" : "long long";
  std::string body;
  for (int k = 0; k < p.inputs; ++k) {
    if (modes[k] == Access::kScalar) body += fmt::format("  const float c{} = {};\n", k, load(p, k, "0"));
  }
  body += fmt::format("  for ({0} w = blockIdx.x * ({0}){1} + threadIdx.x; w < ({0}){2}; w += ({0})gridDim.x * {1}) {{\n",
                      index, kChainThreads, out.work_items);
  for (int k = 0; k < p.inputs; ++k)
    if (vector && modes[k] == Access::kContiguous)
      for (int part = 0; part < vectors_of_8(p.input_type[k]); ++part)
        body += fmt::format("    const mc_v4 q{0}_{1} = ((const mc_v4*)args.input[{0}])[w * {2} + {1}];\n", k, part,
                            vectors_of_8(p.input_type[k]));
  for (int o = 0; o < p.outputs; ++o) body += fmt::format("    float r{}[{}];\n", o, out.vector);
  body += fmt::format("#pragma unroll\n    for (int j = 0; j < {0}; ++j) {{\n      const {1} i = w * {0} + j;\n      (void)i;\n",
                      out.vector, index);
  for (int k = 0; k < p.inputs; ++k) {
    std::string value;
    switch (modes[k]) {
      case Access::kScalar: value = fmt::format("c{}", k); break;
      case Access::kContiguous: value = vector ? vector_element(p.input_type[k], fmt::format("q{}", k)) : load(p, k, "i"); break;
      case Access::kStrided: value = load(p, k, strided_offset(it, k)); break;
    }
    body += fmt::format("      const float x{} = {};\n", k, value);
  }
  for (int s = 0; s < p.steps; ++s) body += step_code(p, s);
  for (int o = 0; o < p.outputs; ++o) body += fmt::format("      r{}[j] = s{};\n", o, p.output_step[o]);
  if (!vector)
    for (int o = 0; o < p.outputs; ++o) body += store_code(p, o, false);
  body += "    }\n";
  if (vector)
    for (int o = 0; o < p.outputs; ++o) body += store_code(p, o, true);
  body += "  }\n";
  out.text = fmt::format(
      "{}struct ChainArgs {{ const void* input[{}]; void* output[{}]; }};\n"
      "extern \"C\" __global__ void __launch_bounds__({}) {}(const ChainArgs args) {{\n"
      "  using namespace device_math;\n  typedef float F;\n{}}}\n",
      kPreamble, kChainMaxInputs, kChainMaxOutputs, kChainThreads, kChainKernelName, body);
  return out;
}

}  // namespace modelcost::cuda
