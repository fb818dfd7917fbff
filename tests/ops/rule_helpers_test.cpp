// The shared building blocks of the op rules (src/ops/rule_helpers.*), driven directly on a
// one-node graph: broadcasting, the common shape and cost rules, and folding of small tensors.
#include "ops/rule_helpers.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <memory>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

// One node over tensors set up by hand; context() is what a rule sees.
class OneNode {
 public:
  explicit OneNode(const std::string& op_type, int opset = 17) {
    proto_.set_op_type(op_type);
    proto_.set_name("n");
    node_.proto = &proto_;
    node_.name = "n";
    node_.op_type = op_type;
    node_.opset = opset;
  }
  OneNode& input(int32_t dtype, Shape shape, std::shared_ptr<const TensorValue> value = nullptr) {
    node_.inputs.push_back(add_tensor(dtype, std::move(shape), true, std::move(value)));
    return *this;
  }
  OneNode& ints(std::vector<int64_t> values, Shape shape) {
    return input(kInt64, std::move(shape), std::make_shared<const TensorValue>(make_int_value(std::move(values))));
  }
  OneNode& floats(std::vector<double> values, Shape shape) {
    return input(kFloat, std::move(shape), std::make_shared<const TensorValue>(make_float_value(std::move(values))));
  }
  OneNode& outputs(size_t n) {
    for (size_t i = 0; i < n; ++i) node_.outputs.push_back(add_tensor(0, {}, false, nullptr));
    return *this;
  }
  OpContext context() { return OpContext(graph_, node_, diagnostics_); }
  const TensorInfo& out(size_t i) const { return graph_.tensors[node_.outputs[i]]; }
  std::vector<int64_t> out_ints(size_t i) const { return out(i).value ? out(i).value->ints : std::vector<int64_t>{}; }

 private:
  int add_tensor(int32_t dtype, Shape shape, bool shaped, std::shared_ptr<const TensorValue> value) {
    TensorInfo t;
    t.name = "t" + std::to_string(graph_.tensors.size());
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.has_shape = shaped;
    t.value = std::move(value);
    graph_.tensors.push_back(std::move(t));
    return static_cast<int>(graph_.tensors.size()) - 1;
  }

  onnx::NodeProto proto_;
  Graph graph_;
  Node node_;
  Diagnostics diagnostics_;
};

}  // namespace

TEST(RuleHelpersBroadcast, NumpyRules) {
  OneNode n("Add");
  const OpContext c = n.context();
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}, c), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}, c), (Shape{5}));
  EXPECT_EQ(broadcast_shapes({0, 3}, {1, 3}, c), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shapes({1}, {0}, c), (Shape{0}));
  EXPECT_EQ(broadcast_shapes({}, {}, c), (Shape{}));
}

TEST(RuleHelpersBroadcast, MismatchIsANodeError) {
  OneNode n("Add");
  const OpContext c = n.context();
  try {
    broadcast_shapes({2, 3}, {4}, c);
    ADD_FAILURE() << "broadcast [2,3] with [4]";
  } catch (const NodeError& e) {
    EXPECT_STREQ(e.what(), "node 'n' (Add): shapes [2,3] and [4] do not broadcast");
    EXPECT_EQ(e.code(), kExitInvalidModel);
  }
}

