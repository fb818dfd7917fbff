// A node as the operator runners see it: plain shapes, dtypes and attributes, with the
// measurement dtype applied (--dtype fp16 turns every float tensor into fp16). No protobuf
// here, so the CUDA sources can use it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/tensor.h"

namespace modelcost {

struct TensorSpec {
  bool present = false;  // false: an omitted optional input/output
  Shape shape;
  int32_t dtype = 0;     // onnx::TensorProto::DataType after the dtype override
  bool is_weight = false;
  std::shared_ptr<const TensorValue> value;  // known contents (shape constants, axes, ...)
  double elements() const { return element_count(shape); }
};

struct Attributes {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::vector<int64_t>> int_lists;
  std::map<std::string, std::vector<double>> float_lists;

  int64_t get_int(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name) const;  // empty when absent
  bool has(const std::string& name) const;
};

struct NodeSpec {
  std::string name, op_type, domain;
  int opset = 0;
  std::vector<TensorSpec> inputs, outputs;
  Attributes attributes;
  // fp32 computed on TF32 tensor cores where the library allows (--dtype tf32).
  bool allow_tf32 = false;
  // The analysed node it was read from, which its op rule's plan builder reads (op_plan.h);
  // null for a spec made up in code (the builder then reads a one-node graph of the spec).
  const Graph* graph = nullptr;
  const Node* node = nullptr;

  const TensorSpec& in(size_t i) const;   // an absent TensorSpec when i is out of range
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present; }
};

// The ONNX dtype a float tensor takes under a --dtype value ("" keeps it). Non-float dtypes are
// unchanged. Throws Error(kExitUsage) for an unknown name.
int32_t measurement_dtype(int32_t dtype, const std::string& dtype_option);

// A key equal for two nodes exactly when they run the same work: op, domain, opset, attributes,
// every input's and output's presence, dtype and shape, and known contents (axes, Clip bounds).
std::string measurement_key(const NodeSpec& spec);

// Builds the spec of a node of the analysis; the dtype option as for measurement_dtype.
NodeSpec make_node_spec(const NodeAnalysis& node, const std::string& dtype_option);

}  // namespace modelcost
