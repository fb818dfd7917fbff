// The whole model on the GPU: every tensor gets its own buffer (reshape-like nodes alias their
// input), every node its runner, prepared up front; then one pass over the nodes in topological
// order is captured into a CUDA graph and its replays are timed with CUDA events, the way a
// deployment replays a captured graph.
#include <map>
#include <optional>

#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "deployed/graph_pass.h"
#include "measure/sampling.h"
#include "timing/graph_replay.h"
#include "timing/wall_ledger.h"

namespace modelcost::cuda {
namespace {

// The data-dependent nodes whose outputs the replay ran at the analyzer's bound ("" when none):
// NonZero with every element non-zero, NonMaxSuppression keeping every box, If's costed branch.
std::string assumed_sizes_note(const Analysis& analysis) {
  std::map<std::string, int> count;
  for (const NodeAnalysis& n : analysis.nodes) {
    const std::string& op = n.node->op_type;
    if (op != "NonZero" && op != "NonMaxSuppression" && op != "If" && op != "Compress" && op != "Unique") continue;
    bool bound = false;
    for (int id : n.node->outputs) bound = bound || (id >= 0 && analysis.graph->tensors[id].estimate);
    if (bound) ++count[op];
  }
  if (count.empty()) return "";
  std::string note = "; at the analyzer's assumed sizes of data-dependent outputs (";
  for (const auto& [op, k] : count) note += std::to_string(k) + " " + op + ", ";
  return note.substr(0, note.size() - 2) + ": upper bounds, every element non-zero and every box kept)";
}

}  // namespace

ModelMeasurement CudaBackend::measure_model(const Analysis& analysis, const MeasureOptions& options) {
  ModelMeasurement result;
  result.method = "CUDA graph replay of all nodes in topological order, CUDA events";
  if (!analysis.graph) {
    result.reason = "no model";
    return result;
  }
  std::vector<void*> pointer(analysis.graph->tensors.size(), nullptr);
  GraphPass pass;
  context_.autotune = options.autotune;
  context_.channels_last_half = true;
  context_.dtype_option = options.dtype;
  try {
    std::optional<LedgerScope> preparing(std::in_place, timing_.ledger,
                                         "as-written: buffers and runners prepared (timed choices included)");
    result.reason = pass.prepare(analysis.nodes, pointer, context_);
    if (!result.reason.empty()) return result;
    MC_CUDA_CHECK(cudaStreamSynchronize(context_.stream));
    preparing.reset();
    LedgerScope replaying(timing_.ledger, "as-written: whole-model graph");
    const std::string method = result.method;
    result = time_graph_replays(timing_, [&](cudaStream_t s) { pass.launch(s); }, context_.stream, options,
                                options.cold ? &l2_flush() : nullptr)
                 .timing;
    result.method = method + assumed_sizes_note(analysis);
  } catch (const Error& e) {
    cudaGetLastError();
    cudaStreamSynchronize(context_.stream);
    result.measured = false;
    result.reason = e.what();
  }
  return result;
}

}  // namespace modelcost::cuda