TEST(RuleHelpersInfer, UnaryBroadcastBoolAndPassthrough) {
  OneNode unary("Relu");
  unary.input(kFloat, {2, 3}).outputs(1);
  OpContext cu = unary.context();
  infer_unary(cu);
  EXPECT_EQ(unary.out(0).shape, (Shape{2, 3}));
  EXPECT_EQ(unary.out(0).dtype, kFloat);
  EXPECT_TRUE(unary.out(0).has_shape);

  OneNode sum("Sum");
  sum.input(kFloat, {2, 1}).input(kFloat, {3}).input(kFloat, {1, 1}).outputs(1);
  OpContext cs = sum.context();
  infer_broadcast(cs);
  EXPECT_EQ(sum.out(0).shape, (Shape{2, 3}));

  OneNode less("Less");
  less.input(kInt64, {4}).input(kInt64, {}).outputs(1);
  OpContext cl = less.context();
  infer_broadcast_bool(cl);
  EXPECT_EQ(less.out(0).shape, (Shape{4}));
  EXPECT_EQ(less.out(0).dtype, kBool);

  OneNode pass("Identity");
  pass.ints({5, 6}, {2}).outputs(2);
  OpContext cp = pass.context();
  infer_passthrough(cp);
  EXPECT_EQ(pass.out(0).shape, (Shape{2}));
  EXPECT_EQ(pass.out(1).shape, (Shape{2}));
  EXPECT_EQ(pass.out(0).dtype, kInt64);
  EXPECT_EQ(pass.out_ints(0), (std::vector<int64_t>{5, 6}));
}

TEST(RuleHelpersInfer, OnnxSchemaFallback) {
  OneNode n("Add");
  n.input(kFloat, {2, 3}).input(kFloat, {3}).outputs(1);
  OpContext c = n.context();
  infer_with_onnx_schema(c);
  EXPECT_TRUE(n.out(0).has_shape);
  EXPECT_EQ(n.out(0).shape, (Shape{2, 3}));
  EXPECT_EQ(n.out(0).dtype, kFloat);

  OneNode unknown("NoSuchOp");
  unknown.input(kFloat, {2}).outputs(1);
  OpContext cu = unknown.context();
  infer_with_onnx_schema(cu);  // no schema: leaves the output alone
  EXPECT_FALSE(unknown.out(0).has_shape);
}

TEST(RuleHelpersCost, FloatWorkOnlyAndPerElementCounts) {
  OneNode f("Sigmoid");
  f.input(kFloat, {2, 3, 4}).outputs(1);
  OpContext cf = f.context();
  infer_unary(cf);
  EXPECT_TRUE(computes_in_float(cf));
  EXPECT_DOUBLE_EQ(cost_per_output<3>(cf).flops, 72);
  EXPECT_DOUBLE_EQ(cost_per_input<2>(cf).flops, 48);
  EXPECT_DOUBLE_EQ(cost_per_output<3>(cf).macs, 0);

  OneNode i("Add");
  i.input(kInt64, {6}).input(kInt64, {6}).outputs(1);
  OpContext ci = i.context();
  infer_broadcast(ci);
  EXPECT_FALSE(computes_in_float(ci));
  EXPECT_DOUBLE_EQ(cost_per_output<1>(ci).flops, 0);

  OneNode reduce("ReduceSum");  // per input: 24 elements in, 1 out
  reduce.input(kFloat, {2, 3, 4}).outputs(1);
  OpContext cr = reduce.context();
  cr.set_output(0, kFloat, {1, 1, 1});
  EXPECT_DOUBLE_EQ(cost_per_input<1>(cr).flops, 24);
  EXPECT_DOUBLE_EQ(cost_per_output<1>(cr).flops, 1);

  OneNode gen("RandomNormal");  // no inputs: the output's dtype decides
  gen.outputs(1);
  OpContext cg = gen.context();
  cg.set_output(0, kFloat, {3});
  EXPECT_TRUE(computes_in_float(cg));

  const OpCost moved = cost_data_movement(cf);
  EXPECT_DOUBLE_EQ(moved.flops, 0);
  EXPECT_FALSE(moved.moves_no_data);
  EXPECT_TRUE(cost_reinterpret(cf).moves_no_data);
  EXPECT_DOUBLE_EQ(cost_reinterpret(cf).flops, 0);
}

