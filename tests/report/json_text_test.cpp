// The JSON text writer against nlohmann's dump(): byte for byte, whatever the values.
#include "report/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "modelcost/graph.h"
#include "report/number_format.h"
#include "report/report_fixtures.h"

namespace modelcost::testing {
namespace {

std::string text_of(const std::function<void(JsonText&)>& write) {
  std::string out;
  JsonText json(out);
  write(json);
  return out;
}

TEST(ReportJsonText, StringsMatchDump) {
  for (const std::string s : {std::string("plain"), std::string(""), std::string("q\"uote"), std::string("back\\slash"),
                              std::string("tab\tnew\nline\x01\x1f"), std::string("caf\xc3\xa9 \xe6\x97\xa5"),
                              std::string("bad\xff\xfe utf8"), std::string("cut \xc3"), std::string("del\x7f")})
    EXPECT_EQ(text_of([&](JsonText& j) { j.string(s); }), compact_json(Json(s))) << s;
}

TEST(ReportJsonText, NumbersMatchJsonNumberDump) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, 1.0, -7.0, 4089184256.0, 0.1, 1.0 / 3, -2.5e-7, 1e15, 1e16, 9007199254740992.0,
                   std::ldexp(1.0, 93), 123456.789, 5e-324, inf, -inf, std::nan("")})
    EXPECT_EQ(text_of([&](JsonText& j) { j.number(v); }), compact_json(json_number(v))) << v;
  EXPECT_EQ(text_of([](JsonText& j) { j.integer(-42); }), "-42");
}

// Each node line of the report as the tree-building writer wrote it before.
TEST(ReportJsonText, NodeLinesMatchTheDumpOfEachNodesTree) {
  auto run = hand_costed_run();
  const_cast<Node*>(run->analysis.nodes[0].node)->name = "odd \"name\"\t\x01 caf\xc3\xa9 \xff";
  run->analysis.nodes[1].cost.flops = 1.0 / 3;
  run->analysis.nodes[1].cost.bytes_read = std::nan("");
  const Report report = build_report(run->analysis, "test");
  std::ostringstream out;
  write_json(report, out);
  const std::string text = out.str();
  for (size_t row = 0; row < run->analysis.nodes.size(); ++row) {
    const NodeAnalysis& n = run->analysis.nodes[row];
    Json node = Json::object();
    for (const auto& c : report.columns) {
      if (!(c.sinks & kSinkJson)) continue;
      if (c.name != "outputs") {
        node[c.name] = cell_json(c.value(n, row));
        continue;
      }
      Json outputs = Json::array();
      for (int id : n.node->outputs) {
        const TensorInfo& t = n.graph->tensors[id];
        outputs.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}});
      }
      node["outputs"] = outputs;
    }
    const std::string line = "    " + compact_json(node) + (row + 1 < run->analysis.nodes.size() ? ",\n" : "\n");
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin\n" << text;
  }
}

}  // namespace
}  // namespace modelcost::testing
