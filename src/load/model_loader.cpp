#include "load/model_loader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include "graph/graph_builder.h"
#include "load/function_inliner.h"
#include "load/model_limits.h"
#include "modelcost/errors.h"

namespace modelcost {
namespace {

std::string read_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw Error(kExitUnreadable, path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(kExitUnreadable, path + ": is a directory, not an ONNX file");
  if (!S_ISREG(st.st_mode)) throw Error(kExitUnreadable, path + ": is not a regular file");
  if (st.st_size > static_cast<off_t>(INT_MAX))
    throw Error(kExitInvalidModel, path + ": " + std::to_string(st.st_size) +
                                       " bytes is over protobuf's 2 GB limit; store the weights as external data");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(kExitUnreadable, path + ": cannot open: " + std::strerror(errno));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  if (!in.read(bytes.data(), st.st_size)) throw Error(kExitUnreadable, path + ": read failed");
  return bytes;
}

// A newer ai.onnx opset than known is not refused here: the shape stage warns and uses the
// nearest known rules, refusing only an op it has no rule for.
void check_opsets(const Model& model, const std::string& label) {
  auto it = model.opsets.find("");
  if (it == model.opsets.end()) return;
  if (it->second < 1) throw Error(kExitInvalidModel, label + ": invalid ai.onnx opset " + std::to_string(it->second));
}

struct GraphSize {
  int64_t nodes = 0;
  int64_t tensors = 0;
  int64_t name_bytes = 0;
  bool over() const { return nodes > kMaxModelNodes || tensors > kMaxModelTensors || name_bytes > kMaxModelNameBytes; }
};

int64_t name_bytes(const onnx::NodeProto& n) {
  size_t bytes = n.name().size();
  for (const auto& in : n.input()) bytes += in.size();
  for (const auto& out : n.output()) bytes += out.size();
  return static_cast<int64_t>(bytes);
}

// Counted before the graph is built, bodies included; stops once past either limit.
void count_graph(const onnx::GraphProto& g, GraphSize& size) {
  size.nodes += g.node_size();
  size.tensors += g.input_size() + g.initializer_size() + g.sparse_initializer_size();
  for (const auto& n : g.node()) {
    size.tensors += n.output_size();
    size.name_bytes += name_bytes(n);
    if (size.over()) return;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count_graph(a.g(), size);
      for (const auto& body : a.graphs()) count_graph(body, size);
    }
  }
}

void check_graph_size(const onnx::GraphProto& g) {
  GraphSize size;
  count_graph(g, size);
  if (size.nodes > kMaxModelNodes)
    throw Error(kExitInvalidModel, "over " + std::to_string(kMaxModelNodes) + " nodes (bodies and expanded functions "
                                   "included), more than modelcost analyses");
  if (size.tensors > kMaxModelTensors)
    throw Error(kExitInvalidModel, "over " + std::to_string(kMaxModelTensors) + " tensors (bodies and expanded "
                                   "functions included), more than modelcost analyses");
  if (size.name_bytes > kMaxModelNameBytes)
    throw Error(kExitInvalidModel, "node names over " + std::to_string(kMaxModelNameBytes >> 20) + " MB in all (bodies and "
                                   "expanded functions included), more than modelcost analyses");
}

}  // namespace

Model load_model_from_bytes(const std::string& bytes, const std::string& label) {
  if (bytes.empty()) throw Error(kExitInvalidModel, label + ": empty file, not an ONNX model");
  Model model;
  model.path = label;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(kMaxProtobufNesting);
  if (!model.proto->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(kExitInvalidModel, label + ": not an ONNX model (the protobuf does not parse; truncated, another format, or "
                                           "messages nested over " + std::to_string(kMaxProtobufNesting) +
                                           " deep, about " + std::to_string(kMaxProtobufNesting / 3) + " levels of If/Loop/Scan)");
  const auto& proto = *model.proto;
  if (!proto.has_graph() || proto.ir_version() <= 0)
    throw Error(kExitInvalidModel, label + ": not an ONNX model (no graph or no IR version)");
  model.ir_version = static_cast<int>(proto.ir_version());
  model.producer = proto.producer_name();
  for (const auto& op : proto.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    // Checked before narrowing: 2^32 + 13 must not read as 13.
    if (op.version() > INT_MAX || op.version() < 0)
      throw Error(domain.empty() && op.version() > 0 ? kExitUnsupported : kExitInvalidModel,
                  label + ": opset " + std::to_string(op.version()) + " of the " +
                      (domain.empty() ? std::string("ai.onnx") : domain) + " domain is out of range");
    model.opsets[domain] = static_cast<int>(op.version());
  }
  // IR version 3 and earlier had no opset_import for the default domain: treat as opset 1.
  if (!model.opsets.count("")) model.opsets[""] = 1;
  check_opsets(model, label);
  try {
    const InlinedScopes scopes = inline_local_functions(*model.proto, model.opsets);
    check_graph_size(proto.graph());
    model.graph = build_graph(proto.graph(), model.opsets);
    assign_scopes(model.graph, scopes);
  } catch (const Error& e) {
    throw Error(e.code(), label + ": " + e.what());
  }
  return model;
}

Model load_model(const std::string& path) { return load_model_from_bytes(read_file(path), path); }

}  // namespace modelcost
