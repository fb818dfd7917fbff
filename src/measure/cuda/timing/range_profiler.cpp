#include "timing/range_profiler.h"

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>

#include "timing/cupti_timer.h"
#include "timing/l2_sweep.h"
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <stdexcept>

namespace modelcost::cuda {
namespace {

// Each inner list is one profiler configuration. The SASS instruction metrics share one
// programmable counter: two of them in one configuration both read the first one's count
// (seen on the H100/H200 with CUDA 13), so each gets a configuration of its own.
const std::vector<std::vector<std::string>> kMetricGroups = {
    {"dram__bytes_read.sum", "dram__bytes_write.sum", "sm__ops_path_tensor_src_fp16.sum",
     "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
     "sm__ops_path_tensor_src_fp8.sum"},
    {"smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.sum"},
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"},
    {"smsp__sass_thread_inst_executed_ops_hadd_hmul_hfma_pred_on.sum"},
    {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"},
};

// A CUPTI failure inside the profiler: the message names the call.
struct CuptiFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw CuptiFailure(std::string(call) + ": " + (text ? text : "CUPTI error " + std::to_string(r)));
}

// The runtime's current context, through the driver entry point (no link against libcuda).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &status) != cudaSuccess || !fn)
    throw CuptiFailure("cuCtxGetCurrent not found in the driver");
  cudaFree(nullptr);  // makes the runtime's primary context current
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || !ctx) throw CuptiFailure("no current CUDA context");
  return ctx;
}

// A CUPTI parameter struct: zeroed, with its size set.
template <class T>
T params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace

const std::vector<std::vector<std::string>>& counter_metric_groups() { return kMetricGroups; }

const std::vector<std::string>& counter_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& group : kMetricGroups) all.insert(all.end(), group.begin(), group.end());
    return all;
  }();
  return names;
}

CounterValues counters_from_metrics(const std::vector<std::string>& names, const std::vector<double>& values) {
  CounterValues c;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    const std::string& n = names[i];
    const double v = values[i];
    auto is = [&](const char* op) { return n == std::string("smsp__sass_thread_inst_executed_") + op + "_pred_on.sum"; };
    // add + mul + fma instructions, plus fma once more: an FMA is two FLOPs.
    if (n == "dram__bytes_read.sum") c.dram_bytes_read += v;
    else if (n == "dram__bytes_write.sum") c.dram_bytes_written += v;
    else if (is("ops_fadd_fmul_ffma") || is("op_ffma")) c.fp32_flops += v;
    else if (is("ops_hadd_hmul_hfma") || is("op_hfma")) c.fp16_flops += v;
    else if (n.rfind("sm__ops_path_tensor_src_", 0) == 0) c.tensor_ops += v;
  }
  return c;
}

// One profiler configuration: its host object, config image and the metrics CUPTI accepted.
struct RangeProfiler::MetricConfig {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> image;
  std::vector<std::string> metric_names;
  std::vector<const char*> metric_ptrs;
};

struct RangeProfiler::State {
  CUcontext context = nullptr;
  std::vector<RangeProfiler::MetricConfig> configs;
  void* device_buffer = nullptr;  // 2x L2, read by a sweep kernel to clean L2
  int* sink = nullptr;
  size_t clean_bytes = 0;
};

