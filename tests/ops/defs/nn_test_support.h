// Shared by the nn and reduction op tests: asserting that a model is rejected with a message
// that names the node at fault.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {

// Analysing `b` must throw modelcost::Error naming node `node` and containing `fragment`.
inline void expect_node_error(const ModelBuilder& b, const std::string& node, const std::string& fragment) {
  try {
    analyse(b);
    ADD_FAILURE() << "model accepted; expected an error about node '" << node << "' (" << fragment << ")";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), kExitInvalidModel) << message;
    EXPECT_NE(message.find("node '" + node + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

}  // namespace modelcost::testing
