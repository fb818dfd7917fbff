// Op rules: sequence and optional ops (registered by register_controlflow_ops).
//
// A sequence-typed tensor is represented by the TensorInfo of its element: dtype and shape, an
// elementwise upper bound marked estimate when the elements differ, and shape [0] for an empty
// sequence. The length and the individual elements are recovered where they are known by tracing
// the ops that built the sequence in the same graph (SequenceEmpty / Construct / Insert / Erase,
// SplitToSequence). An optional is represented by its element ([0] when it is empty).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <optional>

#include "ops/defs/controlflow_common.h"

namespace modelcost {
namespace {

struct Element {
  int32_t dtype = 0;
  Shape shape;
  bool estimate = false;
};
using Elements = std::vector<Element>;

// Ops followed back from one sequence: bounds the work per node, so tracing stays linear in the
// graph (a longer chain of inserts gives a sequence of unknown length, an estimate).
constexpr int kMaxTraceDepth = 64;
const Shape kEmpty{0};
// Elements tracked one by one in a traced sequence, as many as a folded tensor's values: a
// SplitToSequence into 2^33 chunks is left as one bounding element (an estimate), not listed.
constexpr int64_t kMaxTracedElements = int64_t{1} << 16;

Element element_of(const TensorInfo& t) { return {t.dtype, t.shape, t.estimate}; }

// Upper bound of two elements: equal shapes stay exact; an empty ([0]) side gives way; same rank
// takes the elementwise max; different ranks take the larger.
Element merge(const Element& a, const Element& b) {
  const int32_t dtype = a.dtype ? a.dtype : b.dtype;
  if (a.shape == b.shape) return {dtype, a.shape, a.estimate || b.estimate};
  if (element_count(a.shape) == 0 && a.shape == kEmpty) return {dtype, b.shape, b.estimate};
  if (element_count(b.shape) == 0 && b.shape == kEmpty) return {dtype, a.shape, a.estimate};
  if (a.shape.size() != b.shape.size())
    return {dtype, element_count(a.shape) >= element_count(b.shape) ? a.shape : b.shape, true};
  Shape out(a.shape.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::max(a.shape[i], b.shape[i]);
  return {dtype, out, true};
}

Element merge_all(const Elements& elements, int32_t empty_dtype) {
  Element out{empty_dtype, kEmpty, false};
  for (const auto& e : elements) out = merge(out, e);
  return out;
}

// Tensor id of input i, -1 when the node has no such input.
int input_id(const OpContext& c, size_t i) { return c.has_input(i) ? c.node().inputs[i] : -1; }

// SplitToSequence's elements; std::nullopt when their number or sizes are not known. *bound
// receives an element that bounds them all.
std::optional<Elements> split_elements(const OpContext& c, Element* bound) {
  const Shape& x = c.in_shape(0);
  if (x.empty()) c.fail("cannot split a scalar");
  const int64_t axis = c.axis(c.attr_int("axis", 0), x.size());
  const int64_t dim = x[axis];
  const bool estimate = c.in(0).estimate;
  auto with_length = [&](int64_t length) {
    Shape s = x;
    s[axis] = length;
    return Element{c.in_dtype(0), s, estimate};
  };
  if (!c.has_input(1)) {  // one element per index; keepdims = 0 drops the axis
    Element e = with_length(1);
    if (c.attr_int("keepdims", 1) == 0) e.shape.erase(e.shape.begin() + axis);
    *bound = e;
    if (dim > kMaxTracedElements) return std::nullopt;
    return Elements(static_cast<size_t>(dim), e);
  }
  const TensorValue* split = c.value(1);
  if (!split) {
    *bound = with_length(dim);
    bound->estimate = true;
    return std::nullopt;
  }
  std::vector<int64_t> lengths;
  if (c.in_shape(1).empty()) {  // a scalar: chunks of that size, the last one shorter
    const int64_t chunk = split->as_int(0);
    if (chunk <= 0) c.fail("split = " + std::to_string(chunk) + " must be positive");
    if (dim / chunk >= kMaxTracedElements) {  // too many to list: every chunk is at most `chunk` long
      *bound = with_length(std::min(chunk, dim));
      bound->estimate = estimate || dim % chunk != 0;
      return std::nullopt;
    }
    for (int64_t done = 0; done < dim; done += chunk) lengths.push_back(std::min(chunk, dim - done));
  } else {
    lengths = value_as_ints(*split);
    int64_t total = 0;
    for (int64_t l : lengths) {
      if (l < 0) c.fail("split has a negative length " + std::to_string(l));
      if (l > dim - total) c.fail("split lengths sum to more than the axis's " + std::to_string(dim));
      total += l;
    }
    if (total != dim)
      c.fail("split lengths sum to " + std::to_string(total) + " but the axis has " + std::to_string(dim));
  }
  Elements out;
  for (int64_t l : lengths) out.push_back(with_length(l));
  *bound = out.empty() ? with_length(0) : merge_all(out, c.in_dtype(0));
  return out;
}

// The elements of the sequence tensor `id` of graph g, traced through the ops that built it.
std::optional<Elements> trace(const OpContext& c, const Graph& g, int id, int depth = 0) {
  if (id < 0 || depth > kMaxTraceDepth) return std::nullopt;
  const Node* n = g.producer(id);
  if (!n || !is_standard_domain(n->domain)) return std::nullopt;
  OpContext p(const_cast<Graph&>(g), *n, c.diagnostics());
  for (size_t i = 0; i < p.num_inputs(); ++i)
    if (p.has_input(i) && !p.in(i).has_shape) return std::nullopt;
  const std::string& op = n->op_type;
  auto position = [&](size_t input, int64_t fallback, int64_t size, int64_t* pos) {
    *pos = fallback;
    if (!p.has_input(input)) return true;
    const TensorValue* v = p.value(input);
    if (!v || v->size() == 0) return false;
    *pos = v->as_int(0);
    if (*pos < 0) *pos += size;
    return true;
  };
  if (op == "SequenceEmpty") return Elements{};
  if (op == "SequenceConstruct") {
    Elements out;
    for (size_t i = 0; i < p.num_inputs(); ++i) out.push_back(element_of(p.in(i)));
    return out;
  }
  if (op == "SequenceInsert") {
    auto base = trace(c, g, input_id(p, 0), depth + 1);
    if (!base) return std::nullopt;
    const auto size = static_cast<int64_t>(base->size());
    int64_t pos;
    if (!position(2, size, size + 1, &pos) || pos < 0 || pos > size) return std::nullopt;
    base->insert(base->begin() + pos, element_of(p.in(1)));
    return base;
  }
  if (op == "SequenceErase") {
    auto base = trace(c, g, input_id(p, 0), depth + 1);
    if (!base) return std::nullopt;
    const auto size = static_cast<int64_t>(base->size());
    int64_t pos;
    if (!position(1, size - 1, size, &pos) || pos < 0 || pos >= size) return std::nullopt;
    base->erase(base->begin() + pos);
    return base;
  }
  if (op == "SplitToSequence") {
    Element bound;
    return split_elements(p, &bound);
  }
  if ((op == "Identity" || op == "Optional" || op == "OptionalGetElement") && p.has_input(0))
    return trace(c, g, input_id(p, 0), depth + 1);
  return std::nullopt;
}

// Sets output i. Traced elements carry their own estimate flag: a sequence input that is an
// upper bound (elements of different shapes) does not make an exactly traced result one.
void set_traced(OpContext& c, size_t i, const Element& e) {
  c.set_output(i, e.dtype, e.shape, e.estimate);
  if (c.has_output(i)) c.out(i).estimate = e.estimate;
}

// Sets output 0, a sequence, from its traced elements, or from `fallback` when they are unknown.
void set_sequence(OpContext& c, const Element& fallback) {
  auto elements = trace(c, c.graph(), c.has_output(0) ? c.node().outputs[0] : -1);
  if (elements) set_traced(c, 0, merge_all(*elements, fallback.dtype));
  else c.set_output(0, fallback.dtype, fallback.shape, fallback.estimate);
}

void warn_unknown_length(const OpContext& c) {
  c.diagnostics().warn_counted(c.node().op_type + ": sequence length not known at analysis time; one element assumed (estimate)",
                               c.node().name);
}

void infer_sequence_empty(OpContext& c) {
  c.set_output(0, static_cast<int32_t>(c.attr_int("dtype", onnx::TensorProto::FLOAT)), kEmpty);
}

void infer_sequence_construct(OpContext& c) {
  if (c.num_inputs() == 0) c.fail("SequenceConstruct needs at least one input");
  Elements inputs;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (c.in_dtype(i) != c.in_dtype(0)) c.fail("sequence elements must share one dtype");
    inputs.push_back(element_of(c.in(i)));
  }
  set_sequence(c, merge_all(inputs, c.in_dtype(0)));
}

void infer_sequence_insert(OpContext& c) { set_sequence(c, merge(element_of(c.in(0)), element_of(c.in(1)))); }

void infer_sequence_erase(OpContext& c) { set_sequence(c, element_of(c.in(0))); }

void infer_split_to_sequence(OpContext& c) {
  Element bound;
  split_elements(c, &bound);
  set_sequence(c, bound);
}

void infer_sequence_at(OpContext& c) {
  auto elements = trace(c, c.graph(), input_id(c, 0));
  const TensorValue* v = c.value(1);
  if (elements && v && v->size() > 0) {
    const auto size = static_cast<int64_t>(elements->size());
    int64_t pos = v->as_int(0);
    if (pos < 0) pos += size;
    if (pos < 0 || pos >= size)
      c.fail("position " + std::to_string(v->as_int(0)) + " is outside a sequence of " + std::to_string(size));
    set_traced(c, 0, (*elements)[pos]);
    return;
  }
  c.set_output(0, c.in_dtype(0), c.in_shape(0), c.in(0).estimate);
}

void infer_sequence_length(OpContext& c) {
  c.set_output(0, onnx::TensorProto::INT64, {});
  if (auto elements = trace(c, c.graph(), input_id(c, 0)))
    c.set_value(0, make_int_value({static_cast<int64_t>(elements->size())}));
}

void infer_concat_from_sequence(OpContext& c) {
  if (!c.has_attr("axis")) c.fail("attribute axis is required");
  const bool new_axis = c.attr_int("new_axis", 0) != 0;
  auto elements = trace(c, c.graph(), input_id(c, 0));
  if (!elements) {
    warn_unknown_length(c);
    Shape shape = c.in_shape(0);
    const int64_t axis = c.axis(c.attr_int("axis", 0), shape.size() + (new_axis ? 1 : 0));
    if (new_axis) shape.insert(shape.begin() + axis, 1);
    c.set_output(0, c.in_dtype(0), shape, true);
    return;
  }
  if (elements->empty()) c.fail("concatenates an empty sequence");
  const Shape& first = elements->front().shape;
  bool estimate = false;
  for (const auto& e : *elements) estimate = estimate || e.estimate;
  const int64_t axis = c.axis(c.attr_int("axis", 0), first.size() + (new_axis ? 1 : 0));
  Shape out = first;
  if (new_axis) {
    for (const auto& e : *elements)
      if (e.shape != first) c.fail("stacks elements of different shapes " + shape_to_string(first) + " and " + shape_to_string(e.shape));
    out.insert(out.begin() + axis, static_cast<int64_t>(elements->size()));
  } else {
    out[axis] = 0;
    for (const auto& e : *elements) {
      if (e.shape.size() != first.size()) c.fail("concatenates elements of different ranks");
      for (size_t d = 0; d < first.size(); ++d)
        if (static_cast<int64_t>(d) != axis && e.shape[d] != first[d])
          c.fail("elements " + shape_to_string(first) + " and " + shape_to_string(e.shape) + " differ off the axis");
      out[axis] = checked_dim(c, static_cast<double>(out[axis]) + static_cast<double>(e.shape[axis]), "the concatenated axis");
    }
  }
  set_traced(c, 0, {elements->front().dtype, out, estimate});
}

// ---- SequenceMap: the body runs once per element ----

// The number of elements SequenceMap iterates over; 0 with *known = false when not traceable.
double sequence_map_length(const OpContext& c, bool* known) {
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    if (auto elements = trace(c, c.graph(), input_id(c, i))) {
      *known = true;
      return static_cast<double>(elements->size());
    }
  }
  *known = false;
  return 1;
}

void infer_sequence_map(OpContext& c) {
  Graph& body = subgraph(c, "body");
  prepare_body(c, body, c.num_inputs(), c.num_outputs());
  // A sequence input is represented by its element, which is what the body sees.
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const TensorInfo& t = c.in(i);
    bind_body_input(body, i, t.dtype, t.shape, t.estimate);
  }
  infer_body(c, body);
  bool known = false;
  sequence_map_length(c, &known);
  if (!known) warn_unknown_length(c);
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    const TensorInfo& out = body_output(body, k);
    if (out.has_shape) c.set_output(k, out.dtype, out.shape, out.estimate);
  }
}

