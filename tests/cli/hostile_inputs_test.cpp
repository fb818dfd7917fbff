// Hostile inputs other than a model file, each run by the CLI in a child process under the
// hostile-graph limits (child_run.h): `modelcost llm` on decoders of hostile head and KV
// geometry (fuzz/decoder_graph.h), --ops rules files with hostile formulas, and option values
// that are NaN, infinite, out of range, or files that never end or never open.
#include <sys/stat.h>

#include <cmath>
#include <string>
#include <vector>

#include "../../fuzz/decoder_graph.h"
#include "../../fuzz/user_rules_model.h"
#include "cli/child_run.h"

namespace modelcost::testing {
namespace {

using fuzzing::AttentionForm;
using fuzzing::DecoderSpec;

struct LlmCase {
  std::string name;
  DecoderSpec spec;
};
void PrintTo(const LlmCase& c, std::ostream* out) { *out << c.name; }

std::vector<LlmCase> llm_cases() {
  std::vector<LlmCase> cases;
  const std::vector<std::pair<std::string, int64_t>> magnitudes = {
      {"0", 0}, {"minus_1", -1}, {"2p31", int64_t{1} << 31}, {"2p50_plus_1", (int64_t{1} << 50) + 1}, {"2p62", int64_t{1} << 62}};
  const std::vector<std::pair<std::string, AttentionForm>> forms = {
      {"gqa", AttentionForm::kGroupQuery}, {"mha", AttentionForm::kMultiHead}, {"onnx", AttentionForm::kOnnxAttention}};
  for (const auto& [form_name, form] : forms)
    for (const auto& [at, v] : magnitudes) {
      DecoderSpec s;
      s.form = form;
      s.kv_heads = v;
      cases.push_back({form_name + "_kv_heads_" + at, s});
      s = DecoderSpec{};
      s.form = form;
      s.heads = v;
      cases.push_back({form_name + "_heads_" + at, s});
      s = DecoderSpec{};
      s.form = form;
      s.cache_heads = v;
      cases.push_back({form_name + "_cache_heads_" + at, s});
      s = DecoderSpec{};
      s.form = form;
      s.head_dim = v;
      cases.push_back({form_name + "_head_dim_" + at, s});
    }
  DecoderSpec zero_head;
  zero_head.head_dim = zero_head.cache_head_dim = 0;
  cases.push_back({"gqa_head_size_0_rotary", zero_head});
  return cases;
}

class HostileLlm : public ::testing::TestWithParam<LlmCase> {};

TEST_P(HostileLlm, EndsInAPlanOrOneLineError) {
  TempDir dir;
  const std::string model = dir.file("decoder.onnx");
  write_text(model, fuzzing::decoder_model_bytes(GetParam().spec));
  const ChildRun run = run_child_args(dir, {"llm", model, "--gpu", "h100-sxm", "--json", dir.file("plan.json")});
  std::printf("%-36s exit %d  %.2f s CPU  %ld MB  %s", GetParam().name.c_str(), run.code, run.cpu_seconds,
              run.peak_rss_kb / 1024, run.err.substr(0, 300).c_str());
  expect_clean(GetParam().name, run);
}

INSTANTIATE_TEST_SUITE_P(Decoders, HostileLlm, ::testing::ValuesIn(llm_cases()),
                         [](const ::testing::TestParamInfo<LlmCase>& info) { return info.param.name; });

// ---- rules files ----
struct RulesCase {
  std::string name;
  std::string toml;
  bool must_fail;  // an error is the only right answer (a report would be a silent wrong number)
};
void PrintTo(const RulesCase& c, std::ostream* out) { *out << c.name; }

std::string rule_with(const std::string& key, const std::string& formula) {
  return "[[op]]\ndomain = \"com.fuzz\"\ntype = \"A\"\n" + key + " = \"" + formula + "\"\n";
}

std::string repeated(const std::string& term, const std::string& op, size_t count) {
  std::string text = term;
  for (size_t i = 1; i < count; ++i) text += op + term;
  return text;
}

std::vector<RulesCase> rules_cases() {
  std::vector<RulesCase> cases;
  for (size_t terms : {1000, 20000, 200000}) {
    cases.push_back({"sum_of_" + std::to_string(terms), rule_with("macs", repeated("in0[0]", "+", terms)), terms > 1000});
    cases.push_back({"product_of_" + std::to_string(terms), rule_with("macs", repeated("2", "*", terms)), terms > 1000});
    cases.push_back({"negations_" + std::to_string(terms), rule_with("macs", std::string(terms, '-') + "1"), true});
    cases.push_back({"parentheses_" + std::to_string(terms), rule_with("macs", std::string(terms, '(') + "1" + std::string(terms, ')')), true});
  }
  for (const char* literal : {"1e999", "1e-400", "1e309"})
    cases.push_back({std::string("literal_") + literal, rule_with("macs", literal), true});
  for (const char* name : {"in0[abc]", "in99999999999999999999[0]", "in0[99999999999999999999]", "in[0]", "inx.rank", "out[-]"})
    cases.push_back({std::string("name_") + name, rule_with("macs", name), true});
  const std::string dims = "[[op]]\ndomain = \"com.fuzz\"\ntype = \"A\"\ndims = [\"";
  cases.push_back({"dim_1e300", dims + "1e300\"]\n", true});
  cases.push_back({"dim_2p62_attribute", dims + "attr.big * 4\"]\n", true});
  cases.push_back({"dim_inf_attribute", dims + "attr.inf\"]\n", true});
  cases.push_back({"macs_nan", rule_with("macs", "attr.inf - attr.inf"), true});
  cases.push_back({"flops_per_output_nan", "[[op]]\ndomain = \"com.fuzz\"\ntype = \"A\"\nflops_per_output = nan\n", true});
  for (auto& c : cases) {
    for (char& ch : c.name)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return cases;
}

class HostileRules : public ::testing::TestWithParam<RulesCase> {};

TEST_P(HostileRules, EndInAReportOrOneLineError) {
  TempDir dir;
  const std::string model = dir.file("custom.onnx"), rules = dir.file("rules.toml");
  write_text(model, fuzzing::custom_ops_model_bytes());
  write_text(rules, GetParam().toml);
  const ChildRun run = run_child_args(dir, {model, "--ops", rules});
  std::printf("%-36s exit %d  %.2f s CPU  %ld MB  %s", GetParam().name.c_str(), run.code, run.cpu_seconds,
              run.peak_rss_kb / 1024, run.err.substr(0, 300).c_str());
  expect_clean(GetParam().name, run);
  EXPECT_EQ(run.err.find("internal error"), std::string::npos) << run.err;
  if (GetParam().must_fail) EXPECT_NE(run.code, 0);
}

INSTANTIATE_TEST_SUITE_P(Formulas, HostileRules, ::testing::ValuesIn(rules_cases()),
                         [](const ::testing::TestParamInfo<RulesCase>& info) { return info.param.name; });

// ---- option values ----
TEST(HostileOptions, NonFiniteAndOutOfRangeNumbersAreRefusedAtParse) {
  TempDir dir;
  const std::string model = dir.file("decoder.onnx");
  write_text(model, fuzzing::decoder_model_bytes(DecoderSpec{}));
  for (const char* value : {"nan", "inf", "-inf", "1e308", "-1"}) {
    const ChildRun run = run_child_args(dir, {"llm", model, "--gpu", "h100-sxm", "--workspace-gb", value});
    expect_clean(value, run);
    EXPECT_EQ(run.code, 2) << value << ": " << run.err;
  }
  for (const char* option : {"--tpot-slo-ms", "--ttft-slo-ms", "--target-tokens-per-s"}) {
    const ChildRun run = run_child_args(dir, {"llm", model, "--gpu", "h100-sxm", option, "inf"});
    EXPECT_EQ(run.code, 2) << option << ": " << run.err;
  }
  const ChildRun run = run_child_args(dir, {"llm", model, "--gpu", "h100-sxm", "--prompt", "9223372036854775807"});
  EXPECT_EQ(run.code, 2) << run.err;
}

TEST(HostileOptions, RulesFilesMustBeSmallRegularFiles) {
  TempDir dir;
  const std::string model = dir.file("custom.onnx"), fifo = dir.file("rules.fifo"), big = dir.file("big.toml");
  write_text(model, fuzzing::custom_ops_model_bytes());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  write_text(big, "# " + std::string(5 << 20, 'x') + "\n");
  for (const std::string& rules : {std::string("/dev/zero"), fifo, big, dir.path()}) {
    const ChildRun run = run_child_args(dir, {model, "--ops", rules});
    expect_clean(rules, run);
    if (rules != dir.path()) EXPECT_EQ(run.code, 2) << rules << ": " << run.err;
  }
}

}  // namespace
}  // namespace modelcost::testing
