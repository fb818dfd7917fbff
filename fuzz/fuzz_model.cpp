// libFuzzer target: one input is one model file, analysed through the command line's own entry
// (load, shapes, costs, terminal table, CSV and JSON reports). A failure must be an
// `modelcost: error:` line with exit 2-6; a signal, a sanitizer report, an uncaught exception
// or an "internal error" (an exception no stage meant to throw) stops the fuzzer.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/app.h"

namespace {

struct ScratchFiles {
  std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp");
  }();
  std::string stem = dir + "/modelcost-fuzz-" + std::to_string(getpid());
  std::string model = stem + ".onnx", csv = stem + ".csv", json = stem + ".json";
};

const ScratchFiles& scratch() {
  static const ScratchFiles files;
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScratchFiles& files = scratch();
  {
    std::ofstream model(files.model, std::ios::binary | std::ios::trunc);
    model.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string model = files.model, csv = files.csv, json = files.json;
  char name[] = "modelcost", csv_flag[] = "--csv", json_flag[] = "--json", by_op[] = "--by-op";
  char* argv[] = {name, model.data(), csv_flag, csv.data(), json_flag, json.data(), by_op, nullptr};
  std::ostringstream out, err;
  const int code = modelcost::run_app(7, argv, out, err);
  const std::string message = err.str();
  const bool clean_failure = code >= 2 && code <= 6 && message.rfind("modelcost: error: ", 0) == 0 &&
                             message.find('\n') == message.size() - 1;
  // Only the CLI's own verdict lines count: a mutated op name echoed in a warning may contain
  // any text, "out of memory" included.
  const bool internal = message.find("modelcost: error: internal error") != std::string::npos ||
                        message.find("modelcost: error: out of memory") != std::string::npos;
  if ((code != 0 && !clean_failure) || internal) {
    std::fprintf(stderr, "fuzz_model: exit %d with stderr: %s\n", code, message.c_str());
    std::abort();
  }
  return 0;
}
