// The report kinds a person reads, end to end: every --gpu device carried through, the plan's own
// batch sweep and price, --by-module, --html and `diff`, on the sample and the shared models.
#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_runner.h"
#include "modelcost/errors.h"
#include "report/report.h"

namespace modelcost::testing {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Json run_json(const std::string& args, const TempDir& dir) {
  const CliResult r = run_modelcost(args + " -q --json " + dir.file("r.json"));
  EXPECT_EQ(r.code, 0) << r.err;
  return Json::parse(read_text(dir.file("r.json")));
}

TEST(CliReports, EveryDeviceIsCarriedThroughColumnsPlanAndSvg) {
  TempDir dir;
  const std::string svg = dir.file("r.svg"), csv = dir.file("r.csv");
  const Json j = run_json(sample_model() + " --gpu a100,h100,l4 --batch 1,8 --roofline-svg " + svg + " --csv " + csv, dir);
  ASSERT_EQ(j["plans"].size(), 3u);
  EXPECT_EQ(j["plans"][2]["device"], "l4");
  EXPECT_EQ(j["plan"], j["plans"][0]);
  EXPECT_TRUE(j["nodes"][1].contains("predicted_us@h100-sxm")) << j["nodes"][1].dump();
  EXPECT_TRUE(j["nodes"][1].contains("bound@l4"));
  EXPECT_GT(j["totals"]["predicted_latency_ms@l4"].get<double>(), j["totals"]["predicted_latency_ms@h100-sxm"].get<double>());
  const std::string header = read_text(csv).substr(0, read_text(csv).find('\r'));
  EXPECT_NE(header.find(",predicted_us@h100-sxm,"), std::string::npos) << header;
  const std::string plot = read_text(svg);
  EXPECT_EQ(count(plot, "<svg "), 4u);  // the document and one panel per device
  EXPECT_NE(plot.find("on L4, fp32"), std::string::npos);
  const CliResult terminal = run_modelcost(sample_model() + " --gpu a100,h100 --batch 1,8");
  EXPECT_NE(terminal.out.find("Capacity plan on 2 devices"), std::string::npos) << terminal.out;
  EXPECT_NE(terminal.out.find("us h100-sxm"), std::string::npos);
}

TEST(CliReports, PlanSweepsBatchesForATargetWithoutABatchList) {
  TempDir dir;
  const Json plan = run_json(sample_model() + " --gpu h100 --target-qps 3000 --latency-slo-ms 20 --price-per-hour 4.5", dir)["plan"];
  EXPECT_TRUE(plan["swept"].get<bool>());
  // fp32 on the CUDA cores: batch 1 alone needs four H100s; the sweep finds a batch that needs one, within the SLO.
  EXPECT_EQ(plan["devices_needed"], 1);
  EXPECT_GT(plan["best"]["batch"].get<int>(), 1);
  std::vector<int> batches;
  for (const auto& row : plan["rows"]) batches.push_back(row["batch"].get<int>());
  EXPECT_EQ(std::vector<int>(batches.begin(), batches.begin() + 4), (std::vector<int>{1, 2, 4, 8}));
  // The largest batch within the SLO is a row, and the next one up misses it.
  int largest_within = 0;
  for (const auto& row : plan["rows"])
    if (row["meets_slo"].get<bool>()) largest_within = std::max(largest_within, row["batch"].get<int>());
  const CliResult probe = run_modelcost(sample_model() + " --gpu h100 --batch " + std::to_string(largest_within + 1) +
                                        " --latency-slo-ms 20 -q --json " + dir.file("p.json"));
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_FALSE(Json::parse(read_text(dir.file("p.json")))["plan"]["rows"][0]["meets_slo"].get<bool>()) << largest_within;
  // The price fills the cost column: 4.5 USD/h over the throughput.
  const Json& best = plan["best"];
  EXPECT_NEAR(best["cost_per_million_usd"].get<double>(), 4.5 / 3600 / best["throughput_per_s"].get<double>() * 1e6, 1e-9);
  const CliResult terminal = run_modelcost(sample_model() + " --gpu h100 --target-qps 6000 --latency-slo-ms 20 --top 0");
  EXPECT_NE(terminal.out.find("meets SLO"), std::string::npos) << terminal.out;
  EXPECT_NE(terminal.out.find("batches swept"), std::string::npos);
}

TEST(CliReports, PricesMustMatchTheDevices) {
  const CliResult r = run_modelcost(sample_model() + " --gpu a100,h100 --price-per-hour 2");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("one price per --gpu device (2), got 1"), std::string::npos) << r.err;
}

TEST(CliReports, ByModuleSumsEveryNodeOnce) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const Json j = run_json(shared_model("resnet50_op13.onnx") + " --by-module 1", dir);
  double flops = 0;
  size_t nodes = 0;
  std::vector<std::string> modules;
  for (const auto& row : j["by_module"]) {
    flops += row["flops"].get<double>();
    nodes += row["count"].get<size_t>();
    modules.push_back(row["module"]);
  }
  EXPECT_EQ(flops, j["totals"]["flops"].get<double>());
  EXPECT_EQ(nodes, j["nodes"].size());
  EXPECT_NE(std::find(modules.begin(), modules.end(), "/layer3"), modules.end());
  EXPECT_EQ(std::find(modules.begin(), modules.end(), "/layer3/layer3.0"), modules.end());  // depth 1 only
  EXPECT_EQ(j["nodes"][50]["module"].get<std::string>().rfind("/layer", 0), 0u) << j["nodes"][50].dump();
  const CliResult terminal = run_modelcost(shared_model("bert_base_op17.onnx") + " --by-module 2 --top 0");
  ASSERT_EQ(terminal.code, 0) << terminal.err;
  EXPECT_NE(terminal.out.find("By module (depth 2"), std::string::npos) << terminal.out;
  EXPECT_NE(terminal.out.find("/inner/encoder "), std::string::npos) << terminal.out;
}

