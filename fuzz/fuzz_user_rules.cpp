// libFuzzer target for user op rules (--ops FILE): one input is a rules file (TOML and its
// formulas), loaded and then applied to a fixed model whose custom ops the dictionary names
// (user_rules_model.h). Loading and analysing run the stages directly, not the command line,
// whose registry is kept per list of file names. Both must end in a result or an Error with an
// exit code of 2-6 and a message; anything else stops the fuzzer. (A message may hold a newline
// echoed from the file, e.g. TOML's parse errors quote it: the CLI prints every error as one line.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "load/model_loader.h"
#include "modelcost/analysis.h"
#include "modelcost/errors.h"
#include "ops/user_rules.h"
#include "user_rules_model.h"

namespace {

void expect_clean_error(const modelcost::Error& e) {
  const std::string what = e.what();
  if (e.code() >= 2 && e.code() <= 6 && !what.empty()) return;
  std::fprintf(stderr, "fuzz_user_rules: exit %d with: %s\n", e.code(), what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelcost;
  static const Model model = load_model_from_bytes(fuzzing::custom_ops_model_bytes(), "custom_ops.onnx");
  OpRegistry registry = OpRegistry::instance();
  try {
    load_user_op_rules_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.toml", registry);
    AnalysisOptions options;
    options.registry = &registry;
    analyze(model, options);
  } catch (const Error& e) {
    expect_clean_error(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_user_rules: internal error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
