// Helpers for the fusion tests: a model analysed and fused, looked up by tensor name, and the
// spelled-out subgraphs exporters write.
#pragma once
#include <memory>
#include <string>

#include "modelcost/fusion.h"
#include "test_support.h"

namespace modelcost::testing {

struct Fused {
  std::unique_ptr<AnalysisRun> run;
  FusionPlan plan;

  explicit Fused(ModelBuilder& b, int opset = 0, FusionReach reach = FusionReach::kMeasuredRuntime) {
    if (opset) b.opset("", opset);
    run = analyse(b);
    plan = fuse(run->analysis, reach);
  }
  explicit Fused(std::unique_ptr<AnalysisRun> r, FusionReach reach = FusionReach::kMeasuredRuntime)
      : run(std::move(r)), plan(fuse(run->analysis, reach)) {}
  // Groups the runtime runs apart: the kernels of pattern matches it cannot run as one.
  size_t apart() const {
    size_t n = 0;
    for (const auto& g : plan.groups) n += g.apart_reason.empty() ? 0 : 1;
    return n;
  }

  // The node writing tensor `output`.
  size_t index(const std::string& output) const {
    const auto& nodes = run->analysis.nodes;
    for (size_t i = 0; i < nodes.size(); ++i)
      for (int id : nodes[i].node->outputs)
        if (id >= 0 && nodes[i].graph->tensors[id].name == output) return i;
    ADD_FAILURE() << "no node writes " << output;
    return 0;
  }
  int group_of(const std::string& output) const { return plan.group_of[index(output)]; }
  const FusedGroup& group(const std::string& output) const { return plan.groups.at(size_t(group_of(output))); }
  std::string label_of(const std::string& output) const { return group_of(output) < 0 ? "" : group(output).label; }
  std::string pattern_of(const std::string& output) const { return group_of(output) < 0 ? "" : group(output).pattern; }
  double bytes(const std::string& tensor) const {
    const TensorInfo& t = run->tensor(tensor);
    return element_count(t.shape) * dtype_size(t.dtype);
  }
  double total_flops() const { return run->analysis.totals.flops; }
  size_t count_label(const std::string& part) const {
    size_t n = 0;
    for (const auto& g : plan.groups) n += g.label.find(part) != std::string::npos ? 1 : 0;
    return n;
  }
  std::string describe() const {
    std::string out;
    for (const auto& g : plan.groups) {
      out += "#" + std::to_string(g.id) + " " + g.label + " [" + g.pattern + "]:";
      for (size_t m : g.members) out += " " + run->analysis.nodes[m].node->op_type;
      out += "\n";
    }
    return out;
  }
};

// x -> ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta -> y (opset 17 axes attribute).
inline void add_layer_norm(ModelBuilder& b, const std::string& x, const std::string& y, const Shape& shape) {
  b.input(x, kFloat, shape);
  b.weight(y + "_gamma", kFloat, {shape.back()});
  b.weight(y + "_beta", kFloat, {shape.back()});
  b.floats(y + "_two", {2.0f}, {});
  b.floats(y + "_eps", {1e-5f}, {});
  set_attr(b.node("ReduceMean", {x}, {y + "_mean"}), "axes", std::vector<int64_t>{-1});
  b.node("Sub", {x, y + "_mean"}, {y + "_d"});
  b.node("Pow", {y + "_d", y + "_two"}, {y + "_d2"});
  set_attr(b.node("ReduceMean", {y + "_d2"}, {y + "_var"}), "axes", std::vector<int64_t>{-1});
  b.node("Add", {y + "_var", y + "_eps"}, {y + "_ve"});
  b.node("Sqrt", {y + "_ve"}, {y + "_sd"});
  b.node("Div", {y + "_d", y + "_sd"}, {y + "_n"});
  b.node("Mul", {y + "_n", y + "_gamma"}, {y + "_g"});
  b.node("Add", {y + "_g", y + "_beta"}, {y});
}

// GELU as exporters write it: 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation.
inline void add_gelu(ModelBuilder& b, const std::string& x, const std::string& y, bool tanh_form) {
  b.floats(y + "_half", {0.5f}, {});
  b.floats(y + "_one", {1.0f}, {});
  if (!tanh_form) {
    b.floats(y + "_sqrt2", {1.4142135f}, {});
    b.node("Div", {x, y + "_sqrt2"}, {y + "_d"});
    b.node("Erf", {y + "_d"}, {y + "_e"});
    b.node("Add", {y + "_e", y + "_one"}, {y + "_a"});
    b.node("Mul", {x, y + "_a"}, {y + "_m"});
    b.node("Mul", {y + "_m", y + "_half"}, {y});
    return;
  }
  b.floats(y + "_three", {3.0f}, {});
  b.floats(y + "_c", {0.044715f}, {});
  b.floats(y + "_k", {0.7978846f}, {});
  b.node("Mul", {x, y + "_half"}, {y + "_h"});
  b.node("Pow", {x, y + "_three"}, {y + "_p"});
  b.node("Mul", {y + "_p", y + "_c"}, {y + "_pc"});
  b.node("Add", {x, y + "_pc"}, {y + "_s"});
  b.node("Mul", {y + "_s", y + "_k"}, {y + "_sk"});
  b.node("Tanh", {y + "_sk"}, {y + "_t"});
  b.node("Add", {y + "_t", y + "_one"}, {y + "_t1"});
  b.node("Mul", {y + "_h", y + "_t1"}, {y});
}

// x [rows, k] @ w [k, n] + bias -> GELU (erf or tanh form): a GEMM with the epilogue cuBLASLt may
// or may not take, fp32 as written.
inline ModelBuilder gemm_bias_gelu(int64_t rows, int64_t k, int64_t n, bool tanh_form = false) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{rows, k});
  b.weight("w", kFloat, {k, n});
  b.weight("bias", kFloat, {n});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Add", {"m", "bias"}, {"mb"});
  add_gelu(b, "mb", "y", tanh_form);
  b.output("y");
  return b;
}

// x [1,64,8,8] -> two convs -> Concat (in place) -> Split of views -> ReLU and Sigmoid -> Concat of
// the two chains' results (in place) -> y: every in-place form in one plan.
inline ModelBuilder convs_concat_split_concat() {
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{1, 64, 8, 8});
  b.weight("wa", kFloat, Shape{32, 64, 1, 1}).weight("wb", kFloat, Shape{32, 64, 3, 3});
  b.node("Conv", {"x", "wa"}, {"a"});
  set_attr(b.node("Conv", {"x", "wb"}, {"b"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(b.node("Concat", {"a", "b"}, {"ab"}), "axis", int64_t{1});
  set_attr(b.node("Split", {"ab"}, {"lo", "hi"}), "axis", int64_t{1});
  b.node("Relu", {"hi"}, {"y0"});
  b.node("Sigmoid", {"lo"}, {"y1"});
  set_attr(b.node("Concat", {"y0", "y1"}, {"y"}), "axis", int64_t{1});
  b.output("y");
  return b;
}

}  // namespace modelcost::testing
