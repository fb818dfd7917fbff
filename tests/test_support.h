// Helpers for tests: build small ONNX models in code and run the analysis pipeline on them.
#pragma once
#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/diagnostics.h"
#include "shapes/shape_engine.h"

namespace modelcost {
class OpRegistry;
}

namespace modelcost::testing {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;
constexpr int32_t kBool = onnx::TensorProto::BOOL;
constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kInt8 = onnx::TensorProto::INT8;

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17);
  ModelBuilder& opset(const std::string& domain, int version);
  // Dims given as strings: a number is a fixed dim, anything else a symbolic dim.
  ModelBuilder& input(const std::string& name, int32_t dtype, const std::vector<std::string>& dims);
  ModelBuilder& input(const std::string& name, int32_t dtype, const Shape& dims);
  // A weight whose data lives in an external file that does not exist (like the shared models).
  ModelBuilder& weight(const std::string& name, int32_t dtype, const Shape& dims);
  // Inline int64 initializer (shape constants).
  ModelBuilder& ints(const std::string& name, const std::vector<int64_t>& values, const Shape& dims = {-1});
  ModelBuilder& floats(const std::string& name, const std::vector<float>& values, const Shape& dims = {-1});
  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "");
  ModelBuilder& output(const std::string& name);
  ModelBuilder& value_info(const std::string& name, int32_t dtype, const Shape& dims);
  onnx::ModelProto& proto() { return proto_; }
  onnx::GraphProto& graph() { return *proto_.mutable_graph(); }
  std::string bytes() const;

 private:
  onnx::ModelProto proto_;
  int node_count_ = 0;
};

// y = a [2^31, 2^31] @ w [2^31, 2^31] in fp32: 2^93 MACs and 2^62 weight elements, counts past
// any 64-bit integer product.
ModelBuilder huge_matmul_model();

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value);
void set_attr(onnx::NodeProto& node, const std::string& name, float value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void set_attr(onnx::NodeProto& node, const std::string& name, const std::vector<float>& values);
void set_attr(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph);
void set_attr(onnx::NodeProto& node, const std::string& name, const onnx::TensorProto& tensor);

struct AnalysisRun {
  Model model;        // as loaded: analysis never changes it
  Analysis analysis;  // analyze(model, options); tensor() reads its shaped graph
  const NodeAnalysis& node(const std::string& name) const;     // fails the test when absent
  const TensorInfo& tensor(const std::string& name) const;
  const NodeCost& cost(const std::string& name) const { return node(name).cost; }
  Shape shape(const std::string& tensor_name) const { return tensor(tensor_name).shape; }
};

std::unique_ptr<AnalysisRun> analyse(const ModelBuilder& builder, const ShapeOptions& options = {});
// The same with another op table (user op rules).
std::unique_ptr<AnalysisRun> analyse_with(const ModelBuilder& builder, const OpRegistry& registry,
                                          const ShapeOptions& options = {});
std::unique_ptr<AnalysisRun> analyse_file(const std::string& path, const ShapeOptions& options = {});
std::string shared_model(const std::string& file);  // path under ../shared/models
bool shared_models_present();
// Runs the modelcost binary; returns exit status, stdout+stderr in *output.
int run_cli(const std::string& args, std::string* output);

}  // namespace modelcost::testing