TEST(CliReports, HtmlIsOneSelfContainedPage) {
  TempDir dir;
  const std::string html_path = dir.file("r.html");
  const CliResult r = run_modelcost(sample_model() + " --gpu a100 --batch 1,8 --by-module 1 -q --html " + html_path);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_text(html_path);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"<link", "src=", "href=", "@import", "url("}) EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find("<table id=\"nodes\" class=\"sortable\">"), std::string::npos);
  // Every node is in the embedded data (resnet50 has 169; its 47 Identity and 1 Flatten cost nothing).
  const size_t data = html.find("<script type=\"application/json\" id=\"node-data\">");
  ASSERT_NE(data, std::string::npos);
  const size_t from = html.find('>', data) + 1;
  const Json nodes = Json::parse(html.substr(from, html.find("</script>", from) - from));
  EXPECT_EQ(nodes["rows"].size(), 169u);
  EXPECT_EQ(nodes["zero"], 48);
  EXPECT_NE(html.find("<svg xmlns"), std::string::npos);
  EXPECT_NE(html.find("<h2>Capacity plan</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>By module</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<pre>"), std::string::npos) << "sections are tables, not terminal text";
  EXPECT_NE(html.find("<script>"), std::string::npos);
}

TEST(CliReports, HtmlRendersAndSortsInHeadlessChromium) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) GTEST_SKIP() << "chromium not installed";
  TempDir dir;
  const std::string html_path = dir.file("r.html");
  ASSERT_EQ(run_modelcost(sample_model() + " --gpu a100 -q --html " + html_path).code, 0);
  // A click on the FLOPs header sorts the table; the DOM after the script ran tells.
  std::string html = read_text(html_path);
  html.insert(html.rfind("</body>"),
              "<script>document.querySelector('#nodes th[title^=\"flops\"]').click();"
              "document.body.dataset.first=document.querySelector('#nodes tbody tr').cells[1].textContent;</script>");
  write_text(html_path, html);
  const std::string dom = dir.file("dom.html");
  const std::string command = "timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom file://" + html_path + " >" + dom +
                              " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string rendered = read_text(dom);
  EXPECT_NE(rendered.find("data-ready=\"1\""), std::string::npos) << rendered.substr(0, 400);
  // Sorted by FLOPs, descending: the heaviest conv (of the first, 7x7 stem, or a 3x3) comes first.
  std::smatch first;
  ASSERT_TRUE(std::regex_search(rendered, first, std::regex("data-first=\"([^\"]*)\""))) << rendered.substr(0, 400);
  EXPECT_NE(first[1].str().find("Conv"), std::string::npos) << first[1];
}

TEST(CliReports, DiffOfAModelWithItselfIsAllZero) {
  TempDir dir;
  const std::string csv = dir.file("d.csv");
  const Json d = run_json("diff " + sample_model() + " " + sample_model() + " --gpu a100 --csv " + csv, dir);
  EXPECT_EQ(d["matching"]["by_name"], 169);
  EXPECT_EQ(d["matching"]["removed"], 0);
  EXPECT_EQ(d["totals"]["flops"]["delta"], 0);
  EXPECT_EQ(d["totals"]["predicted_us"]["delta"], 0);
  EXPECT_EQ(count(read_text(csv), "\r\n"), 170u);  // header + one row per node
}

TEST(CliReports, DiffMatchesTwoExportsByStructure) {
  if (!shared_models_present()) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const Json d = run_json("diff " + shared_model("resnet50_op13.onnx") + " " + shared_model("resnet50_op18.onnx") + " --gpu a100", dir);
  // The two exporters name nodes differently: every conv is matched by its shapes.
  EXPECT_EQ(d["matching"]["by_name"], 0);
  EXPECT_GE(d["matching"]["by_structure"].get<int>(), 53 + 49 + 16);
  EXPECT_EQ(d["totals"]["macs"]["delta"], 0);
  for (const auto& op : d["by_op_type"])
    if (op["op_type"] == "Conv") {
      EXPECT_EQ(op["count_a"], 53);
      EXPECT_EQ(op["count_b"], 53);
      EXPECT_EQ(op["macs"]["delta"], 0);
    }
  const CliResult terminal = run_modelcost("diff " + shared_model("resnet18_op13.onnx") + " " + shared_model("resnet50_op13.onnx") +
                                           " --gpu a100 --top 5");
  ASSERT_EQ(terminal.code, 0) << terminal.err;
  EXPECT_TRUE(std::regex_search(terminal.out, std::regex("MACs +1.81 G +4.09 G +[+]2.28 G +[+]125.4%"))) << terminal.out;
  EXPECT_NE(terminal.out.find("added"), std::string::npos);
}

TEST(CliReports, DiffNeedsTwoModels) {
  const CliResult r = run_modelcost("diff " + sample_model());
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace modelcost::testing
