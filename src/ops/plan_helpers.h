// Building blocks of the plan builders the op rules name (op_registry.h): reading a node into one
// of the measured kinds (measured_kinds.h). A builder returns UnsupportedPlan with its reason for
// a node it cannot run; it never fails the analysis.
#pragma once
#include <string>
#include <vector>

#include "ops/measured_kinds.h"
#include "ops/op_context.h"

namespace modelcost {

UnsupportedPlan unsupported(const std::string& why);
// A possibly negative axis against rank (unchecked: the shape rule has checked it).
int64_t normalize_axis(int64_t axis, size_t rank);
// Product of dims [begin, end) of a shape.
int64_t extent_product(const Shape& s, size_t begin, size_t end);
// Integer contents of input i known at analysis time ({} for an omitted input); *ok = false when
// a present input's contents are unknown.
std::vector<int64_t> known_ints(const OpContext& c, size_t i, bool* ok);
// The one value of input i, when it is known and has one element.
bool known_scalar(const OpContext& c, size_t i, double* out);
// Input 0 and every output are float tensors (axes, indices and shapes may be integers).
bool float_data(const OpContext& c);
// The [outer, n, inner] view of `shape` around axes [first, last].
RowView row_view(const Shape& shape, int64_t first, int64_t last);
// A copy plan of these copies, each with its contiguous dims merged.
CopyPlan copy_plan(std::vector<StridedCopy> copies);

// MatMul of A and B with numpy's batch broadcasting (MatMulParams, or Unsupported where both
// inputs broadcast batch dims).
OpPlan matmul_plan(Shape a, Shape b);

// Builders several families name.
OpPlan plan_elementwise(const OpContext& c);  // ops/defs/elementwise_plan.cpp: the ops of elementwise_ops.h
OpPlan plan_reinterpret(const OpContext& c);  // Reshape-like: nothing runs

}  // namespace modelcost
