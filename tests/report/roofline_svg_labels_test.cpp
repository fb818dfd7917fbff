// The roofline plot's axis titles, ridge points and labels that do not overlap, on a real model.
#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_runner.h"

namespace modelcost::testing {
namespace {

struct Label {
  double x, y, width, height;
  std::string text;
};

// Node numbers (bold, 11 px) and roof/ridge labels of the plot area, with estimated boxes.
std::vector<Label> plot_labels(const std::string& svg) {
  std::vector<Label> labels;
  const std::regex text(R"re(<text x="([0-9.]+)" y="([0-9.]+)"([^>]*)>([^<]+)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[3], body = (*it)[4];
    const bool number = attributes.find("font-weight=\"bold\"") != std::string::npos && std::regex_match(body, std::regex("[0-9]+"));
    const bool roof = body.find("TFLOP/s") != std::string::npos && body.find(": ") != std::string::npos;
    const bool ridge = body.rfind("ridge ", 0) == 0;
    if (!number && !roof && !ridge) continue;
    const double size = number || ridge ? 11 : 12;
    labels.push_back({std::stod((*it)[1]), std::stod((*it)[2]), 0.6 * size * body.size(), size, body});
  }
  return labels;
}

TEST(RooflineSvgLabels, AxisTitlesRidgesAndNoOverlaps) {
  TempDir dir;
  const std::string path = dir.file("r.svg");
  const CliResult r = run_modelcost(sample_model() + " --gpu a100 --dtype fp16 -q --roofline-svg " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = read_text(path);
  EXPECT_NE(svg.find(">arithmetic intensity (FLOP/byte, log)</text>"), std::string::npos);
  EXPECT_NE(svg.find("rotate(-90"), std::string::npos);
  EXPECT_NE(svg.find(">predicted FLOP/s (log)"), std::string::npos);
  EXPECT_GE(std::count(svg.begin(), svg.end(), '\n'), 10);
  size_t ridges = 0;
  for (size_t at = svg.find("class=\"ridge\""); at != std::string::npos; at = svg.find("class=\"ridge\"", at + 1)) ++ridges;
  EXPECT_GE(ridges, 1u);
  EXPECT_NE(svg.find(">ridge "), std::string::npos);
  const std::vector<Label> labels = plot_labels(svg);
  size_t numbers = 0;
  for (const auto& l : labels) numbers += std::regex_match(l.text, std::regex("[0-9]+"));
  EXPECT_EQ(numbers, 10u);
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = i + 1; j < labels.size(); ++j) {
      const Label &a = labels[i], &b = labels[j];
      const bool apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y <= b.y - b.height || b.y <= a.y - a.height;
      EXPECT_TRUE(apart) << "'" << a.text << "' at " << a.x << "," << a.y << " overlaps '" << b.text << "' at " << b.x << "," << b.y;
    }
}

}  // namespace
}  // namespace modelcost::testing