TEST(RuleHelpersFold, BinaryWithBroadcastIntAndFloat) {
  OneNode i("Add");
  i.ints({1, 2}, {2, 1}).ints({10, 20, 30}, {3}).outputs(1);
  OpContext ci = i.context();
  infer_broadcast(ci);
  fold_binary(ci, nullptr, [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(i.out(0).shape, (Shape{2, 3}));
  EXPECT_EQ(i.out_ints(0), (std::vector<int64_t>{11, 21, 31, 12, 22, 32}));

  OneNode f("Mul");
  f.floats({1.5, 2.0}, {2}).floats({2.0}, {}).outputs(1);
  OpContext cf = f.context();
  infer_broadcast(cf);
  fold_binary(cf, [](double a, double b) { return a * b; }, nullptr);
  ASSERT_TRUE(f.out(0).value);
  EXPECT_TRUE(f.out(0).value->is_float);
  EXPECT_EQ(f.out(0).value->floats, (std::vector<double>{3.0, 4.0}));
}

TEST(RuleHelpersFold, UnaryAndCompare) {
  OneNode u("Neg");
  u.ints({3, -4}, {2}).outputs(1);
  OpContext cu = u.context();
  infer_unary(cu);
  fold_unary(cu, nullptr, [](int64_t x) { return -x; });
  EXPECT_EQ(u.out_ints(0), (std::vector<int64_t>{-3, 4}));

  OneNode t("Floor");  // float function applied to an integer output truncates back
  t.floats({2.5, -1.5}, {2}).outputs(1);
  OpContext ct = t.context();
  ct.set_output(0, kInt64, {2});
  fold_unary(ct, [](double x) { return x * 2; }, nullptr);
  EXPECT_EQ(t.out_ints(0), (std::vector<int64_t>{5, -3}));

  OneNode c("Greater");
  c.ints({1, 5, 3}, {3}).ints({3}, {}).outputs(1);
  OpContext cc = c.context();
  infer_broadcast_bool(cc);
  fold_compare(cc, [](double a, double b) { return a > b; });
  EXPECT_EQ(c.out_ints(0), (std::vector<int64_t>{0, 1, 0}));
}

TEST(RuleHelpersFold, NothingWithoutValuesOrForLargeOutputs) {
  OneNode missing("Add");
  missing.ints({1, 2}, {2}).input(kInt64, {2}).outputs(1);
  OpContext cm = missing.context();
  infer_broadcast(cm);
  fold_binary(cm, nullptr, [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(missing.out(0).value, nullptr);

  OneNode partial("Add");  // a value shorter than its shape is not trusted
  partial.ints({1}, {2}).ints({1, 2}, {2}).outputs(1);
  OpContext cp = partial.context();
  infer_broadcast(cp);
  fold_binary(cp, nullptr, [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(partial.out(0).value, nullptr);

  const int64_t big = static_cast<int64_t>(kMaxFoldedElements) + 1;
  OneNode large("Add");
  large.ints({1}, {1}).ints({2}, {1}).outputs(1);
  OpContext cl = large.context();
  cl.set_output(0, kInt64, {big});
  fold_binary(cl, nullptr, [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(large.out(0).value, nullptr);
}

TEST(RuleHelpersValues, StridesAndConversions) {
  EXPECT_EQ(strides_of({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(strides_of({5}), (std::vector<int64_t>{1}));
  EXPECT_TRUE(strides_of({}).empty());
  EXPECT_EQ(value_as_ints(make_float_value({2.9, -2.9, 0})), (std::vector<int64_t>{2, -2, 0}));
  EXPECT_EQ(value_as_ints(make_int_value({7, 8})), (std::vector<int64_t>{7, 8}));
  const TensorValue f = make_float_value({1.5});
  EXPECT_TRUE(f.is_float);
  EXPECT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f.as_double(0), 1.5);
  const TensorValue i = make_int_value({-3});
  EXPECT_FALSE(i.is_float);
  EXPECT_DOUBLE_EQ(i.as_double(0), -3);
}

}  // namespace modelcost
