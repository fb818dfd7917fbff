#include "report/csv_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "report/number_format.h"
#include "report/report_fixtures.h"

namespace modelcost::testing {
namespace {

double number(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

TEST(ReportCsv, QuotesFieldsPerRfc4180) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(ReportCsv, HeaderAndOneRowPerNode) {
  auto run = hand_costed_run();
  const Report report = build_report(run->analysis, "test");
  const std::string text = csv_text(report);
  EXPECT_EQ(text.substr(0, text.find("\r\n")),
            "name,op_type,domain,macs,flops,params,bytes_read,bytes_written,arithmetic_intensity,output_shapes,"
            "output_dtypes,estimate,known");
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"fc1", "MatMul", "", "128", "256", "128", "544", "64",
                                               exact_number(256.0 / 608.0), "1x16", "float32", "false", "true"}));
  EXPECT_EQ(rows[3][0], kLastNodeName);  // the comma and quotes survive quoting
  EXPECT_NE(text.find("\"fc2,\"\"last\"\"\""), std::string::npos);
}

TEST(ReportCsv, ColumnSumsEqualJsonTotals) {
  auto run = hand_costed_run();
  const Report report = build_report(run->analysis, "test");
  const auto rows = parse_csv(csv_text(report));
  const Json json = json_of(report);
  for (const char* column : {"macs", "flops", "params", "bytes_read", "bytes_written"}) {
    const size_t c = column_index(rows[0], column);
    double sum = 0;
    for (size_t r = 1; r < rows.size(); ++r) sum += number(rows[r][c]);
    EXPECT_EQ(sum, json["totals"][column].get<double>()) << column;
  }
  EXPECT_EQ(json["totals"]["flops"], 400);
}

// A weight read by two nodes counts in each node's params but once in the total.
TEST(ReportCsv, SharedWeightCountsOnceInTotalParams) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  b.weight("w", kFloat, {2, 3});
  b.node("Add", {"x", "w"}, {"a"});
  b.node("Add", {"a", "w"}, {"b"});
  b.output("b");
  auto run = analyse(b);
  const Report report = build_report(run->analysis, "test");
  const auto rows = parse_csv(csv_text(report));
  const size_t c = column_index(rows[0], "params");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][c], "6");
  EXPECT_EQ(rows[2][c], "6");
  EXPECT_EQ(json_of(report)["totals"]["params"], 6);  // column sum is 12
}

TEST(ReportCsv, DistinctWeightsSumToTotalParams) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3});
  b.weight("w1", kFloat, {2, 3});
  b.weight("w2", kFloat, {3});
  b.node("Add", {"x", "w1"}, {"a"});
  b.node("Add", {"a", "w2"}, {"b"});
  b.output("b");
  auto run = analyse(b);
  const Report report = build_report(run->analysis, "test");
  const auto rows = parse_csv(csv_text(report));
  const size_t c = column_index(rows[0], "params");
  EXPECT_EQ(number(rows[1][c]) + number(rows[2][c]), 9);
  EXPECT_EQ(json_of(report)["totals"]["params"], 9);
}

TEST(ReportCsv, ColumnSumsEqualJsonTotalsOnResnet50) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  ShapeOptions options;
  options.dims["batch"] = 1;
  auto run = analyse_file(shared_model("resnet50_op13.onnx"), options);
  const Report report = build_report(run->analysis, "test");
  const auto rows = parse_csv(csv_text(report));
  const Json json = json_of(report);
  ASSERT_EQ(rows.size(), json["totals"]["nodes"].get<size_t>() + 1);
  ASSERT_EQ(rows.size(), 170u);  // 169 nodes and the header
  for (const char* column : {"macs", "flops", "bytes_read", "bytes_written"}) {
    const size_t c = column_index(rows[0], column);
    double sum = 0;
    for (size_t r = 1; r < rows.size(); ++r) sum += number(rows[r][c]);
    EXPECT_EQ(sum, json["totals"][column].get<double>()) << column;
  }
  // The exporter folded equal biases into one initializer that a Conv reads and Identity nodes
  // alias for other Convs: each reader counts it, the total once (the README's figure).
  const size_t c = column_index(rows[0], "params");
  double params = 0;
  for (size_t r = 1; r < rows.size(); ++r) params += number(rows[r][c]);
  EXPECT_EQ(params, 25530472);
  EXPECT_EQ(json["totals"]["params"], 25507944);  // the README's float initializer elements
}

}  // namespace
}  // namespace modelcost::testing
