// Predictions a planner can rank: on every shipped GPU entry and the shared models, a device at
// least as strong as another on every datasheet figure is never predicted slower, a dtype with a
// higher peak and no wider elements never slower on the same device, and the same network in
// torch's and ONNX Runtime's spelling gets the same kernel plan and prediction.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "modelcost/roofline.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

struct Network {
  const char* file;
  std::map<std::string, int64_t> dims;
};

const std::vector<Network>& networks() {
  static const std::vector<Network> all = {{"resnet50_op13.onnx", {}},
                                           {"mobilenet_v2_op13.onnx", {}},
                                           {"efficientnet_b0_op18.onnx", {}},
                                           {"vit_b_16_op17.onnx", {}},
                                           {"bert_base_op17.onnx", {{"seq", 128}}}};
  return all;
}

std::unique_ptr<AnalysisRun> analyse_network(const Network& n, int64_t batch) {
  ShapeOptions shapes;
  for (const auto& [k, v] : n.dims) shapes.dims[k] = v;
  shapes.dims["batch"] = batch;
  return analyse_file(shared_model(n.file), shapes);
}

double latency_ms(const Analysis& a, const Device& d, const std::string& dtype) {
  RooflineOptions options;
  options.dtype = dtype;
  return compute_roofline(a, d, options).latency_ms();
}

std::vector<const Device*> gpus(const HardwareDb& db) {
  std::vector<const Device*> out;
  for (const Device& d : db.devices())
    if (d.kind == "gpu") out.push_back(&d);
  return out;
}

}  // namespace

TEST(PredictionConsistency, EveryShippedGpuHasCalibratedOrDerivedKernelCurves) {
  const HardwareDb db = load_hardware_db({}, false);
  for (const Device* d : gpus(db)) {
    EXPECT_FALSE(d->achievable.kernel_curves.empty()) << d->id;
    const std::string state = calibration_state(*d);
    EXPECT_TRUE(state == "calibrated" || state.rfind("derived from ", 0) == 0) << d->id << ": " << state;
  }
}

TEST(PredictionConsistency, ADeviceDominatingAnotherIsNeverPredictedSlower) {
  if (!shared_models_present()) GTEST_SKIP() << "shared models not present";
  const HardwareDb db = load_hardware_db({}, false);
  const std::vector<const Device*> all = gpus(db);
  size_t pairs = 0;
  for (const Network& n : networks())
    for (int64_t batch : {1, 32}) {
      const auto run = analyse_network(n, batch);
      for (const std::string dtype : {"fp16", "bf16", "fp32"}) {
        std::map<const Device*, double> ms;
        for (const Device* d : all) ms[d] = latency_ms(run->analysis, *d, dtype);
        for (const Device* a : all)
          for (const Device* b : all) {
            if (a == b || !dominates(*a, *b)) continue;
            ++pairs;
            EXPECT_LE(ms[a], ms[b] * (1 + 1e-9)) << n.file << " b" << batch << " " << dtype << ": " << a->id << " "
                                                 << ms[a] << " ms vs " << b->id << " " << ms[b] << " ms";
          }
      }
    }
  EXPECT_GT(pairs, 100u);  // the rule was exercised on many pairs
}

TEST(PredictionConsistency, AFasterDtypeIsNeverPredictedSlowerOnTheSameDevice) {
  if (!shared_models_present()) GTEST_SKIP() << "shared models not present";
  const HardwareDb db = load_hardware_db({}, false);
  // (faster, slower): no wider elements, and the faster one's tensor peak at least the other's.
  const std::vector<std::pair<std::string, std::string>> pairs = {{"fp16", "fp32"}, {"bf16", "fp32"}, {"fp16", "tf32"},
                                                                  {"tf32", "fp32"}, {"fp8", "fp16"}, {"int8", "fp16"}};
  size_t checked = 0;
  for (const Network& n : networks())
    for (int64_t batch : {1, 32}) {
      const auto run = analyse_network(n, batch);
      for (const Device* d : gpus(db))
        for (const auto& [fast, slow] : pairs) {
          if (d->peak_flops(MathPath::kTensor, fast) < d->peak_flops(MathPath::kTensor, slow) ||
              !(d->peak_flops(MathPath::kTensor, fast) > 0))
            continue;
          ++checked;
          const double f = latency_ms(run->analysis, *d, fast), s = latency_ms(run->analysis, *d, slow);
          EXPECT_LE(f, s * (1 + 1e-9)) << n.file << " b" << batch << " " << d->id << ": " << fast << " " << f << " ms, "
                                       << slow << " " << s << " ms";
        }
    }
  EXPECT_GT(checked, 100u);
}

// ResNet-50 as torch exported it and as ONNX Runtime's extended optimizations saved it
// (FusedConv with the ReLU inside, scripts/models/ort_optimized.py): the same kernels, the same time.
TEST(PredictionConsistency, TorchAndOnnxRuntimeSpellingsGetTheSamePlanAndPrediction) {
  if (!shared_models_present()) GTEST_SKIP() << "shared models not present";
  const HardwareDb db = load_hardware_db({}, false);
  for (int64_t batch : {1, 32}) {
    ShapeOptions shapes;
    shapes.dims["batch"] = batch;
    const auto torch = analyse_file(shared_model("resnet50_op13.onnx"), shapes);
    const auto ort = analyse_file(std::string(MODELCOST_SOURCE_DIR) + "/tests/models/corpus/resnet50_op13_ort_extended.onnx", shapes);
    for (const Device* d : gpus(db))
      for (const std::string dtype : {"fp16", "fp32"}) {
        RooflineOptions options;
        options.dtype = dtype;
        const RooflineReport a = compute_roofline(torch->analysis, *d, options);
        const RooflineReport b = compute_roofline(ort->analysis, *d, options);
        EXPECT_EQ(a.deployed.launches, b.deployed.launches) << d->id << " b" << batch;
        std::map<KernelClass, size_t> classes_a, classes_b;
        for (const FusedGroup& g : a.fusion->groups) classes_a[g.kernel.cls] += g.launches;
        for (const FusedGroup& g : b.fusion->groups) classes_b[g.kernel.cls] += g.launches;
        EXPECT_EQ(classes_a, classes_b) << d->id << " b" << batch;
        EXPECT_NEAR(b.latency_ms() / a.latency_ms(), 1.0, 0.05)
            << d->id << " b" << batch << " " << dtype << ": torch " << a.latency_ms() << " ms, ORT " << b.latency_ms();
      }
  }
}

}  // namespace modelcost::testing
