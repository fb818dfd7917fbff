// Recurrent rules of the nn family: RNN, GRU, LSTM.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {

TEST(NnRnn, BidirectionalLstmAllOutputs) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{5, 2, 10});  // seq 5, batch 2, input 10
  b.weight("w", kFloat, {2, 80, 10}).weight("r", kFloat, {2, 80, 20}).weight("bias", kFloat, {2, 160});
  auto& n = b.node("LSTM", {"x", "w", "r", "bias"}, {"y", "y_h", "y_c"});
  set_attr(n, "hidden_size", int64_t{20});
  set_attr(n, "direction", std::string("bidirectional"));
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{5, 2, 2, 20}));
  EXPECT_EQ(run->shape("y_h"), (Shape{2, 2, 20}));
  EXPECT_EQ(run->shape("y_c"), (Shape{2, 2, 20}));
  // 400 hidden values (2 directions x 5 steps x 2 rows x 20), each 4 gates x (10 + 20) MACs.
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 400 * 4 * 30);
  // 9 elementwise/activation flops per hidden value + 2 bias adds per gate value.
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 48000 + 400 * (9 + 8));
}

TEST(NnRnn, LstmPeepholesAndHiddenSizeFromR) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{5, 2, 10});
  b.weight("w", kFloat, {1, 80, 10}).weight("r", kFloat, {1, 80, 20}).weight("p", kFloat, {1, 60});
  b.node("LSTM", {"x", "w", "r", "", "", "", "", "p"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{5, 1, 2, 20}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 200 * 4 * 30);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 24000 + 200 * (9 + 6));
}

TEST(NnRnn, BatchMajorGru) {
  ModelBuilder b(14);
  b.input("x", kFloat, Shape{2, 5, 10});  // layout 1: batch 2, seq 5
  b.weight("w", kFloat, {1, 60, 10}).weight("r", kFloat, {1, 60, 20});
  auto& n = b.node("GRU", {"x", "w", "r"}, {"y", "y_h"});
  set_attr(n, "hidden_size", int64_t{20});
  set_attr(n, "layout", int64_t{1});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{2, 5, 1, 20}));
  EXPECT_EQ(run->shape("y_h"), (Shape{2, 1, 20}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 200 * 3 * 30);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 18000 + 200 * 8);
}

TEST(NnRnn, SimpleRnnWithBias) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{3, 1, 4});
  b.weight("w", kFloat, {1, 8, 4}).weight("r", kFloat, {1, 8, 8}).weight("bias", kFloat, {1, 16});
  set_attr(b.node("RNN", {"x", "w", "r", "bias"}, {"y", "y_h"}), "hidden_size", int64_t{8});
  b.output("y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{3, 1, 1, 8}));
  EXPECT_EQ(run->shape("y_h"), (Shape{1, 1, 8}));
  EXPECT_DOUBLE_EQ(run->cost("y").macs, 24 * 12);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 2 * 288 + 24 * 3);  // tanh + 2 bias adds
}

TEST(NnRnn, RejectsWeightOfWrongShape) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{5, 2, 10});
  b.weight("w", kFloat, {1, 60, 10}).weight("r", kFloat, {1, 80, 20});
  b.node("LSTM", {"x", "w", "r"}, {"bad_lstm"});
  b.output("bad_lstm");
  expect_node_error(b, "bad_lstm", "W [1,60,10] must be [1,80,10]");
}

TEST(NnRnn, RejectsUnknownDirection) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{5, 2, 10});
  b.weight("w", kFloat, {1, 60, 10}).weight("r", kFloat, {1, 60, 20});
  set_attr(b.node("GRU", {"x", "w", "r"}, {"bad_gru"}), "direction", std::string("sideways"));
  b.output("bad_gru");
  expect_node_error(b, "bad_gru", "direction must be");
}

}  // namespace modelcost::testing
