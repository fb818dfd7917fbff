// Loads a decoder export at the recognition probe's dims and recognises it. Header-only.
#pragma once
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "load/model_loader.h"
#include "modelcost/llm.h"
#include "test_support.h"

namespace modelcost::testing {

inline std::string llm_export(const std::string& name) {
  return std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/" + name + ".onnx";
}

// tests/models/llm/expected.json: the configuration each export was made from and its stored
// weight bytes summed by onnx (tests/models/llm/make_llm_exports.py).
inline nlohmann::json llm_expected(const std::string& name) {
  std::ifstream in(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/llm/expected.json");
  return nlohmann::json::parse(in).at(name);
}

struct Recognised {
  std::unique_ptr<AnalysisRun> run;
  DecoderModel model;
};

inline Recognised recognise_file(const std::string& path, const RecognitionProbe& probe = {}) {
  ShapeOptions options;
  const Model model = load_model(path);
  for (const auto& [name, value] : probe_dims(model, probe)) options.dims[name] = value;
  Recognised r;
  r.run = analyse_file(path, options);
  r.model = recognise_decoder(r.run->analysis);
  return r;
}

// A device with round figures and no launch overhead, so times are easy to check by hand.
inline Device test_device(double memory_gb = 80) {
  Device d = make_custom_device(1000, 2000, memory_gb, 0);
  d.id = "test";
  d.name = "test device";
  return d;
}

}  // namespace modelcost::testing
