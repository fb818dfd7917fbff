#include "conv/cudnn_graph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>

namespace modelcost::cuda {
namespace {

void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    cudaGetLastError();  // a refused configuration leaves no launch error behind
    throw GraphRefused(std::string(what) + ": " + cudnnGetErrorString(status));
  }
}

// The execution plan of one engine config with its workspace size and engine, or nothing where
// cuDNN does not finalize it (an engine that does not run this graph here).
std::optional<GraphPlan> finalized_plan(cudnnHandle_t handle, const BackendDescriptor& config) {
  GraphPlan p;
  try {
    p.plan = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    p.plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "plan handle");
    p.plan->set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, "plan engine config");
    p.plan->finalize("execution plan");
    int64_t n = 0;
    check(cudnnBackendGetAttribute(p.plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                   &p.workspace),
          "plan workspace size");
    BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t engine_raw = engine.get();
    if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                 &engine_raw) == CUDNN_STATUS_SUCCESS)
      cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &p.engine);
  } catch (const std::exception&) {  // GraphRefused; nothing may leave a finalizing thread
    return std::nullopt;
  }
  return p;
}

// Plans of one heuristics mode, appended to `plans` until `limit`; a config cuDNN cannot
// finalize (an engine that does not run this graph here) is skipped.
void plans_of_mode(cudnnHandle_t handle, const BackendDescriptor& graph, cudnnBackendHeurMode_t mode, size_t limit,
                   std::vector<GraphPlan>& plans, std::vector<Descriptor>& keep) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "heuristics graph");
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
  heur.finalize("heuristics");
  int64_t count = 0;
  check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        "heuristics result count");
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_unique<BackendDescriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  int64_t returned = 0;
  if (count > 0)
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                                   raw.data()),
          "heuristics results");
  // Finalizing a runtime-fusion plan compiles its kernel (NVRTC inside cuDNN, about 150 ms on one
  // CPU core for EfficientNet-B0's), so the configs still wanted are finalized at once, each on a thread of its own
  // with the one handle, as XLA compiles cuDNN plans; a config that does not finalize is skipped.
  for (int64_t next = 0; next < returned && plans.size() < limit;) {
    const int64_t end = std::min<int64_t>(returned, next + static_cast<int64_t>(limit - plans.size()));
    std::vector<std::optional<GraphPlan>> built(static_cast<size_t>(end - next));
    std::vector<std::thread> workers;
    for (int64_t i = next; i < end; ++i)
      workers.emplace_back([&, i] { built[static_cast<size_t>(i - next)] = finalized_plan(handle, *configs[i]); });
    for (std::thread& worker : workers) worker.join();
    for (auto& plan : built)
      if (plan) plans.push_back(std::move(*plan));
    next = end;
  }
  for (auto& config : configs) keep.push_back(std::move(config));
}

}  // namespace

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  check(cudnnBackendCreateDescriptor(type, &d_), "cudnnBackendCreateDescriptor");
}

BackendDescriptor::~BackendDescriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                            const void* values, const char* what) {
  check(cudnnBackendSetAttribute(d_, name, type, count, values), what);
}

void BackendDescriptor::set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value, const char* what) {
  cudnnBackendDescriptor_t raw = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, what);
}

void BackendDescriptor::finalize(const char* what) { check(cudnnBackendFinalize(d_), what); }

std::vector<int64_t> layout_strides(const std::vector<int64_t>& dims, bool channels_last) {
  const size_t n = dims.size();
  std::vector<int64_t> strides(n, 1);
  if (!channels_last) {
    for (size_t i = n - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
    return strides;
  }
  // N, C, spatial... stored as N, spatial..., C.
  strides[1] = 1;
  int64_t step = dims[1];
  for (size_t i = n - 1; i >= 2; --i) {
    strides[i] = step;
    step *= dims[i];
  }
  strides[0] = step;
  return strides;
}

Descriptor graph_tensor(int64_t uid, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                        cudnnDataType_t type, bool is_virtual) {
  auto t = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = 16;
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor data type");
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data(), "tensor dims");
  t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data(), "tensor strides");
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor uid");
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, "tensor alignment");
  t->set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, "tensor virtual");
  t->finalize("tensor");
  return t;
}

const BackendDescriptor& pointwise_op(cudnnPointwiseMode_t mode, const BackendDescriptor& x, const BackendDescriptor* b,
                                      const BackendDescriptor& y, double clip, std::vector<Descriptor>& keep) {
  auto pw = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  pw->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
  pw->set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, "pointwise precision");
  // Scalars of an fp32 pointwise descriptor are floats (doubles for an fp64 one).
  const float lower = 0, upper = static_cast<float>(clip), swish_beta = 1;
  if (mode == CUDNN_POINTWISE_RELU_FWD) {
    pw->set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_FLOAT, 1, &lower, "relu lower clip");
    if (clip > 0) pw->set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, 1, &upper, "relu upper clip");
  }
  if (mode == CUDNN_POINTWISE_SWISH_FWD)
    pw->set(CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_FLOAT, 1, &swish_beta, "swish beta");
  pw->finalize("pointwise descriptor");
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op->set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *pw, "pointwise op descriptor");
  op->set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, "pointwise x");
  if (b) op->set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b, "pointwise b");
  op->set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, "pointwise y");
  op->finalize("pointwise operation");
  keep.push_back(std::move(pw));
  keep.push_back(std::move(op));
  return *keep.back();
}

std::vector<GraphPlan> graph_plans(cudnnHandle_t handle, const std::vector<const BackendDescriptor*>& ops, size_t limit,
                                   std::vector<Descriptor>& keep) {
  auto graph = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const BackendDescriptor* op : ops) raw.push_back(op->get());
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), raw.data(),
             "graph operations");
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "graph handle");
  graph->finalize("operation graph");
  std::vector<GraphPlan> plans;
  plans_of_mode(handle, *graph, CUDNN_HEUR_MODE_A, limit, plans, keep);
  if (plans.empty()) plans_of_mode(handle, *graph, CUDNN_HEUR_MODE_FALLBACK, limit, plans, keep);
  keep.push_back(std::move(graph));
  return plans;
}

Descriptor variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace) {
  auto pack = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data(), "pack uids");
  pack->set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
            pointers.data(), "pack pointers");
  pack->set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "pack workspace");
  pack->finalize("variant pack");
  return pack;
}

}  // namespace modelcost::cuda
