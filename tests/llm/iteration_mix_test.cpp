// The text form of a serving iteration (src/llm/iteration_mix.cpp): PxCHUNK@PAST+D@CONTEXT.
#include <gtest/gtest.h>

#include <string>

#include "modelcost/errors.h"
#include "modelcost/llm.h"

namespace modelcost::testing {
namespace {

TEST(IterationMix, ParsesChunksDecodesOrBoth) {
  const IterationMix both = parse_iteration_mix("1x512@1024+32@2048");
  EXPECT_EQ(both.prefills, 1);
  EXPECT_EQ(both.chunk, 512);
  EXPECT_EQ(both.past, 1024);
  EXPECT_EQ(both.decodes, 32);
  EXPECT_EQ(both.context, 2048);
  EXPECT_EQ(both.label(), "1x512@1024+32@2048");
  EXPECT_EQ(parse_iteration_mix("3x128@0").label(), "3x128@0");
  EXPECT_EQ(parse_iteration_mix("64@4096").label(), "64@4096");
  for (const char* bad : {"", "+", "1x512@0+", "+32@10", "1x@0", "0x5@0", "2x0@0", "0@5", "7@0", "1x5@0+1x5@0", "a@b",
                          "99999999999999999x1@0", "1x512@-3"}) {
    try {
      parse_iteration_mix(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kExitUsage) << bad;
      EXPECT_NE(std::string(e.what()).find("--iteration"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace modelcost::testing
