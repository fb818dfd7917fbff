// The GPU measuring backend: owns the stream, the library handles and its timing state (CUPTI
// timer, wall ledger, timed choices' figures: timing/timing.h), measures nodes one at a time
// (cuda_backend.cpp), runs the whole model as a CUDA graph (model_runner.cpp) and calibrates
// the device's roofline (calibrate.cpp).
#pragma once
#include <functional>
#include <memory>
#include <unordered_map>

#include "core/runner.h"
#include "measure/host_tensor.h"
#include "modelcost/measure.h"
#include "timing/l2_flush.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost::cuda {

// Per-kernel overhead and inter-kernel gap of CUDA-graph launches (calibrate_overhead.cpp); the
// small-copy kernels use `blocks` blocks and have their traffic timed at `dram_gbps`.
void calibrate_kernel_overhead(Timing& timing, cudaStream_t stream, CalibrationResult& result, double dram_gbps, int blocks);
// calibrate's samples of the deployed LLM step's kernels (calibrate_decode.cpp), into the grid.
void calibrate_decode_kernels(cudaStream_t stream, int sms, CalibrationResult& result);
// The prefill attention's slowdown between compute-bound products (calibrate_attention_load.cpp).
void calibrate_attention_load(cudaStream_t stream, CalibrationResult& result);

// The LLM's deployed serving step timed with `timing`'s CUPTI timer (llm/step_timing.cpp).
ServingStepTiming time_serving_step(const ServingStepSpec& spec, Timing& timing);

struct PreparedGroups;  // deployed_runner.cpp

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;
  DeviceInfo device() const override { return info_; }
  NodeMeasurement measure_node(const NodeAnalysis& node, const MeasureOptions& options) override;
  void prepare_nodes(const Analysis& analysis, const MeasureOptions& options) override;
  ModelMeasurement measure_model(const Analysis& analysis, const MeasureOptions& options) override;
  CalibrationResult calibrate(const MeasureOptions& options) override;
  DeployedMeasurement measure_deployed(const Analysis& analysis, const FusionPlan& plan,
                                       const MeasureOptions& options) override;
  ServingStepTiming measure_serving_step(const ServingStepSpec& spec) override { return time_serving_step(spec, timing_); }
  std::vector<std::pair<std::string, double>> wall_breakdown() const override;

  CudaContext& context() { return context_; }
  Timing& timing() { return timing_; }
  // Runs a node once on the given inputs and returns its outputs (tests compare them with the
  // CPU reference). Throws Error when the node has no GPU runner.
  std::vector<HostTensor> run_once(const NodeSpec& spec, const std::vector<HostTensor>& inputs);
  // One run of this runner (of one of the spec's strategies) on these inputs.
  std::vector<HostTensor> run_with(OperatorRunner& runner, const NodeSpec& spec, const std::vector<HostTensor>& inputs);

 private:
  SampleConfig sample_config(const MeasureOptions& options) const;
  // The context every node is measured in: channels-last fp16/bf16, the options' dtype and autotuning.
  void set_node_context(const MeasureOptions& options);
  // The deployed view's groups, each timed alone (deployed_runner.cpp).
  void time_groups(const PreparedGroups& prepared, const MeasureOptions& options, DeployedMeasurement& result);
  // calibrate's grid of library kernels (calibrate_library.cpp): one call's timings into `sample`;
  // false when no runner takes the spec.
  void calibrate_library_kernels(CalibrationResult& result);
  bool time_library_call(const NodeSpec& spec, LibraryKernelSample& sample);
  // A depthwise grid call's spec (its buffers prepared by time_library_call) as cuDNN's graph of
  // the conv, its bias and a SiLU: kept in `sample` where faster.
  void time_depthwise_with_silu(const NodeSpec& spec, LibraryKernelSample& sample);
  // A prepared grid call's timings: CUPTI durations warm and with only `first` in L2, and the
  // time per call in a CUDA graph. False when no kernel ran.
  bool time_grid_call(const std::function<void(cudaStream_t)>& launch, const DeviceTensor& first,
                      LibraryKernelSample& sample);
  // The attention part of the grid (calibrate_attention.cpp): the flash-attention kernel the
  // deployed view runs, on generic head counts, lengths and head dims.
  void calibrate_attention_kernels(std::vector<LibraryKernelSample>& samples);
  // --counters: DRAM bytes and executed FLOPs of one more launch (range_profiler.h); on failure
  // only counters_reason is set.
  void add_counters(NodeMeasurement& m, const std::function<void(cudaStream_t)>& launch);
  L2Flush& l2_flush();

  // First: constructed before the context that points to it, destroyed after everything that
  // times (the runners' choices in context_ included).
  Timing timing_;
  DeviceInfo info_;
  CudaContext context_;
  std::unique_ptr<L2Flush> flush_;
  std::vector<DeviceBuffer> slots_;  // reused node buffers: inputs first, then outputs
  // Each measured node's figure by its measurement key and runner: a deployed group that runs
  // exactly that runner takes it (deployed_runner.cpp).
  std::unordered_map<std::string, NodeMeasurement> node_figures_;
};

}  // namespace modelcost::cuda
