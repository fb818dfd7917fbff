#include "report/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_registry.h"
#include "report/number_format.h"
#include "report/report_fixtures.h"

namespace modelcost::testing {
namespace {

std::vector<std::string> keys(const Json& object) {
  std::vector<std::string> names;
  for (const auto& item : object.items()) names.push_back(item.key());
  return names;
}

TEST(ReportJson, TopLevelModelAndTotalsFields) {
  auto run = hand_costed_run();
  const Json json = json_of(build_report(run->analysis, "9.9.9"));
  EXPECT_EQ(keys(json), (std::vector<std::string>{"modelcost_version", "model", "totals", "nodes", "by_op_type",
                                                  "warnings"}));
  EXPECT_EQ(json["modelcost_version"], "9.9.9");
  const Json& model = json["model"];
  EXPECT_EQ(model["path"], "test-model");
  EXPECT_EQ(model["producer"], "modelcost-tests");
  EXPECT_EQ(model["ir_version"], 8);
  EXPECT_EQ(model["opsets"]["ai.onnx"], 17);
  ASSERT_EQ(model["inputs"].size(), 1u);
  EXPECT_EQ(model["inputs"][0]["name"], "x");
  EXPECT_EQ(model["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(model["inputs"][0]["shape"], Json::parse("[1,8]"));
  EXPECT_EQ(keys(json["totals"]),
            (std::vector<std::string>{"macs", "flops", "params", "bytes_read", "bytes_written", "arithmetic_intensity",
                                      "nodes", "unshaped_nodes", "uncosted_nodes", "estimated_nodes"}));
  EXPECT_EQ(json["totals"]["macs"], 192);
  EXPECT_EQ(json["totals"]["bytes_read"], 928);
  EXPECT_EQ(json["totals"]["bytes_written"], 144);
  EXPECT_EQ(json["totals"]["arithmetic_intensity"].get<double>(), 400.0 / 1072.0);
  EXPECT_EQ(json["warnings"], Json::parse(R"(["a test warning"])"));
}

TEST(ReportJson, NodeFields) {
  auto run = hand_costed_run();
  const Json json = json_of(build_report(run->analysis, "test"));
  ASSERT_EQ(json["nodes"].size(), 3u);
  const Json& fc1 = json["nodes"][0];
  EXPECT_EQ(keys(fc1), (std::vector<std::string>{"name", "op_type", "domain", "macs", "flops", "params", "bytes_read",
                                                 "bytes_written", "arithmetic_intensity", "outputs", "estimate",
                                                 "known"}));
  EXPECT_EQ(fc1["name"], "fc1");
  EXPECT_EQ(fc1["op_type"], "MatMul");
  EXPECT_EQ(fc1["domain"], "");
  EXPECT_EQ(fc1["macs"], 128);
  EXPECT_EQ(fc1["flops"], 256);
  EXPECT_EQ(fc1["params"], 128);
  EXPECT_EQ(fc1["bytes_read"], 544);
  EXPECT_EQ(fc1["bytes_written"], 64);
  EXPECT_EQ(fc1["outputs"], Json::parse(R"([{"name":"h","dtype":"float32","shape":[1,16]}])"));
  EXPECT_EQ(fc1["estimate"], false);
  EXPECT_EQ(fc1["known"], true);
  EXPECT_EQ(json["nodes"][2]["name"], kLastNodeName);
}

TEST(ReportJson, ByOpTypeSumsAndShares) {
  auto run = hand_costed_run();
  const Json rows = json_of(build_report(run->analysis, "test"))["by_op_type"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["op_type"], "MatMul");  // heaviest first
  EXPECT_EQ(rows[0]["count"], 2);
  EXPECT_EQ(rows[0]["macs"], 192);
  EXPECT_EQ(rows[0]["flops"], 384);
  EXPECT_EQ(rows[0]["bytes_read"], 864);
  EXPECT_EQ(rows[0]["share_of_flops"].get<double>(), 384.0 / 400.0);
  EXPECT_EQ(rows[1]["op_type"], "Relu");
  EXPECT_EQ(rows[1]["flops"], 16);
  EXPECT_EQ(rows[1]["share_of_flops"].get<double>(), 16.0 / 400.0);
}

TEST(ReportJson, HugeCountsPrintExactlyNeverWrapped) {
  auto run = hand_costed_run();
  const double macs = std::ldexp(1.0, 93);  // [2^31 x 2^31] x [2^31 x 2^31]
  run->analysis.nodes[0].cost.macs = macs;
  run->analysis.nodes[0].cost.flops = 2 * macs;
  run->analysis.totals.macs = macs + 64;  // 64 is below the double's resolution there
  const Report report = build_report(run->analysis, "test");
  const std::string text = [&] {
    std::ostringstream out;
    write_json(report, out);
    return out.str();
  }();
  EXPECT_NE(text.find("\"macs\": 9.903520314283042e+27"), std::string::npos) << text;  // totals
  EXPECT_NE(text.find("\"macs\":9.903520314283042e+27"), std::string::npos) << text;   // the node's line
  EXPECT_EQ(text.find(":-"), std::string::npos) << text;  // no negative number anywhere
  EXPECT_EQ(text.find(": -"), std::string::npos) << text;
  const Json json = Json::parse(text);
  EXPECT_EQ(json["nodes"][0]["macs"].get<double>(), macs);
  EXPECT_EQ(json["nodes"][0]["flops"].get<double>(), 2 * macs);
  EXPECT_EQ(json["totals"]["macs"].get<double>(), macs);
  EXPECT_EQ(json["nodes"][2]["macs"], 64);  // small counts stay integers
  const auto rows = parse_csv(csv_text(report));
  EXPECT_EQ(rows[1][column_index(rows[0], "macs")], "9.903520314283042e+27");
}

// The same through the real pipeline: params come from the loader (2^62 elements); macs from
// the MatMul rule once it is registered.
TEST(ReportJson, HugeMatMulModel) {
  auto run = analyse(huge_matmul_model());
  const Json json = json_of(build_report(run->analysis, "test"));
  EXPECT_EQ(json["totals"]["params"].get<double>(), std::ldexp(1.0, 62));
  EXPECT_EQ(json["nodes"][0]["params"].get<double>(), std::ldexp(1.0, 62));
  if (!OpRegistry::instance().find("", "MatMul") || !run->analysis.nodes[0].cost.known)
    GTEST_SKIP() << "MatMul has no cost rule yet; the formatting is tested by HugeCountsPrintExactlyNeverWrapped";
  EXPECT_EQ(json["nodes"][0]["macs"].get<double>(), std::ldexp(1.0, 93));
  EXPECT_EQ(json["totals"]["macs"].get<double>(), std::ldexp(1.0, 93));
  EXPECT_EQ(json["totals"]["bytes_read"].get<double>(), std::ldexp(1.0, 62) * 4 * 2);
  EXPECT_GT(json["totals"]["flops"].get<double>(), 0);
}

TEST(ReportJson, InvalidUtf8NamesDoNotFail) {
  auto run = hand_costed_run();
  const_cast<Node*>(run->analysis.nodes[0].node)->name = std::string("bad\xff\xfename");
  std::ostringstream out;
  EXPECT_NO_THROW(write_json(build_report(run->analysis, "test"), out));
  EXPECT_NO_THROW(Json::parse(out.str()));
}

TEST(ReportJson, SymbolicDeclaredDimsAreKept) {
  ModelBuilder b;
  b.input("ids", kInt64, std::vector<std::string>{"batch", "seq"});
  b.node("Identity", {"ids"}, {"y"});
  b.output("y");
  ShapeOptions options;
  options.dims["batch"] = 2;
  auto run = analyse(b, options);
  const Json input = json_of(build_report(run->analysis, "test"))["model"]["inputs"][0];
  EXPECT_EQ(input["declared_shape"], Json::parse(R"(["batch","seq"])"));
  EXPECT_EQ(input["shape"], Json::parse("[2,1]"));
  EXPECT_EQ(input["dtype"], "int64");
}

}  // namespace
}  // namespace modelcost::testing
