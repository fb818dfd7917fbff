// libFuzzer target: one input is one model file, analysed through the command line's own entry
// (load, shapes, costs, terminal table, CSV and JSON reports). A failure must be an
// `modelcost: error:` line with exit 2-6; a signal, a sanitizer report, an uncaught exception
// or an "internal error" (an exception no stage meant to throw) stops the fuzzer.
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelcost::fuzzing;
  static const std::string model = scratch_path(".onnx"), csv = scratch_path(".csv"), json = scratch_path(".json");
  write_file(model, reinterpret_cast<const char*>(data), size);
  run_cli_expecting_a_clean_end({model, "--csv", csv, "--json", json, "--by-op"});
  return 0;
}
