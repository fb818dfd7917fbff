// Benchmark: time of the whole analysis (load -> shapes -> costs) on a generated 20,000-node
// transformer-like graph and on tinyllama_1b_op18.onnx, next to the time Python's
// `onnx.load(f, load_external_data=False)` takes on the same files.
// Usage: analysis_speed [--nodes N] [--repeat R] [--model FILE]... ; prints a table.
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "ops/op_registry.h"
#include "shapes/shape_engine.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void add_weight(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
}

void add_ints(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (auto v : values) t->add_int64_data(v);
}

onnx::NodeProto* node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out[0]);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// One encoder layer the way TorchScript exports it: shape chains, attention, MLP with erf-GELU.
std::string transformer_like(int target_nodes) {
  const int64_t d = 768, heads = 12, ff = 3072;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto& g = *m.mutable_graph();
  g.set_name("generated");
  auto* in = g.add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_param("seq");
  tt->mutable_shape()->add_dim()->set_dim_value(d);
  add_ints(g, "c0", {0});
  add_ints(g, "c1", {1});
  add_ints(g, "heads", {heads});
  add_ints(g, "hd", {d / heads});
  add_ints(g, "dmodel", {d});
  std::string x = "x";
  for (int l = 0; g.node_size() < target_nodes; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    for (auto w : {"ln1_s", "ln1_b", "ln2_s", "ln2_b"}) add_weight(g, p + w, {d});
    add_weight(g, p + "wqkv", {d, 3 * d});
    add_weight(g, p + "bqkv", {3 * d});
    add_weight(g, p + "wo", {d, d});
    add_weight(g, p + "w1", {d, ff});
    add_weight(g, p + "w2", {ff, d});
    node(g, "LayerNormalization", {x, p + "ln1_s", p + "ln1_b"}, {p + "ln1"});
    node(g, "MatMul", {p + "ln1", p + "wqkv"}, {p + "qkv0"});
    node(g, "Add", {p + "qkv0", p + "bqkv"}, {p + "qkv"});
    auto* split = node(g, "Split", {p + "qkv"}, {p + "q", p + "k", p + "v"});
    auto* axis = split->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(2);
    node(g, "Shape", {p + "q"}, {p + "shape"});
    node(g, "Gather", {p + "shape", "c0"}, {p + "b"});
    node(g, "Gather", {p + "shape", "c1"}, {p + "s"});
    node(g, "Concat", {p + "b", p + "s", "heads", "hd"}, {p + "target"})->add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("axis");
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(0);
      return a;
    }());
    for (const char* t : {"q", "k", "v"}) {
      node(g, "Reshape", {p + t, p + "target"}, {p + t + "r"});
      auto* tr = node(g, "Transpose", {p + t + "r"}, {p + t + "t"});
      auto* perm = tr->add_attribute();
      perm->set_name("perm");
      perm->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : (std::string(t) == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3})) perm->add_ints(v);
    }
    node(g, "MatMul", {p + "qt", p + "kt"}, {p + "scores"});
    node(g, "Softmax", {p + "scores"}, {p + "probs"});
    node(g, "MatMul", {p + "probs", p + "vt"}, {p + "ctx"});
    auto* tr = node(g, "Transpose", {p + "ctx"}, {p + "ctxt"});
    auto* perm = tr->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : {0, 2, 1, 3}) perm->add_ints(v);
    node(g, "Concat", {p + "b", p + "s", "dmodel"}, {p + "flat"})->add_attribute()->CopyFrom(split->attribute(0));
    g.mutable_node(g.node_size() - 1)->mutable_attribute(0)->set_i(0);
    node(g, "Reshape", {p + "ctxt", p + "flat"}, {p + "ctxr"});
    node(g, "MatMul", {p + "ctxr", p + "wo"}, {p + "attn"});
    node(g, "Add", {x, p + "attn"}, {p + "res1"});
    node(g, "LayerNormalization", {p + "res1", p + "ln2_s", p + "ln2_b"}, {p + "ln2"});
    node(g, "MatMul", {p + "ln2", p + "w1"}, {p + "h"});
    node(g, "Erf", {p + "h"}, {p + "erf"});
    node(g, "Mul", {p + "h", p + "erf"}, {p + "gelu"});
    node(g, "MatMul", {p + "gelu", p + "w2"}, {p + "mlp"});
    node(g, "Add", {p + "res1", p + "mlp"}, {p + "out"});
    x = p + "out";
  }
  g.add_output()->set_name(x);
  return m.SerializeAsString();
}

double analyse_seconds(const std::string& path) {
  const auto t0 = Clock::now();
  modelcost::Model model = modelcost::load_model(path);
  modelcost::AnalysisOptions options;
  options.dims = {{"batch", 1}, {"seq", 128}};
  const auto analysis = modelcost::analyze(model, options);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (analysis.totals.unshaped_nodes) std::fprintf(stderr, "warning: %zu unshaped nodes in %s\n", analysis.totals.unshaped_nodes, path.c_str());
  return s;
}

double command_seconds(const std::string& cmd) {
  const auto t0 = Clock::now();
  const int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return rc == 0 ? s : -1;
}

std::string python_with_onnx() {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(py) + " -c 'import onnx' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 20000, repeat = 5;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nodes" && i + 1 < argc) nodes = std::stoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else if (a == "--model" && i + 1 < argc) files.push_back(argv[++i]);
  }
  char tmpl[] = "/tmp/modelcost_bench_XXXXXX.onnx";
  const int fd = mkstemps(tmpl, 5);
  if (fd < 0) return 1;
  close(fd);
  {
    std::ofstream out(tmpl, std::ios::binary);
    out << transformer_like(nodes);
  }
  files.insert(files.begin(), tmpl);
  if (files.size() == 1) files.push_back(std::string(MODELCOST_SOURCE_DIR) + "/../shared/models/tinyllama_1b_op18.onnx");
  const std::string py = python_with_onnx();
  std::printf("%-40s %8s %12s %14s %14s %7s\n", "model", "nodes", "analysis_ms", "py_load_ms", "py_process_ms", "ratio");
  for (const auto& f : files) {
    std::vector<double> ours, load, process;
    for (int r = 0; r < repeat; ++r) {
      ours.push_back(analyse_seconds(f));
      if (!py.empty()) {
        process.push_back(command_seconds(py + " -c \"import onnx; onnx.load('" + f + "', load_external_data=False)\""));
        // Load alone, timed inside Python: the stricter yardstick (no interpreter start-up or import).
        FILE* p = popen((py + " -c \"import onnx,time; t=time.perf_counter(); onnx.load('" + f +
                         "', load_external_data=False); print(time.perf_counter()-t)\"").c_str(), "r");
        double s = -1;
        if (p && std::fscanf(p, "%lf", &s) == 1) load.push_back(s);
        if (p) pclose(p);
      }
    }
    onnx::ModelProto m;
    std::ifstream in(f, std::ios::binary);
    m.ParseFromIstream(&in);
    const double a = median(ours) * 1e3;
    const double l = load.empty() ? -1 : median(load) * 1e3;
    const double pr = process.empty() ? -1 : median(process) * 1e3;
    std::printf("%-40s %8d %12.1f %14.1f %14.1f %7.2f\n", f.substr(f.rfind('/') + 1).c_str(), m.graph().node_size(), a, l, pr,
                l > 0 ? a / l : 0.0);
  }
  std::printf("analysis = load + shapes + costs, in process; py_load = onnx.load alone; py_process = the whole "
              "`python3 -c \"import onnx; onnx.load(...)\"`; ratio = analysis / py_load (goal <= 1)\n");
  std::remove(tmpl);
  return 0;
}
