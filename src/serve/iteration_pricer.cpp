// An iteration's time from the step model (docs/llm.md, "Serving simulation").
#include "serve/serve.h"

namespace modelcost {
namespace {
// Memo tables are indexed directly up to this many rows or positions; past it, priced each time
// (a bound on their memory whatever the lengths asked for).
constexpr int64_t kMemoLimit = 1 << 20;
}  // namespace

// Everything but attention scales with the iteration's rows (its new tokens, all sequences
// together): the weight GEMMs read their weights once for all of them.
double IterationPricer::rows_ms(int64_t rows) {
  if (rows >= kMemoLimit) {
    const StepTime t = predict_step(setup_, 1, rows, 0);
    return t.total_ms() - t.attention_ms;
  }
  const auto index = static_cast<size_t>(rows);
  if (index >= rows_ms_.size()) rows_ms_.resize(index + 1, -1);
  if (rows_ms_[index] < 0) {
    const StepTime t = predict_step(setup_, 1, rows, 0);
    rows_ms_[index] = t.total_ms() - t.attention_ms;
  }
  return rows_ms_[index];
}

// rows_ms prices the rows as one sequence's, so a model that takes the last position's logits
// gets one LM-head row; an iteration of several sequences needs one each. The difference between
// `sequences` rows of one token and one sequence of as many tokens is that head (and its gather).
double IterationPricer::logits_ms(int64_t sequences) {
  if (sequences <= 1 || setup_.model->logits_every_position) return 0;
  const auto index = static_cast<size_t>(sequences);
  if (index >= logits_ms_.size()) logits_ms_.resize(index + 1, -1);
  if (logits_ms_[index] < 0) {
    const StepTime separate = predict_step(setup_, sequences, 1, 0), together = predict_step(setup_, 1, sequences, 0);
    logits_ms_[index] = (separate.total_ms() - separate.attention_ms) - (together.total_ms() - together.attention_ms);
  }
  return logits_ms_[index];
}

// Attention is per sequence: its own new tokens against its own cached context.
double IterationPricer::attention_ms(const Slice& slice) {
  if (slice.new_tokens == 1 && slice.past < kMemoLimit) {
    const auto index = static_cast<size_t>(slice.past);
    if (index >= decode_attention_ms_.size()) decode_attention_ms_.resize(index + 1, -1);
    if (decode_attention_ms_[index] < 0) decode_attention_ms_[index] = predict_step(setup_, 1, 1, slice.past).attention_ms;
    return decode_attention_ms_[index];
  }
  const uint64_t key = (static_cast<uint64_t>(slice.new_tokens) << 32) ^ static_cast<uint64_t>(slice.past);
  auto [it, added] = prefill_attention_ms_.emplace(key, 0.0);
  if (added) it->second = predict_step(setup_, 1, slice.new_tokens, slice.past).attention_ms;
  return it->second;
}

int64_t stage_boundaries_between_nodes(const StepSetup& setup, int64_t stages) {
  auto it = setup.device->interconnect.find("node_gpus");
  if (it == setup.device->interconnect.end() || it->second < 1) return 0;  // one node, however many devices
  const auto node = static_cast<int64_t>(it->second);
  return (setup.tp * stages + node - 1) / node - 1;  // stages fill one node after another
}

// Between pipeline stages each device of the tensor-parallel group sends its share of the
// iteration's hidden states to its peer of the next stage: over the device's link inside a node,
// over InfiniBand where the boundary falls between nodes.
double IterationPricer::stage_transfers_ms(int64_t rows) const {
  if (stages_ <= 1) return 0;
  const double bytes = static_cast<double>(rows) * static_cast<double>(setup_.model->hidden) * setup_.act_bytes /
                       static_cast<double>(setup_.tp);
  auto send_ms = [&](double gbps, double latency_us) { return latency_us * 1e-3 + (gbps > 0 ? bytes / (gbps * 1e9) * 1e3 : 0); };
  const int64_t between_nodes = stage_boundaries_between_nodes(setup_, stages_);
  const auto& links = setup_.device->interconnect;
  const double network = between_nodes == 0 ? 0 : send_ms(links.at("infiniband_gbps"), links.at("infiniband_latency_us"));
  return static_cast<double>(stages_ - 1 - between_nodes) * send_ms(setup_.link_gbps, setup_.link_latency_us) +
         static_cast<double>(between_nodes) * network;
}

// A model whose MLP is known runs as the deployed step: every slice in one step of the kernels
// `--measure` runs (the products over all rows, one causal attention over the prefill chunks, one
// flash-decoding over the decodes).
double IterationPricer::deployed_iteration_ms(const std::vector<Slice>& slices) {
  StepMix mix;
  int64_t rows = 0;
  for (const Slice& slice : slices) {
    rows += slice.new_tokens;
    if (slice.new_tokens == 1) mix.add_decode(slice.past + 1);
    else mix.add_prefill(slice.new_tokens, slice.past);
  }
  if (rows == 0) return 0;
  return deployed_->price(mix, false).total_ms() + stage_transfers_ms(rows);
}

double IterationPricer::iteration_ms(const std::vector<Slice>& slices) {
  if (deployed_) return deployed_iteration_ms(slices);
  int64_t rows = 0;
  double attention = 0;
  for (const Slice& slice : slices) {
    rows += slice.new_tokens;
    attention += attention_ms(slice);
  }
  if (rows == 0) return 0;
  return rows_ms(rows) + logits_ms(static_cast<int64_t>(slices.size())) + attention + stage_transfers_ms(rows);
}

}  // namespace modelcost
