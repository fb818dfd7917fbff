// The shape engine and cost model on real exported models: every node shaped, MACs within 1%
// of the published reference, params within 0.1% of the float initializer elements.
// References: ../shared/models/README.md (table) and tests/models/unseen/references.json.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <regex>

#include "test_support.h"

namespace modelcost::testing {
namespace {

struct Reference {
  std::string path;
  double macs = -1;  // -1: no single figure (data-dependent detection models)
  double params = 0;
};

std::vector<Reference> shared_references() {
  std::vector<Reference> refs;
  std::ifstream readme(shared_model("README.md"));
  const std::regex row(R"(\|\s*(\S+\.onnx)\s*\|[^|]*\|[^|]*\|\s*([0-9]+|n/a)\s*\|\s*([0-9]+)\s*\|)");
  std::string line;
  std::smatch m;
  while (std::getline(readme, line))
    if (std::regex_search(line, m, row))
      refs.push_back({shared_model(m[1]), m[2] == "n/a" ? -1 : std::stod(m[2]), std::stod(m[3])});
  return refs;
}

std::vector<Reference> unseen_references() {
  const std::string dir = std::string(MODELCOST_SOURCE_DIR) + "/tests/models/unseen/";
  std::ifstream in(dir + "references.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  std::vector<Reference> refs;
  for (auto it = all.begin(); it != all.end(); ++it) {
    const nlohmann::json& macs = it.value().at("reference_macs");
    refs.push_back({dir + it.key(), macs.is_null() ? -1.0 : macs.get<double>(),
                    it.value().at("float_initializer_elements").get<double>()});
  }
  return refs;
}

void check(const Reference& ref) {
  SCOPED_TRACE(ref.path);
  ShapeOptions options;
  options.dims = {{"batch", 1}, {"seq", 128}};
  auto run = analyse_file(ref.path, options);
  const Totals& t = run->analysis.totals;
  EXPECT_EQ(t.unshaped_nodes, 0u);
  EXPECT_EQ(t.uncosted_nodes, 0u);
  EXPECT_LE(std::fabs(t.params - ref.params), 0.001 * ref.params) << "params " << t.params << " vs " << ref.params;
  if (ref.macs > 0) EXPECT_LE(std::fabs(t.macs - ref.macs), 0.01 * ref.macs) << "macs " << t.macs << " vs " << ref.macs;
  // Every total is the sum of its nodes (params aside: shared weights count once).
  double flops = 0, macs = 0;
  for (const auto& n : run->analysis.nodes) { flops += n.cost.flops; macs += n.cost.macs; }
  EXPECT_DOUBLE_EQ(flops, t.flops);
  EXPECT_DOUBLE_EQ(macs, t.macs);
  EXPECT_GE(t.flops, 2 * t.macs);
}

}  // namespace

TEST(ReferenceModels, SharedModelsMatchTheirReferences) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  const auto refs = shared_references();
  ASSERT_GE(refs.size(), 10u) << "could not read the reference table";
  for (const auto& ref : refs) check(ref);
}

TEST(ReferenceModels, UnseenModelsMatchTheirReferences) {
  const auto refs = unseen_references();
  ASSERT_GE(refs.size(), 20u);
  for (const auto& ref : refs) check(ref);
}

TEST(ReferenceModels, BatchScalesConvNetMacsLinearly) {
  ShapeOptions options;
  options.dims = {{"batch", 8}};
  auto run = analyse_file(std::string(MODELCOST_SOURCE_DIR) + "/samples/resnet50.onnx", options);
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 8.0 * 4089184256.0);
  EXPECT_EQ(run->tensor("input").shape, (Shape{8, 3, 224, 224}));
}

TEST(ReferenceModels, DetectionModelMarksDataDependentSizesAsEstimates) {
  if (!shared_models_present()) GTEST_SKIP() << "../shared/models not present";
  auto run = analyse_file(shared_model("ssdlite320_mobilenet_v3_large_op17.onnx"));
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
  EXPECT_GT(run->analysis.totals.estimated_nodes, 0u);
  bool nonzero_estimated = false;
  for (const auto& n : run->analysis.nodes)
    if (n.node->op_type == "NonZero" && n.cost.estimate) nonzero_estimated = true;
  EXPECT_TRUE(nonzero_estimated);
}

}  // namespace modelcost::testing