OpCost cost_sequence_map(const OpContext& c) {
  bool known = false;
  OpCost cost;
  cost.subgraph_repeats = sequence_map_length(c, &known);
  cost.estimate = !known;
  return cost;
}

// ---- Optional ----

void infer_optional(OpContext& c) {
  if (c.has_input(0)) {
    infer_passthrough(c);
    return;
  }
  const auto* type = c.attr("type");
  if (!type || !type->has_tp()) c.fail("an Optional without input needs the attribute type");
  const onnx::TypeProto* tp = &type->tp();
  if (tp->has_sequence_type()) tp = &tp->sequence_type().elem_type();
  if (!tp->has_tensor_type()) c.fail("the attribute type names no tensor element");
  c.set_output(0, tp->tensor_type().elem_type(), kEmpty);
}

void infer_optional_has_element(OpContext& c) {
  c.set_output(0, onnx::TensorProto::BOOL, {});
  if (!c.has_input(0)) {  // opset 18: an empty input is an empty optional
    c.set_value(0, make_int_value({0}));
    return;
  }
  const Node* p = c.graph().producer(input_id(c, 0));
  if (p && p->op_type == "Optional" && is_standard_domain(p->domain)) {
    const bool has = !p->inputs.empty() && p->inputs[0] >= 0;
    c.set_value(0, make_int_value({has ? 1 : 0}));
  }
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  r.add(OpForm::kOther, {
      {"", "SequenceEmpty", infer_sequence_empty, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceConstruct", infer_sequence_construct, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceInsert", infer_sequence_insert, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceErase", infer_sequence_erase, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceAt", infer_sequence_at, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceLength", infer_sequence_length, cost_data_movement, not_measured("sequence op")},
      {"", "SplitToSequence", infer_split_to_sequence, cost_data_movement, not_measured("sequence op")},
      {"", "ConcatFromSequence", infer_concat_from_sequence, cost_data_movement, not_measured("sequence op")},
      {"", "SequenceMap", infer_sequence_map, cost_sequence_map, not_measured("sequence op")},
      {"", "Optional", infer_optional, cost_data_movement, not_measured("optional op")},
      {"", "OptionalHasElement", infer_optional_has_element, cost_data_movement, not_measured("optional op")},
      {"", "OptionalGetElement", infer_passthrough, cost_data_movement, not_measured("optional op")},
  });
}

}  // namespace modelcost
