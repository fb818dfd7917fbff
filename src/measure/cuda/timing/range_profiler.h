// Hardware counters of one node's launch (--counters) through CUPTI's range profiler (CUDA 13's
// cupti_range_profiler.h + cupti_profiler_host.h): one user range around the launch, replayed by
// us (user replay) as many passes as the metrics need, then evaluated on the host.
// Metrics (all exist on sm_90 / GH100; docs/measurement.md), one configuration per line:
//   dram__bytes_{read,write}.sum, sm__ops_path_tensor_src_{fp16,bf16_dst_fp32,tf32_dst_fp32,fp8}.sum
//   smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma_pred_on.sum  (FP32 instructions)
//   smsp__sass_thread_inst_executed_op_ffma_pred_on.sum             (FP32 FMAs, counted again: 2 FLOPs)
//   smsp__sass_thread_inst_executed_ops_hadd_hmul_hfma_pred_on.sum  (FP16 instructions)
//   smsp__sass_thread_inst_executed_op_hfma_pred_on.sum             (FP16 FMAs, counted again)
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

// As driver_types.h declares it, so this header needs no CUDA include path (tests include it).
typedef struct CUstream_st* cudaStream_t;

namespace modelcost::cuda {

// The counters of one run, in the units the report uses.
struct CounterValues {
  double dram_bytes_read = 0, dram_bytes_written = 0;
  double fp32_flops = 0, fp16_flops = 0, tensor_ops = 0;
  double executed_flops() const { return fp32_flops + fp16_flops + tensor_ops; }
  double dram_bytes() const { return dram_bytes_read + dram_bytes_written; }
  // FLOP per DRAM byte; 0 without DRAM traffic (everything served from L2).
  double intensity() const { return dram_bytes() > 0 ? executed_flops() / dram_bytes() : 0; }
};

// The metrics asked of CUPTI, grouped by profiler configuration, and all of them in order.
const std::vector<std::vector<std::string>>& counter_metric_groups();
const std::vector<std::string>& counter_metric_names();
// Combines raw metric values (parallel to `names`, a subset of counter_metric_names(); missing
// metrics count 0) into CounterValues: FP32/FP16 FLOPs = add+mul+fma instructions + fma
// instructions (an FMA is 2 FLOPs; a packed half2 instruction counts once, as ncu counts it),
// tensor ops as they are.
CounterValues counters_from_metrics(const std::vector<std::string>& names, const std::vector<double>& values);

class CuptiTimer;

class RangeProfiler {
 public:
  // The profiler of the current device, set up here (CUPTI's profiler initialised, twice the L2
  // allocated for cleaning it); ok() false (error() says why) when the profiler is unsupported
  // or refused. `records` is the kernel timer whose records profile() pauses; it outlives this.
  explicit RangeProfiler(CuptiTimer& records);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // Runs `launch` once per profiler pass and returns the counters of one launch. Before each
  // pass, outside the range, L2 is cleaned by *reading* 2x its size (a device-to-host copy):
  // a memset flush would leave dirty lines whose write-back the node's range would count.
  // Writes still in L2 when the launch ends are not counted (as ncu). CUPTI's kernel records are
  // paused meanwhile (they zero the SASS counters). False with *why on failure.
  bool profile(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream, CounterValues* values,
               std::string* why);

 private:
  struct MetricConfig;
  // One configuration's metrics of one launch, replayed for as many passes as they need.
  bool profile_config(const MetricConfig& metrics, const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                      double* values, std::string* why);
  void clean_l2(cudaStream_t stream);
  struct State;
  CuptiTimer& records_;
  std::unique_ptr<State> state_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace modelcost::cuda
