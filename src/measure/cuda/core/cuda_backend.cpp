#include "core/cuda_backend.h"

#include <optional>

#include "core/cuda_check.h"
#include "core/cudnn_util.h"
#include "core/device_info.h"
#include "core/tensor_transfer.h"
#include "measure/cuda_entry.h"
#include "timing/range_profiler.h"

namespace modelcost {

std::unique_ptr<Backend> make_cuda_backend(int device) {
  const int count = cuda::device_count();
  if (count == 0)
    throw Error(kExitRuntime, "no NVIDIA GPU found (no CUDA device visible to the driver); use --cpu to measure on the CPU");
  if (device < 0 || device >= count)
    throw Error(kExitRuntime, "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " found)");
  return std::make_unique<cuda::CudaBackend>(device);
}

bool cuda_device_available() { return cuda::device_count() > 0; }

std::vector<HostTensor> run_node_on_gpu(const NodeSpec& spec, const std::vector<HostTensor>& inputs, bool channels_last) {
  // A backend of the call's own: one kept for the process would hold CUPTI's kernel records (one
  // timer at a time takes them) from the first timed choice on, away from the backends that measure.
  cuda::CudaBackend backend(0);
  backend.context().channels_last_half = channels_last;
  return backend.run_once(spec, inputs);
}

namespace cuda {

CudaBackend::CudaBackend(int device) {
  LedgerScope start(timing_.ledger, "backend start: CUDA context, cuDNN and cuBLASLt handles");
  context_.timing = &timing_;
  MC_CUDA_CHECK(cudaSetDevice(device));
  MC_CUDA_CHECK(cudaFree(nullptr));  // the context now, inside this phase
  info_ = query_device_info(device);
  context_.multiprocessors = info_.multiprocessors;
  MC_CUDA_CHECK(cudaStreamCreateWithFlags(&context_.stream, cudaStreamNonBlocking));
  MC_CUDNN_CHECK(cudnnCreate(&context_.cudnn));
  if (cublasLtCreate(&context_.lt) != CUBLAS_STATUS_SUCCESS) throw Error(kExitRuntime, "cublasLtCreate failed");
}

CudaBackend::~CudaBackend() {
  slots_.clear();
  flush_.reset();
  if (context_.lt) cublasLtDestroy(context_.lt);
  if (context_.cudnn) cudnnDestroy(context_.cudnn);
  if (context_.stream) cudaStreamDestroy(context_.stream);
}

std::vector<std::pair<std::string, double>> CudaBackend::wall_breakdown() const { return timing_.ledger.entries(); }

L2Flush& CudaBackend::l2_flush() {
  if (!flush_) flush_ = std::make_unique<L2Flush>(static_cast<size_t>(info_.l2_bytes));
  return *flush_;
}

SampleConfig CudaBackend::sample_config(const MeasureOptions& o) const {
  SampleConfig c;
  c.rule.min_samples = o.min_samples;
  c.rule.max_noise = o.max_noise;
  c.rule.convergence = o.convergence;
  c.rule.max_seconds = o.max_seconds_per_node;
  c.cold = o.cold;
  return c;
}

namespace {
NodeMeasurement not_measured(const std::string& why) {
  NodeMeasurement m;
  m.reason = why;
  return m;
}
}  // namespace

void CudaBackend::set_node_context(const MeasureOptions& options) {
  context_.autotune = options.autotune;
  context_.channels_last_half = true;
  context_.dtype_option = options.dtype;
}

NodeMeasurement CudaBackend::measure_node(const NodeAnalysis& node, const MeasureOptions& options) {
  if (!node.shaped) return not_measured("shapes not concrete");
  try {
    set_node_context(options);
    const NodeSpec spec = make_node_spec(node, options.dtype);
    const OpPlan plan = plan_operation(spec);
    if (is_zero_cost(plan)) {
      NodeMeasurement m;
      m.measured = true;
      m.zero_cost = true;
      m.reason = plan_reason(plan);
      m.implementation = "none (0 us)";
      m.has_counters = options.counters;  // nothing runs: no DRAM traffic, no FLOPs
      return m;
    }
    std::optional<LedgerScope> preparing(std::in_place, timing_.ledger, "nodes: runners prepared (timed choices included)");
    std::string reason;
    auto runner = make_runner(spec, plan, &reason);
    if (!runner) return not_measured(reason);
    std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
    if (slots_.size() < in.size() + out.size()) slots_.resize(in.size() + out.size());
    for (size_t i = 0; i < in.size(); ++i) {
      in[i].spec = spec.inputs[i];
      if (!spec.has_input(i)) continue;
      slots_[i].resize(std::max<size_t>(in[i].bytes(), 16));
      in[i].data = slots_[i].data();
      fill_input(spec, plan, i, in[i].data, 1 + i, context_.stream);
    }
    for (size_t o = 0; o < out.size(); ++o) {
      out[o].spec = spec.outputs[o];
      if (!spec.outputs[o].present) continue;
      DeviceBuffer& slot = slots_[in.size() + o];
      slot.resize(std::max<size_t>(out[o].bytes(), 16));
      out[o].data = slot.data();
    }
    runner->prepare(in, out, context_);
    preparing.reset();
    LedgerScope sampling(timing_.ledger, "nodes: sampling");
    SampleConfig config = sample_config(options);
    config.tally = "nodes";
    NodeMeasurement m = sample_launches(timing_, [&](cudaStream_t s) { runner->launch(s); }, context_.stream, config,
                                        options.cold ? &l2_flush() : nullptr);
    m.implementation = runner->implementation() + (m.implementation.empty() ? "" : ", " + m.implementation);
    node_figures_[measurement_key(spec) + "|" + runner->implementation()] = m;
    if (options.counters) add_counters(m, [&](cudaStream_t s) { runner->launch(s); });
    return m;
  } catch (const Error& e) {
    cudaGetLastError();
    cudaStreamSynchronize(context_.stream);
    return not_measured(e.what());
  }
}

void CudaBackend::add_counters(NodeMeasurement& m, const std::function<void(cudaStream_t)>& launch) {
  // One more run after the timing, from a cleaned L2 in every profiler pass, so the DRAM bytes
  // are the node's own traffic rather than whatever the timing runs left in L2.
  RangeProfiler& profiler = timing_.profiler();
  CounterValues values;
  std::string why;
  if (!profiler.profile(launch, context_.stream, &values, &why)) {
    m.counters_reason = why.empty() ? "range profiler failed" : why;
    return;
  }
  m.has_counters = true;
  m.dram_bytes_read = values.dram_bytes_read;
  m.dram_bytes_written = values.dram_bytes_written;
  m.executed_flops = values.executed_flops();
  m.has_executed_flops = m.executed_flops > 0;
  m.measured_intensity = values.intensity();
}

std::vector<HostTensor> CudaBackend::run_once(const NodeSpec& spec, const std::vector<HostTensor>& inputs) {
  const OpPlan plan = plan_operation(spec);
  std::string reason;
  auto runner = make_runner(spec, plan, &reason);
  if (!runner) throw Error(kExitRuntime, "node '" + spec.name + "': " + reason);
  return run_with(*runner, spec, inputs);
}

std::vector<HostTensor> CudaBackend::run_with(OperatorRunner& runner, const NodeSpec& spec,
                                              const std::vector<HostTensor>& inputs) {
  std::vector<DeviceBuffer> buffers;
  std::vector<DeviceTensor> in(spec.inputs.size()), out(spec.outputs.size());
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].spec = spec.inputs[i];
    if (!spec.has_input(i)) continue;
    buffers.emplace_back(std::max<size_t>(in[i].bytes(), 16));
    in[i].data = buffers.back().data();
    upload(inputs[i], in[i].data, context_.stream);
  }
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].spec = spec.outputs[o];
    if (!spec.outputs[o].present) continue;
    buffers.emplace_back(std::max<size_t>(out[o].bytes(), 16));
    out[o].data = buffers.back().data();
    // Poison: NaN-like bytes, so an element the kernel never writes shows up in the comparison.
    MC_CUDA_CHECK(cudaMemsetAsync(out[o].data, 0xff, out[o].bytes(), context_.stream));
  }
  runner.prepare(in, out, context_);
  runner.launch(context_.stream);
  MC_CUDA_CHECK(cudaStreamSynchronize(context_.stream));
  std::vector<HostTensor> results;
  for (size_t o = 0; o < out.size(); ++o)
    results.push_back(spec.outputs[o].present ? download(out[o].data, spec.outputs[o], context_.stream) : HostTensor());
  return results;
}

}  // namespace cuda
}  // namespace modelcost
