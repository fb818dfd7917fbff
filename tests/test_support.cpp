#include "test_support.h"
#include "ops/op_registry.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "load/model_loader.h"

namespace modelcost::testing {

#ifdef MODELCOST_CUDA_MODULE_PATH
// Test binaries are not next to the modelcost binary, where the CUDA module is looked for.
[[maybe_unused]] const bool cuda_module_named = setenv("MODELCOST_CUDA_MODULE", MODELCOST_CUDA_MODULE_PATH, 0) == 0;
#endif

ModelBuilder::ModelBuilder(int opset) {
  proto_.set_ir_version(8);
  proto_.set_producer_name("modelcost-tests");
  auto* op = proto_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  proto_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::opset(const std::string& domain, int version) {
  for (auto& op : *proto_.mutable_opset_import())
    if (op.domain() == domain) { op.set_version(version); return *this; }
  auto* op = proto_.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
  return *this;
}

ModelBuilder& ModelBuilder::input(const std::string& name, int32_t dtype, const std::vector<std::string>& dims) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    char* end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (!d.empty() && *end == '\0') dim->set_dim_value(v);
    else dim->set_dim_param(d);
  }
  return *this;
}

ModelBuilder& ModelBuilder::input(const std::string& name, int32_t dtype, const Shape& dims) {
  std::vector<std::string> s;
  for (int64_t d : dims) s.push_back(std::to_string(d));
  return input(name, dtype, s);
}

ModelBuilder& ModelBuilder::weight(const std::string& name, int32_t dtype, const Shape& dims) {
  auto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  return *this;
}

ModelBuilder& ModelBuilder::ints(const std::string& name, const std::vector<int64_t>& values, const Shape& dims) {
  auto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (dims == Shape{-1}) t->add_dims(static_cast<int64_t>(values.size()));
  else for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::floats(const std::string& name, const std::vector<float>& values, const Shape& dims) {
  auto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  if (dims == Shape{-1}) t->add_dims(static_cast<int64_t>(values.size()));
  else for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return *this;
}

onnx::NodeProto& ModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& domain) {
  auto* n = graph().add_node();
  n->set_op_type(op_type);
  n->set_domain(domain);
  n->set_name(outputs.empty() ? op_type + std::to_string(node_count_) : outputs[0]);
  ++node_count_;
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

ModelBuilder& ModelBuilder::output(const std::string& name) {
  graph().add_output()->set_name(name);
  return *this;
}

ModelBuilder& ModelBuilder::value_info(const std::string& name, int32_t dtype, const Shape& dims) {
  auto* vi = graph().add_value_info();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return *this;
}

ModelBuilder huge_matmul_model() {
  const int64_t n = int64_t{1} << 31;
  ModelBuilder b;
  b.input("a", kFloat, Shape{n, n});
  b.weight("w", kFloat, {n, n});
  b.node("MatMul", {"a", "w"}, {"y"});
  b.output("y");
  return b;
}

std::string ModelBuilder::bytes() const { return proto_.SerializeAsString(); }

namespace {
onnx::AttributeProto* new_attr(onnx::NodeProto& node, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) { new_attr(n, name, onnx::AttributeProto::INT)->set_i(v); }
void set_attr(onnx::NodeProto& n, const std::string& name, float v) { new_attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v); }
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  new_attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = new_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = new_attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  *new_attr(n, name, onnx::AttributeProto::GRAPH)->mutable_g() = g;
}
void set_attr(onnx::NodeProto& n, const std::string& name, const onnx::TensorProto& t) {
  *new_attr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}

const NodeAnalysis& AnalysisRun::node(const std::string& name) const {
  for (const auto& n : analysis.nodes)
    if (n.node->name == name) return n;
  ADD_FAILURE() << "no node named " << name;
  static NodeAnalysis none;
  return none;
}

const TensorInfo& AnalysisRun::tensor(const std::string& name) const {
  const int id = analysis.graph->find(name);
  if (id < 0) {
    ADD_FAILURE() << "no tensor named " << name;
    static TensorInfo none;
    return none;
  }
  return analysis.graph->tensors[id];
}

namespace {
std::unique_ptr<AnalysisRun> run_pipeline(Model model, const ShapeOptions& options,
                                          const OpRegistry& registry = OpRegistry::instance()) {
  auto run = std::make_unique<AnalysisRun>();
  run->model = std::move(model);
  ShapeOptions with_registry = options;
  with_registry.registry = &registry;
  run->analysis = analyze(run->model, with_registry);
  return run;
}
}  // namespace

std::unique_ptr<AnalysisRun> analyse_with(const ModelBuilder& builder, const OpRegistry& registry,
                                          const ShapeOptions& options) {
  return run_pipeline(load_model_from_bytes(builder.bytes(), "test-model"), options, registry);
}

std::unique_ptr<AnalysisRun> analyse(const ModelBuilder& builder, const ShapeOptions& options) {
  return run_pipeline(load_model_from_bytes(builder.bytes(), "test-model"), options);
}

std::unique_ptr<AnalysisRun> analyse_file(const std::string& path, const ShapeOptions& options) {
  return run_pipeline(load_model(path), options);
}

std::string shared_model(const std::string& file) { return std::string(MODELCOST_SHARED_MODELS) + "/" + file; }

bool shared_models_present() {
  struct stat st {};
  return stat(MODELCOST_SHARED_MODELS, &st) == 0;
}

int run_cli(const std::string& args, std::string* output) {
  const std::string cmd = std::string(MODELCOST_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  output->clear();
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) output->append(buf.data(), n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace modelcost::testing
