#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {

TEST(GraphBuilder, SortsNodesListedOutOfOrder) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  b.node("Relu", {"y"}, {"z"});
  b.node("Relu", {"x"}, {"y"});
  b.output("z");
  auto run = analyse(b);
  ASSERT_EQ(run->model.graph.nodes.size(), 2u);
  EXPECT_EQ(run->model.graph.nodes[0].name, "y");
  EXPECT_EQ(run->model.graph.nodes[1].name, "z");
}

TEST(GraphBuilder, RejectsCycle) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2});
  b.node("Add", {"x", "b"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.output("b");
  try {
    analyse(b);
    FAIL() << "cycle accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
}

TEST(GraphBuilder, RejectsInputNothingProduces) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2});
  b.node("Add", {"x", "ghost"}, {"y"});
  b.output("y");
  try {
    analyse(b);
    FAIL() << "dangling input accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'ghost'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 'y'"), std::string::npos) << e.what();
  }
}

}  // namespace modelcost::testing
