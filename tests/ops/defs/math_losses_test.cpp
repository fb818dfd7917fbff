#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {

TEST(MathLosses, NegativeLogLikelihoodLossReductions) {
  for (const std::string reduction : {"none", "mean"}) {
    ModelBuilder b(13);
    b.input("scores", kFloat, Shape{8, 10, 5});
    b.input("target", kInt64, Shape{8, 5});
    set_attr(b.node("NegativeLogLikelihoodLoss", {"scores", "target"}, {"loss"}), "reduction", reduction);
    b.output("loss");
    auto run = analyse(b);
    EXPECT_EQ(run->shape("loss"), reduction == "none" ? (Shape{8, 5}) : Shape{});
    EXPECT_EQ(run->cost("loss").flops, 2.0 * 8 * 5);
    EXPECT_EQ(run->cost("loss").macs, 0);
  }
}

TEST(MathLosses, SoftmaxCrossEntropyLossWithLogProbOutput) {
  ModelBuilder b(13);
  b.input("scores", kFloat, Shape{4, 7});
  b.input("labels", kInt64, Shape{4});
  set_attr(b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss", "log_prob"}), "reduction", std::string("sum"));
  b.output("loss");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("loss"), Shape{});
  EXPECT_EQ(run->shape("log_prob"), (Shape{4, 7}));
  EXPECT_EQ(run->cost("loss").flops, 6.0 * 28 + 2.0 * 4);
}

TEST(MathLosses, MismatchedTargetNamesTheNode) {
  ModelBuilder b(13);
  b.input("scores", kFloat, Shape{4, 7});
  b.input("labels", kInt64, Shape{5});
  b.node("SoftmaxCrossEntropyLoss", {"scores", "labels"}, {"loss"});
  b.output("loss");
  try {
    analyse(b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'loss'"), std::string::npos) << e.what();
  }
}

}  // namespace modelcost::testing