RangeProfiler::RangeProfiler(CuptiTimer& records) : records_(records), state_(std::make_unique<State>()) {
  try {
    State& s = *state_;
    s.context = current_context();
    int device = 0;
    cudaGetDevice(&device);
    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");

    auto supported = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    supported.cuDevice = device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    check(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      throw CuptiFailure(supported.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "profiling disabled on this vGPU"
                                                                                : "range profiling unsupported on this device");

    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(device);
    check(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    avail.ctx = s.context;
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
    std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

    for (const auto& group : counter_metric_groups()) {
      MetricConfig c;
      auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
      host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
      host.pChipName = chip.pChipName;
      host.pCounterAvailabilityImage = availability.data();
      check(cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize");
      c.host = host.pHostObject;
      s.configs.push_back(std::move(c));
      MetricConfig& config = s.configs.back();
      // Metrics one at a time, so one unknown on another chip drops only itself; DRAM is required.
      for (const std::string& name : group) {
        const char* ptr = name.c_str();
        auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
        add.pHostObject = config.host;
        add.ppMetricNames = &ptr;
        add.numMetrics = 1;
        const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add);
        if (r == CUPTI_SUCCESS) config.metric_names.push_back(name);
        else if (name.rfind("dram__", 0) == 0) check(r, ("cuptiProfilerHostConfigAddMetrics " + name).c_str());
      }
      if (config.metric_names.empty()) continue;
      for (const auto& n : config.metric_names) config.metric_ptrs.push_back(n.c_str());
      auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
      size.pHostObject = config.host;
      check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
      config.image.resize(size.configImageSize);
      auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
      image.pHostObject = config.host;
      image.configImageSize = config.image.size();
      image.pConfigImage = config.image.data();
      check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
    }
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    s.clean_bytes = 2 * static_cast<size_t>(l2 > 0 ? l2 : (64 << 20));
    if (cudaMalloc(&s.device_buffer, s.clean_bytes) != cudaSuccess ||
        cudaMemset(s.device_buffer, 0, s.clean_bytes) != cudaSuccess || cudaMalloc(&s.sink, sizeof(int)) != cudaSuccess) {
      cudaGetLastError();
      throw CuptiFailure("no memory for the L2 cleaning buffers");
    }
    ok_ = true;
  } catch (const CuptiFailure& e) {
    error_ = e.what();
  }
}

void RangeProfiler::clean_l2(cudaStream_t stream) {
  launch_l2_read_sweep(state_->device_buffer, state_->clean_bytes, state_->sink, stream);
  cudaStreamSynchronize(stream);
}

RangeProfiler::~RangeProfiler() {
  if (state_)
    for (MetricConfig& c : state_->configs) {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = c.host;
      cuptiProfilerHostDeinitialize(&p);
    }
  // A backend kept in a static dies at process exit, perhaps after the CUDA runtime; these only
  // release memory.
  if (state_ && state_->device_buffer) cudaFree(state_->device_buffer);
  if (state_ && state_->sink) cudaFree(state_->sink);
}

bool RangeProfiler::profile(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream, CounterValues* values,
                            std::string* why) {
  if (!ok_) {
    *why = error_;
    return false;
  }
  std::vector<std::string> names;
  std::vector<double> raw;
  CuptiTimer::Pause no_records(records_);  // kernel records zero the SASS counters
  for (const MetricConfig& config : state_->configs) {
    if (config.metric_names.empty()) continue;
    std::vector<double> config_values(config.metric_names.size());
    if (!profile_config(config, launch, stream, config_values.data(), why)) return false;
    names.insert(names.end(), config.metric_names.begin(), config.metric_names.end());
    raw.insert(raw.end(), config_values.begin(), config_values.end());
  }
  *values = counters_from_metrics(names, raw);
  return true;
}

namespace {

// The host object a configuration's metrics were added to, and their names.
struct HostMetrics {
  CUpti_Profiler_Host_Object* host;
  const std::vector<const char*>& metric_ptrs;
};

// A counter-data image sized and initialised for one range of the metrics, and the configuration
// set on the profiler object: user ranges, replayed by us.
std::vector<uint8_t> configure_range(CUpti_RangeProfiler_Object* object, const std::vector<const char*>& metric_ptrs,
                                     const std::vector<uint8_t>& config_image) {
  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = const_cast<const char**>(metric_ptrs.data());
  size.numMetrics = metric_ptrs.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<uint8_t> counter_data(size.counterDataSize);
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object;
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = object;
  config.configSize = config_image.size();
  config.pConfig = config_image.data();
  config.counterDataImageSize = counter_data.size();
  config.pCounterDataImage = counter_data.data();
  config.range = CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
  return counter_data;
}

// One pass: `launch` inside one user range; true once every pass the metrics need is submitted.
bool profile_pass(CUpti_RangeProfiler_Object* object, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream) {
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = object;
  check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
  auto push = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = object;
  push.pRangeName = "node";
  check(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
  launch(stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  auto pop = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = object;
  check(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = object;
  check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
  if (synced != cudaSuccess) throw CuptiFailure(std::string("profiled launch: ") + cudaGetErrorString(synced));
  return stop.isAllPassSubmitted != 0;
}

// The values of the metrics (metric_ptrs, configured on `host`) for the one range in
// `counter_data`, decoded from the profiler object.
void evaluate_range(CUpti_RangeProfiler_Object* object, std::vector<uint8_t>& counter_data, const HostMetrics& metrics,
                    double* values) {
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object;
  check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");

  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges == 0) throw CuptiFailure("range profiler recorded no range");

  auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  eval.pHostObject = metrics.host;
  eval.pCounterDataImage = counter_data.data();
  eval.counterDataImageSize = counter_data.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = const_cast<const char**>(metrics.metric_ptrs.data());
  eval.numMetrics = metrics.metric_ptrs.size();
  eval.pMetricValues = values;
  check(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
}

}  // namespace

bool RangeProfiler::profile_config(const MetricConfig& metrics, const std::function<void(cudaStream_t)>& launch,
                                   cudaStream_t stream, double* values, std::string* why) {
  // Enabled only around this node: an enabled profiler must not see the timing runs or the
  // whole-model graph capture.
  auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = state_->context;
  if (const CUptiResult r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS) {
    try {
      check(r, "cuptiRangeProfilerEnable");
    } catch (const CuptiFailure& e) {
      *why = e.what();
    }
    return false;
  }
  CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
  bool done = false;
  try {
    std::vector<uint8_t> counter_data = configure_range(object, metrics.metric_ptrs, metrics.image);
    bool all_passes = false;
    for (int pass = 0; !all_passes; ++pass) {
      if (pass >= 64) throw CuptiFailure("range profiler did not finish in 64 passes");
      clean_l2(stream);
      all_passes = profile_pass(object, launch, stream);
    }
    evaluate_range(object, counter_data, {metrics.host, metrics.metric_ptrs}, values);
    done = true;
  } catch (const std::exception& e) {  // CUPTI failures, and a launch that threw
    *why = e.what();
  }
  auto disable = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = object;
  cuptiRangeProfilerDisable(&disable);
  cudaGetLastError();
  return done;
}

}  // namespace modelcost::cuda
