// The HTML report as a browser shows it: the node table opens on the costliest nodes, zero-cost
// layout nodes are one click away, and a 20,000-node model's page is small and loads fast.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "../../bench/transformer_graph.h"
#include "cli/cli_runner.h"

namespace modelcost::testing {
namespace {

bool have_chromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

// The page's DOM after its script ran, with `script` run after it.
std::string rendered_dom(const TempDir& dir, const std::string& html_path, const std::string& script) {
  std::string html = read_text(html_path);
  html.insert(html.rfind("</body>"), "<script>" + script + "</script>");
  write_text(html_path, html);
  const std::string dom = dir.file("dom.html");
  const std::string command = "timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom file://" + html_path + " >" +
                              dom + " 2>/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0);
  return read_text(dom);
}

std::string data_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  return std::regex_search(dom, m, std::regex("data-" + name + "=\"([^\"]*)\"")) ? m[1].str() : "";
}

TEST(HtmlPage, OpensOnTheCostliestNodesWithLayoutNodesCollapsed) {
  if (!have_chromium()) GTEST_SKIP() << "chromium not installed";
  TempDir dir;
  const std::string html_path = dir.file("r.html");
  ASSERT_EQ(run_modelcost(sample_model() + " --gpu a100,h100,l4 -q --html " + html_path).code, 0);
  const std::string dom = rendered_dom(dir, html_path,
      "const rows=[...document.querySelectorAll('#nodes tbody tr')];"
      "document.body.dataset.first=rows[0].cells[2].textContent;"
      "document.body.dataset.identity=rows.filter(r=>r.cells[2].textContent==='Identity').length;"
      "document.getElementById('zero').click();document.getElementById('all').click();"
      "document.body.dataset.all=document.querySelectorAll('#nodes tbody tr').length;");
  EXPECT_EQ(data_attribute(dom, "ready"), "1");
  EXPECT_EQ(data_attribute(dom, "first"), "Conv");
  EXPECT_EQ(data_attribute(dom, "identity"), "0");
  EXPECT_EQ(data_attribute(dom, "all"), "169");
}

TEST(HtmlPage, TwentyThousandNodePageIsSmallAndFast) {
  if (!have_chromium()) GTEST_SKIP() << "chromium not installed";
  TempDir dir;
  const std::string model = dir.file("big.onnx"), html_path = dir.file("big.html");
  write_text(model, bench::transformer_like(20000));
  ASSERT_EQ(run_modelcost(model + " --gpu a100 -q --html " + html_path).code, 0);
  const size_t bytes = read_text(html_path).size();
  EXPECT_LT(bytes, 4u << 20) << bytes;
  // The browser's own start, timed on an empty page, is not the page's.
  const std::string blank = dir.file("blank.html");
  write_text(blank, "<!DOCTYPE html><html><body></body></html>");
  auto seconds_to_render = [&](const std::string& page, const std::string& script) {
    const auto start = std::chrono::steady_clock::now();
    const std::string dom = rendered_dom(dir, page, script);
    return std::make_pair(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), dom);
  };
  const double browser = seconds_to_render(blank, "").first;
  const auto [seconds, dom] = seconds_to_render(html_path, "document.body.dataset.rows=document.querySelectorAll('#nodes tbody tr').length;");
  EXPECT_EQ(data_attribute(dom, "ready"), "1");
  EXPECT_EQ(data_attribute(dom, "rows"), "100");
  EXPECT_LT(seconds - browser, 3.0) << "page " << seconds << " s, empty page " << browser << " s";
}

}  // namespace
}  // namespace modelcost::testing
