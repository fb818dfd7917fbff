// The corpus of real exports in tests/models/corpus (ORT-optimized, quantized, fp16, KV-cache
// with MatMulNBits, LSTM/GRU, scikit-learn, dynamo at opset 23, local functions): every node
// shaped and costed, MACs within 1% and params within 0.1% of references.json, which
// make_corpus.py took from torch.utils.flop_counter or closed forms.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "test_support.h"

namespace modelcost::testing {
namespace {

const std::string kCorpus = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/corpus/";

struct CorpusRun {
  std::string file;
  nlohmann::json reference;
};

std::vector<CorpusRun> corpus_runs() {
  std::ifstream in(kCorpus + "references.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  std::vector<CorpusRun> runs;
  for (auto it = all.begin(); it != all.end(); ++it) {
    if (it.value().contains("runs"))
      for (const auto& r : it.value()["runs"]) runs.push_back({it.key(), r});
    else
      runs.push_back({it.key(), it.value()});
  }
  return runs;
}

void check(const CorpusRun& run) {
  SCOPED_TRACE(run.file + " " + run.reference["dims"].dump());
  ShapeOptions options;
  for (auto it = run.reference["dims"].begin(); it != run.reference["dims"].end(); ++it)
    options.dims[it.key()] = it.value().get<int64_t>();
  auto result = analyse_file(kCorpus + run.file, options);
  const Totals& t = result->analysis.totals;
  EXPECT_EQ(t.unshaped_nodes, 0u);
  EXPECT_EQ(t.uncosted_nodes, 0u);
  const double macs = run.reference["reference_macs"].get<double>();
  const double params = run.reference["params"].get<double>();
  EXPECT_LE(std::fabs(t.macs - macs), 0.01 * macs) << "macs " << t.macs << " vs " << macs;
  EXPECT_LE(std::fabs(t.params - params), 0.001 * params) << "params " << t.params << " vs " << params;
}

}  // namespace

TEST(CorpusModels, EveryExportMatchesItsReference) {
  const auto runs = corpus_runs();
  ASSERT_GE(runs.size(), 18u);
  for (const auto& run : runs) check(run);
}

TEST(CorpusModels, LocalFunctionsKeepTheirScopes) {
  auto result = analyse_file(kCorpus + "cnn_small_local_functions.onnx");
  size_t scoped = 0;
  for (const auto& n : result->analysis.nodes)
    if (!n.node->scope.empty() && !n.node->function.empty()) ++scoped;
  EXPECT_GT(scoped, 0u);
}

}  // namespace modelcost::testing
