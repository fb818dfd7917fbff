// Shared by the op_plan*.cpp files (one per family of operations): small helpers and the
// planner of each operation. Not a public interface.
#pragma once
#include <string>
#include <vector>

#include "measure/op_plan.h"

namespace modelcost::plan_detail {

int64_t product(const Shape& s, size_t begin, size_t end);
int64_t normalize_axis(int64_t axis, size_t rank);
UnsupportedPlan unsupported(const std::string& why);
// Integer contents of a tensor known at analysis time; *ok = false when a present tensor is unknown.
std::vector<int64_t> known_ints(const TensorSpec& t, bool* ok);
bool known_scalar(const TensorSpec& t, double* out);
// Input 0 and every output are float tensors (axes, indices and shapes may be integers).
bool float_data(const NodeSpec& s);
// The [outer, n, inner] view of `shape` around axes [first, last].
RowView row_view(const Shape& shape, int64_t first, int64_t last);

// op_plan.cpp: a planner (elementwise list, planner table or zero-cost set) exists for the op.
bool has_planner(const std::string& op_type);

// op_plan_elementwise.cpp
OpPlan plan_elementwise(const NodeSpec& s);  // any op type elementwise_ops.h lists (and Cast, Sum, ...)
bool is_elementwise(const std::string& op_type);
// op_plan_copies.cpp
OpPlan copy_plan(std::vector<StridedCopy> copies);
OpPlan plan_transpose(const NodeSpec& s);
OpPlan plan_slice(const NodeSpec& s);
OpPlan plan_concat(const NodeSpec& s);
OpPlan plan_split(const NodeSpec& s);
OpPlan plan_gather(const NodeSpec& s);
OpPlan plan_expand(const NodeSpec& s);
OpPlan plan_pad(const NodeSpec& s);
OpPlan plan_tile(const NodeSpec& s);
// op_plan_indexed.cpp
OpPlan plan_gather_elements(const NodeSpec& s);
OpPlan plan_scatter_elements(const NodeSpec& s);
OpPlan plan_gather_nd(const NodeSpec& s);
OpPlan plan_scatter_nd(const NodeSpec& s);
OpPlan plan_range(const NodeSpec& s);
// op_plan_rows.cpp
OpPlan plan_reduce(const NodeSpec& s);
OpPlan plan_arg_reduce(const NodeSpec& s);
OpPlan plan_global_pool(const NodeSpec& s);
OpPlan plan_softmax(const NodeSpec& s);
OpPlan plan_layer_norm(const NodeSpec& s);
OpPlan plan_batch_norm(const NodeSpec& s);
OpPlan plan_cumsum(const NodeSpec& s);
// op_plan_nn.cpp
OpPlan plan_conv(const NodeSpec& s);
OpPlan plan_pool(const NodeSpec& s);
OpPlan plan_matmul(const NodeSpec& s);
OpPlan plan_gemm(const NodeSpec& s);
OpPlan plan_resize(const NodeSpec& s);

}  // namespace modelcost::plan_detail
