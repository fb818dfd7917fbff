// libFuzzer target for `modelcost llm`: the input's bytes choose a decoder's geometry (head and KV
// head counts, head sizes, widths, the attention op; fuzz/decoder_graph.h), which is built,
// recognised and planned through the command line's own entry. Hostile values (0, -1, 2^62,
// counts that disagree) must end in a plan or one clean error line, as in fuzz_model.cpp.
#include <cstdint>

#include "decoder_graph.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace modelcost::fuzzing;
  static const std::string model = scratch_path("-llm.onnx"), json = scratch_path("-llm.json");
  const std::string bytes = decoder_model_bytes(decoder_spec_from_bytes(data, size));
  write_file(model, bytes.data(), bytes.size());
  // The last byte, when there is one past the spec, picks the cache precision and TP degree.
  const uint8_t extra = size > 12 ? data[12] : 0;
  const std::string kv = (extra & 1) ? "fp8" : "fp16", tp = std::to_string(1 + (extra >> 1) % 4);
  run_cli_expecting_a_clean_end({"llm", model, "--gpu", "h100-sxm", "--kv-cache", kv, "--tp", tp, "--json", json, "-q"});
  return 0;
}
