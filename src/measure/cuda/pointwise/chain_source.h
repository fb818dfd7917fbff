// A pointwise chain (fused_kernels.h's ChainProgram) as CUDA source for run-time compilation
// (runtime_compiler.h): the steps become straight-line code with each op's expression taken from
// elementwise_ops.h, so every value stays in a register; sizes and strides are constants (a
// broadcast index is a division by a constant), dims that iterate alike are merged, and where
// the contiguous operands allow it each thread moves 16-byte vectors of 8 elements.
#pragma once
#include <string>
#include <vector>

#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {

constexpr const char* kChainKernelName = "modelcost_chain";
constexpr int kChainThreads = 256;

// The generated kernel's one parameter: the program's inputs and outputs, in its order.
struct ChainArgs {
  const void* input[kChainMaxInputs] = {};
  void* output[kChainMaxOutputs] = {};
};

struct ChainSource {
  std::string text;        // the kernel's source; equal sources compile to the same kernel
  int64_t work_items = 0;  // one per thread per grid-stride step
  int vector = 1;          // elements per work item: 8, or 1 where an operand is not aligned
};

ChainSource chain_source(const ChainProgram& program);

// Pieces the generated kernels share (the row kernel's source, row_program.h, is built of them):
// device math helpers and fp16/bf16 conversions, an op's expression over a, b, c, alpha and beta,
// a float as an exact literal, and input k read (output o written) at an offset, as float, from a
// kernel whose one parameter `args` holds `input` and `output` arrays.
const char* generated_preamble();
const char* elementwise_expression(ElementwiseOp op);
std::string float_literal(float v);
std::string load_as_float(ElementType type, int k, const std::string& offset);
// The element offset of flat index `index` (an expression) through `strides` over `dims`, by
// constant divisions; broadcast dims cost nothing.
std::string strided_index_offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, const char* index);
// Step s's value as `float s<s>`, from operands named x<k> (input k, k >= 0) or s<j> (step j, as
// -j - 1), each op's expression from the elementwise list.
std::string elementwise_step_code(int s, ElementwiseOp op, const int8_t* operands, float alpha, float beta,
                                  const std::string& indent);
std::string store_from_float(ElementType type, int o, const std::string& offset, const std::string& value);
ChainArgs chain_args(const ChainProgram& program);

}  // namespace modelcost::cuda
