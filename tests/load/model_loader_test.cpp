#include "load/model_loader.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

ExitCode load_error(const std::string& bytes, std::string* message = nullptr) {
  try {
    load_model_from_bytes(bytes, "m.onnx");
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return kExitOk;
}

ModelBuilder tiny() {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4});
  b.weight("w", kFloat, {4, 8});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  return b;
}

}  // namespace

TEST(ModelLoader, NeverReadsExternalWeights) {
  // The weight points at weights.bin, which does not exist: loading must not care.
  Model m = load_model_from_bytes(tiny().bytes(), "m.onnx");
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  const TensorInfo& w = m.graph.tensors[m.graph.find("w")];
  EXPECT_TRUE(w.is_initializer);
  EXPECT_EQ(w.shape, (Shape{4, 8}));
  EXPECT_EQ(w.value, nullptr);
}

TEST(ModelLoader, ReadsOpsetsAndProducer) {
  ModelBuilder b = tiny();
  b.opset("com.microsoft", 1);
  Model m = load_model_from_bytes(b.bytes(), "m.onnx");
  EXPECT_EQ(m.opsets.at(""), 17);
  EXPECT_EQ(m.opsets.at("com.microsoft"), 1);
  EXPECT_EQ(m.producer, "modelcost-tests");
  EXPECT_EQ(m.graph.nodes[0].opset, 17);
}

TEST(ModelLoader, RejectsEmptyGarbageAndTruncatedInput) {
  std::string message;
  EXPECT_EQ(load_error("", &message), kExitInvalidModel);
  EXPECT_NE(message.find("m.onnx"), std::string::npos);
  EXPECT_EQ(load_error("this is a text file, not a model\n"), kExitInvalidModel);
  const std::string bytes = tiny().bytes();
  EXPECT_EQ(load_error(bytes.substr(0, bytes.size() / 2)), kExitInvalidModel);
}

TEST(ModelLoader, LoadsOpsetNewerThanAnyKnown) {
  ModelBuilder b = tiny();
  b.opset("", 99);  // the shape stage warns about it; loading does not care
  EXPECT_EQ(load_error(b.bytes()), kExitOk);
}

TEST(ModelLoader, AcceptsEveryKnownOpset) {
  for (int opset : {7, 13, 17, 18, 21, 22, 23, 24}) {
    ModelBuilder b = tiny();
    b.opset("", opset);
    EXPECT_EQ(load_error(b.bytes()), kExitOk) << opset;
  }
}

TEST(ModelLoader, MissingFileAndDirectoryAreUnreadable) {
  try {
    load_model("/nonexistent/model.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnreadable);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos);
  }
  try {
    load_model("/tmp");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnreadable);
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos);
  }
}

TEST(ModelLoader, RejectsNegativeInitializerDims) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4});
  b.weight("w", kFloat, {4, -8});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  std::string message;
  EXPECT_EQ(load_error(b.bytes(), &message), kExitInvalidModel);
  EXPECT_NE(message.find("negative"), std::string::npos) << message;
}

}  // namespace modelcost::testing
