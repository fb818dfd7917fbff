// An iteration's time from the step model (docs/llm.md, "Serving simulation").
#include "serve/serve.h"

#include <algorithm>

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

namespace {
// The device's GPUs per node (interconnect.node_gpus); 0 without the figure: one node, however
// many devices.
int64_t gpus_per_node(const StepSetup& setup) {
  auto it = setup.device->interconnect.find("node_gpus");
  return it == setup.device->interconnect.end() || it->second < 1 ? 0 : static_cast<int64_t>(it->second);
}
}  // namespace

int64_t stage_boundaries_between_nodes(const StepSetup& setup, int64_t stages) {
  const int64_t node = gpus_per_node(setup);
  if (node == 0) return 0;
  return (setup.tp * stages + node - 1) / node - 1;  // stages fill one node after another
}

std::vector<int64_t> pipeline_layer_split(int64_t layers, int64_t stages) {
  if (stages < 1) return {};
  std::vector<int64_t> split(static_cast<size_t>(stages), layers / stages);
  for (int64_t i = 2; i < layers % stages + 2; ++i) split[static_cast<size_t>(stages - i)] += 1;
  return split;
}

// Each device of the tensor-parallel group sends its share of the rows' hidden states to its peer
// of the next stage: over the device's link inside a node, over InfiniBand where the boundary
// falls between nodes (stages fill one node after another).
double IterationPricer::send_ms(int64_t rows, int64_t boundary) const {
  const double bytes = static_cast<double>(rows) * static_cast<double>(setup_.model->hidden) * setup_.act_bytes /
                       static_cast<double>(setup_.tp);
  auto over = [&](double gbps, double latency_us) { return latency_us * 1e-3 + (gbps > 0 ? bytes / (gbps * 1e9) * 1e3 : 0); };
  const auto& links = setup_.device->interconnect;
  const int64_t node = gpus_per_node(setup_), next_device = (boundary + 1) * setup_.tp;
  const bool between_nodes = node > 0 && (next_device - 1) / node != next_device / node;
  if (between_nodes) return over(links.at("infiniband_gbps"), links.at("infiniband_latency_us"));
  return over(setup_.link_gbps, setup_.link_latency_us);
}

// A model whose MLP is known runs as the deployed step: every slice in one step of the kernels
// `--measure` runs (the products over all rows, one causal attention over the prefill chunks, one
// flash-decoding over the decodes). With stages, its pieces: each stage's layers (the dense ones
// first, then the mixture of experts'), the embedding on the first, the LM head and what goes
// with it on the last.
std::vector<double> IterationPricer::deployed_stage_ms(const std::vector<Slice>& slices) {
  StepMix mix;
  for (const Slice& slice : slices) {
    if (slice.new_tokens == 1) mix.add_decode(slice.past + 1);
    else mix.add_prefill(slice.new_tokens, slice.past);
  }
  if (mix.rows() == 0) return std::vector<double>(static_cast<size_t>(stages_), 0.0);
  if (stages_ == 1) return {deployed_->price(mix, false).total_ms()};
  const DeployedStepModel::Pieces pieces = deployed_->pieces(mix);
  const int64_t dense = setup_.model->layers - setup_.model->experts.moe_layers;
  std::vector<double> ms;
  int64_t first_layer = 0;
  for (size_t stage = 0; stage < stage_layers_.size(); ++stage) {
    const int64_t layers = stage_layers_[stage], dense_here = std::clamp<int64_t>(dense - first_layer, 0, layers);
    double t = static_cast<double>(dense_here) * pieces.dense_layer.total_ms() +
               static_cast<double>(layers - dense_here) * pieces.moe_layer.total_ms();
    if (stage == 0) t += pieces.before.total_ms();
    if (stage + 1 == stage_layers_.size()) t += pieces.after.total_ms();
    ms.push_back(t);
    first_layer += layers;
  }
  return ms;
}

double IterationPricer::whole_step_ms(const std::vector<Slice>& slices) {
  int64_t rows = 0;
  double attention = 0;
  for (const Slice& slice : slices) {
    rows += slice.new_tokens;
    attention += attention_ms(slice);
  }
  if (rows == 0) return 0;
  return rows_ms(rows) + logits_ms(static_cast<int64_t>(slices.size())) + attention;
}

std::vector<double> IterationPricer::stage_ms(const std::vector<Slice>& slices) {
  if (deployed_) return deployed_stage_ms(slices);
  return std::vector<double>(static_cast<size_t>(stages_), whole_step_ms(slices) / static_cast<double>(stages_));
}

double IterationPricer::iteration_ms(const std::vector<Slice>& slices) {
  double ms = 0;
  for (double stage : stage_ms(slices)) ms += stage;
  int64_t rows = 0;
  for (const Slice& slice : slices) rows += slice.new_tokens;
  if (rows == 0) return 0;
  for (int64_t boundary = 0; boundary + 1 < stages_; ++boundary) ms += send_ms(rows, boundary);
  return ms;
}

}  // namespace modelcost
