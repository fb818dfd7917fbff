// Op rules: nn family, recurrent layers (RNN, GRU, LSTM). Formulas: docs/ops/nn.md.
#include "ops/defs/nn_common.h"

namespace modelcost {
namespace {

// The dims every recurrent op shares, read from X, W, R and the attributes.
struct Recurrence {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool batch_major = false;  // layout = 1: X is [batch, seq, input]
};

// gates: 1 (RNN), 3 (GRU), 4 (LSTM). transposed: W is [directions, input, gates*hidden] and R
// [directions, hidden, gates*hidden] (com.microsoft.DynamicQuantizeLSTM).
Recurrence read_recurrence(const OpContext& c, int64_t gates, bool transposed = false) {
  require_rank(c, 0, 3, "input X");
  require_rank(c, 1, 3, "weight W");
  require_rank(c, 2, 3, "recurrence weight R");
  Recurrence r;
  const int64_t layout = c.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout must be 0 or 1, got " + std::to_string(layout));
  r.batch_major = layout == 1;
  const Shape& x = c.in_shape(0);
  r.seq = r.batch_major ? x[1] : x[0];
  r.batch = r.batch_major ? x[0] : x[1];
  r.input = x[2];
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("direction must be forward, reverse or bidirectional, got '" + direction + "'");
  r.directions = direction == "bidirectional" ? 2 : 1;
  const Shape& w = c.in_shape(1);
  const Shape& rw = c.in_shape(2);
  r.hidden = c.attr_int("hidden_size", transposed ? rw[1] : rw[2]);
  if (r.hidden <= 0) c.fail("hidden_size must be positive, got " + std::to_string(r.hidden));
  const Shape want_w = transposed ? Shape{r.directions, r.input, gates * r.hidden} : Shape{r.directions, gates * r.hidden, r.input};
  const Shape want_r = transposed ? Shape{r.directions, r.hidden, gates * r.hidden} : Shape{r.directions, gates * r.hidden, r.hidden};
  if (w != want_w) c.fail("W " + shape_to_string(w) + " must be " + shape_to_string(want_w));
  if (rw != want_r) c.fail("R " + shape_to_string(rw) + " must be " + shape_to_string(want_r));
  if (c.has_input(3) && c.in_shape(3) != Shape{r.directions, 2 * gates * r.hidden})
    c.fail("B " + shape_to_string(c.in_shape(3)) + " must be " + shape_to_string({r.directions, 2 * gates * r.hidden}));
  if (c.has_input(4) && c.in_shape(4) != Shape{r.batch})
    c.fail("sequence_lens " + shape_to_string(c.in_shape(4)) + " must be [" + std::to_string(r.batch) + "]");
  return r;
}

void infer_recurrence(OpContext& c, int64_t gates, bool transposed = false) {
  const Recurrence r = read_recurrence(c, gates, transposed);
  const Shape state = r.batch_major ? Shape{r.batch, r.directions, r.hidden} : Shape{r.directions, r.batch, r.hidden};
  for (size_t i = 5; i <= 6 && i < c.num_inputs(); ++i)  // initial_h, LSTM's initial_c
    if (c.has_input(i) && c.in_shape(i) != state)
      c.fail(std::string(i == 5 ? "initial_h " : "initial_c ") + shape_to_string(c.in_shape(i)) + " must be " +
             shape_to_string(state));
  const Shape y = r.batch_major ? Shape{r.batch, r.seq, r.directions, r.hidden}
                                : Shape{r.seq, r.directions, r.batch, r.hidden};
  for (size_t i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.in_dtype(0), i == 0 ? y : state);  // Y, Y_h, Y_c
}

void infer_rnn(OpContext& c) { infer_recurrence(c, 1); }
void infer_gru(OpContext& c) {
  const int64_t lbr = c.attr_int("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) c.fail("linear_before_reset must be 0 or 1");
  infer_recurrence(c, 3);
}
void infer_lstm(OpContext& c) {
  infer_recurrence(c, 4);
  const Recurrence r = read_recurrence(c, 4);
  if (c.has_input(7) && c.in_shape(7) != Shape{r.directions, 3 * r.hidden})
    c.fail("P " + shape_to_string(c.in_shape(7)) + " must be " + shape_to_string({r.directions, 3 * r.hidden}));
}

// macs: per step, direction and batch row, the gate pre-activations x*W^T (gates*hidden x input)
// and h*R^T (gates*hidden x hidden). flops: 2*macs + `per_hidden` flops per hidden value per step
// + 2 bias adds per gate value when B is given.
OpCost recurrence_cost(const OpContext& c, int64_t gates, double per_hidden, bool transposed = false) {
  const Recurrence r = read_recurrence(c, gates, transposed);
  const double hidden_values = static_cast<double>(r.directions) * static_cast<double>(r.seq) *
                               static_cast<double>(r.batch) * static_cast<double>(r.hidden);
  OpCost cost;
  cost.macs = hidden_values * static_cast<double>(gates) * static_cast<double>(r.input + r.hidden);
  cost.flops = 2 * cost.macs + hidden_values * (per_hidden + (c.has_input(3) ? 2.0 * static_cast<double>(gates) : 0));
  return cost;
}

// RNN: the activation (tanh).
OpCost cost_rnn(const OpContext& c) { return recurrence_cost(c, 1, 1); }
// GRU: 3 activations (z, r, h~), the reset multiply, and h = (1-z)*h~ + z*h_prev (4).
OpCost cost_gru(const OpContext& c) { return recurrence_cost(c, 3, 8); }
// LSTM: 5 activations (i, f, o, g, tanh(c)), c = f*c + i*g (3), h = o*tanh(c) (1); peepholes
// add a multiply and an add for each of i, f, o (6).
OpCost cost_lstm(const OpContext& c) { return recurrence_cost(c, 4, 9 + (c.has_input(7) ? 6 : 0)); }

// Default activations only (the exporters' form); sequence_lens, clip and layout 1 not taken.
OpPlan plan_recurrent(const OpContext& c) {
  if (!float_data(c)) return unsupported(c.node().op_type + " on non-float tensors");
  if (c.has_attr("activations")) return unsupported(c.node().op_type + " with its own activations");
  if (c.has_attr("clip")) return unsupported(c.node().op_type + " with clip");
  if (c.has_input(4)) return unsupported(c.node().op_type + " with sequence_lens");
  if (c.attr_int("input_forget", 0) != 0) return unsupported("LSTM with input_forget");
  const std::string& op = c.node().op_type;
  RecurrentPlan p;
  p.cell = op == "RNN" ? RecurrentPlan::Cell::kRnn : op == "GRU" ? RecurrentPlan::Cell::kGru : RecurrentPlan::Cell::kLstm;
  const Recurrence r = read_recurrence(c, p.gates());
  if (r.batch_major) return unsupported(op + " with layout 1");
  p.seq = r.seq;
  p.batch = r.batch;
  p.input = r.input;
  p.hidden = r.hidden;
  p.directions = r.directions;
  p.reverse = c.attr_string("direction", "forward") == "reverse";
  p.linear_before_reset = c.attr_int("linear_before_reset", 0) != 0;
  p.has_bias = c.has_input(3);
  p.has_initial_h = c.has_input(5);
  p.has_initial_c = c.has_input(6) && p.cell == RecurrentPlan::Cell::kLstm;
  p.has_peepholes = c.has_input(7) && p.cell == RecurrentPlan::Cell::kLstm;
  return p;
}

// DynamicQuantizeLSTM: LSTM with int8 W and R (transposed layout) plus their scales and zero
// points (inputs 8-11); the same work as LSTM, its int8 weights counted in params.
void infer_dynamic_quantize_lstm(OpContext& c) {
  infer_recurrence(c, 4, true);
  for (size_t i = 0; i < c.num_outputs(); ++i)
    if (c.has_output(i)) c.out(i).dtype = c.in_dtype(0);
}

OpCost cost_dynamic_quantize_lstm(const OpContext& c) {
  OpCost cost = recurrence_cost(c, 4, 9 + (c.has_input(7) ? 6 : 0), true);
  for (size_t i : {1, 2}) cost.quantized_weights.emplace_back(i, element_count(c.in_shape(i)));
  return cost;
}

}  // namespace

void register_nn_rnn_ops(OpRegistry& r) {
  r.add(OpForm::kGemm, {
      {"", "RNN", infer_rnn, cost_rnn, plan_recurrent},
      {"", "GRU", infer_gru, cost_gru, plan_recurrent},
      {"", "LSTM", infer_lstm, cost_lstm, plan_recurrent},
  });
  r.add(OpTraits(OpForm::kGemm).with_integer_math(), {
      {"com.microsoft", "DynamicQuantizeLSTM", infer_dynamic_quantize_lstm, cost_dynamic_quantize_lstm, {}, inputs(12, 12).outputs(0, 3)},
  });
}

}  // namespace modelcost
