// A Slice or Split whose outputs are contiguous runs of its input, and a Concat whose inputs their
// producers can write into place, run as no kernel: the in_place pattern (fusion/in_place.cpp).
#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

// Two convs of x [batch,16,8,8] into 32 channels each, concatenated along the channels, then a ReLU.
void add_two_convs_concatenated(ModelBuilder& b, int64_t batch) {
  b.input("x", kFloat, Shape{batch, 16, 8, 8});
  for (const char* name : {"a", "b"}) {
    b.weight(std::string("w_") + name, kFloat, Shape{32, 16, 1, 1});
    b.node("Conv", {"x", std::string("w_") + name}, {name});
  }
  set_attr(b.node("Concat", {"a", "b"}, {"ab"}), "axis", int64_t{1});
  b.node("Relu", {"ab"}, {"y"});
  b.output("y");
}

const int kTensorNotFound = -2;

int tensor_id(const Fused& f, const std::string& name) {
  const auto& tensors = f.run->analysis.graph->tensors;
  for (size_t id = 0; id < tensors.size(); ++id)
    if (tensors[id].name == name) return static_cast<int>(id);
  return kTensorNotFound;
}

TEST(InPlace, ConcatAtBatchOneIsWrittenInPlaceByItsProducers) {
  ModelBuilder b;
  add_two_convs_concatenated(b, 1);
  Fused f(b);
  const FusedGroup& concat = f.group("ab");
  EXPECT_EQ(concat.pattern, "in_place") << f.describe();
  EXPECT_EQ(concat.label, "concat in place");
  EXPECT_FALSE(concat.launches);
  EXPECT_EQ(concat.bytes(), 0);
  EXPECT_EQ(f.plan.kernels(), 3u) << f.describe();  // the two convs and the ReLU
  const std::vector<HeldWithin> held = held_within(concat, f.run->analysis);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].tensor, tensor_id(f, "a"));
  EXPECT_EQ(held[0].within, tensor_id(f, "ab"));
  EXPECT_EQ(held[0].element_offset, 0);
  EXPECT_EQ(held[1].tensor, tensor_id(f, "b"));
  EXPECT_EQ(held[1].element_offset, 32 * 8 * 8);
  EXPECT_TRUE(held_within(f.group("y"), f.run->analysis).empty());  // any other group holds nothing
}

TEST(InPlace, ConcatAlongChannelsOfABatchIsCopied) {
  ModelBuilder b;
  add_two_convs_concatenated(b, 2);  // each image's channels are one run: the inputs interleave
  Fused f(b);
  EXPECT_NE(f.pattern_of("ab"), "in_place") << f.describe();
  EXPECT_EQ(f.plan.kernels(), 4u) << f.describe();
}

TEST(InPlace, ASliceOfWholeTokensIsAView) {
  for (int64_t width : {384, 64}) {
    ModelBuilder b;
    b.input("x", kFloat, Shape{1, 197, width});
    b.ints("starts", {1}).ints("ends", {197}).ints("axes", {1});
    b.node("Slice", {"x", "starts", "ends", "axes"}, {"tokens"});
    b.node("Relu", {"tokens"}, {"y"});
    b.output("y");
    Fused f(b);
    if (width == 384) {  // one token in: 384 elements, an aligned offset
      EXPECT_EQ(f.pattern_of("tokens"), "in_place") << f.describe();
      const std::vector<HeldWithin> held = held_within(f.group("tokens"), f.run->analysis);
      ASSERT_EQ(held.size(), 1u);
      EXPECT_EQ(held[0].within, tensor_id(f, "x"));
      EXPECT_EQ(held[0].element_offset, 384);
    } else {  // 64 elements in: a kernel reading it would lose its buffer's alignment
      EXPECT_NE(f.pattern_of("tokens"), "in_place") << f.describe();
    }
  }
}

TEST(InPlace, ASplitAlongChannelsAtBatchOneIsViews) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 64, 8, 8});
  set_attr(b.node("Split", {"x"}, {"lo", "hi"}), "axis", int64_t{1});
  b.node("Relu", {"lo"}, {"y0"});
  b.node("Sigmoid", {"hi"}, {"y1"});
  b.output("y0").output("y1");
  Fused f(b);
  EXPECT_EQ(f.pattern_of("lo"), "in_place") << f.describe();
  const std::vector<HeldWithin> held = held_within(f.group("lo"), f.run->analysis);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[1].tensor, tensor_id(f, "hi"));
  EXPECT_EQ(held[1].element_offset, 32 * 8 * 8);
}

TEST(InPlace, AConcatOfViewsOrOfOneTensorTwiceIsCopied) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 64, 8, 8});
  b.weight("w", kFloat, Shape{32, 64, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  set_attr(b.node("Split", {"x"}, {"lo", "hi"}), "axis", int64_t{1});
  set_attr(b.node("Concat", {"hi", "lo"}, {"swapped"}), "axis", int64_t{1});  // views: their bytes are x's
  set_attr(b.node("Concat", {"c", "c"}, {"twice"}), "axis", int64_t{1});      // one buffer, two places
  set_attr(b.node("Concat", {"x", "c"}, {"with_input"}), "axis", int64_t{1});  // the graph input is no kernel's
  b.output("swapped").output("twice").output("with_input");
  Fused f(b);
  EXPECT_EQ(f.pattern_of("lo"), "in_place") << f.describe();
  for (const char* copied : {"swapped", "twice", "with_input"}) EXPECT_NE(f.pattern_of(copied), "in_place") << copied;
}

TEST(InPlace, SplitViewsOfAPlacedConcatAndAConcatOfChainResults) {
  ModelBuilder b = convs_concat_split_concat();
  Fused f(b);
  for (const char* held : {"ab", "lo", "y"}) EXPECT_EQ(f.pattern_of(held), "in_place") << held << "\n" << f.describe();
  EXPECT_EQ(f.plan.kernels(), 4u) << f.describe();  // two convs, two chains
}

TEST(InPlace, ATensorIsPlacedInOneConcatOnly) {
  ModelBuilder b;
  add_two_convs_concatenated(b, 1);
  set_attr(b.node("Concat", {"b", "a"}, {"ba"}), "axis", int64_t{1});
  b.output("ba");
  Fused f(b);
  EXPECT_EQ(f.pattern_of("ab"), "in_place") << f.describe();
  EXPECT_NE(f.pattern_of("ba"), "in_place") << f.describe();
}

}  // namespace
}  // namespace modelcost::testing
