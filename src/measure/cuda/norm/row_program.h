// A row program: reductions over the trailing axes of one shape with the elementwise work before,
// between and after them (a spelled-out LayerNorm or RMSNorm, an L2 normalisation), generated as
// one kernel. A warp (or, for long rows, a block) takes a row: each reduction is one pass over
// the row that recomputes its elementwise prologue from the inputs (the row stays in L1/L2), the
// last pass computes and stores the full-size results. Values of a row (the reductions and work
// on them) are computed once per row. The source builds on the pointwise chain's
// (chain_source.h), with the same expressions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelcost/runtime_limits.h"
#include "ops/elementwise_ops.h"
#include "ops/measured_kinds.h"
#include "pointwise/chain_source.h"

namespace modelcost::cuda {

constexpr const char* kRowProgramKernelName = "modelcost_row_program";
constexpr int kRowProgramThreads = 128;

struct RowInput {
  const void* data = nullptr;
  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> row_strides;  // over RowProgram::row_dims
  int64_t column_stride = 0;         // 0: one value per row (a row's value, or a scalar)
};

// Operand k of a step: >= 0 input k, < 0 the value of step (-k - 1).
struct RowStep {
  bool reduction = false;
  ElementwiseOp op = ElementwiseOp::kIdentity;  // an elementwise step's op
  ReduceOp fold = ReduceOp::kSum;               // a reduction's
  int8_t operand[3] = {0, 0, 0};
  float alpha = 0, beta = 0;
};

struct RowOutput {
  void* data = nullptr;
  ElementType type = ElementType::kFloat32;
  int step = 0;
  bool per_row = false;  // one value per row (a reduced tensor), else one per element
};

struct RowProgram {
  std::vector<int64_t> row_dims;  // the leading dims; their product is the number of rows
  int64_t row_length = 0;         // the trailing dims' product: the elements a reduction folds
  std::vector<RowInput> inputs;
  std::vector<RowStep> steps;
  std::vector<RowOutput> outputs;
  int64_t rows() const;
};

struct RowProgramSource {
  std::string text;
  int threads_per_row = 32;  // a warp, or the whole block for long rows
  int64_t blocks = 0;
};

// Throws Error where the program is malformed (an operand out of range, more inputs or outputs
// than the kernel's argument holds).
RowProgramSource row_program_source(const RowProgram& program, int multiprocessors);
// The generated kernel's one parameter, as chain_args makes it.
ChainArgs row_program_args(const RowProgram& program);

}  // namespace modelcost::cuda
