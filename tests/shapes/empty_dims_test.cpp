// --dim NAME=0 (an empty KV cache before the first step), and the usage error that names the
// dims to set when the graph does not hold together with them all at 1.
#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// Attention over a KV cache: keys = Concat(past, new) are [1, past+seq, 8]; the values input
// is [1, total, 8], so total must equal past + seq.
ModelBuilder cached_attention() {
  ModelBuilder b;
  b.input("q", kFloat, std::vector<std::string>{"1", "seq", "8"});
  b.input("past_k", kFloat, std::vector<std::string>{"1", "past_seq", "8"});
  b.input("new_k", kFloat, std::vector<std::string>{"1", "seq", "8"});
  b.input("v", kFloat, std::vector<std::string>{"1", "total_seq", "8"});
  auto& concat = b.node("Concat", {"past_k", "new_k"}, {"k"});
  set_attr(concat, "axis", int64_t{1});
  auto& t = b.node("Transpose", {"k"}, {"kt"});
  set_attr(t, "perm", std::vector<int64_t>{0, 2, 1});
  b.node("MatMul", {"q", "kt"}, {"scores"});
  b.node("MatMul", {"scores", "v"}, {"out"});
  b.output("out");
  return b;
}

}  // namespace

TEST(EmptyDims, FirstStepOfAKvCacheHasAnEmptyPast) {
  ShapeOptions options;
  options.dims = {{"past_seq", 0}, {"seq", 5}, {"total_seq", 5}};
  auto run = analyse(cached_attention(), options);
  EXPECT_EQ(run->shape("past_k"), (Shape{1, 0, 8}));
  EXPECT_EQ(run->shape("k"), (Shape{1, 5, 8}));
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 2 * 5 * 5 * 8);
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
}

TEST(EmptyDims, InconsistentDefaultsNameTheDimsToSet) {
  try {
    analyse(cached_attention());
    ADD_FAILURE() << "accepted with every dim at 1";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), kExitUsage) << message;
    EXPECT_NE(message.find("past_seq, seq, total_seq"), std::string::npos) << message;
    EXPECT_NE(message.find("--dim"), std::string::npos) << message;
  }
}

}  // namespace modelcost::testing
