// One GPU's mixture-of-experts MLP of the deployed step (expert_mlp.cpp), for every MoE layer:
// the router product, the routing (top-k, the pairs sorted by expert), the grouped gate/up
// product over the experts the step's tokens reach, SiLU x up over the pairs, the grouped down
// product, the weighted sum into the residual; then a shared expert's gated MLP where the model
// has one. With tensor parallelism every expert's width is split like a dense MLP's (the router
// replicated), and the caller all-reduces the residual after it.
#pragma once
#include <cublasLt.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "llm/expert_kernels.h"
#include "llm/step_gemm.h"
#include "modelcost/llm.h"

namespace modelcost::cuda {

struct ExpertMlpShape {
  int64_t layers = 0, rows = 0, hidden = 0, experts = 0, top_k = 0;
  int64_t width = 0, shared_width = 0;  // per device
  bool add_residual = true;             // false on tensor-parallel ranks after the first: partial sums only
};
// Throws Error(kExitRuntime) naming what the kernels cannot take.
void check_expert_shape(const ExpertMlpShape& shape);

class ExpertMlp {
 public:
  using Mark = std::function<void(const char* role)>;
  // Random weights (one copy per layer, so no layer finds another's in L2), on `stream`.
  ExpertMlp(const ExpertMlpShape& shape, cublasLtHandle_t lt, GemmWorkspace workspace, int seed, cudaStream_t stream);
  ExpertMlp(const ExpertMlp&) = delete;
  ExpertMlp& operator=(const ExpertMlp&) = delete;

  // Picks the router's and the shared expert's library products (before capture).
  void autotune(const __half* normed, __half* residual, cudaStream_t stream);
  // Layer `layer` of the MoE layers: normed [rows, hidden] in, residual updated in place.
  void enqueue(int layer, const __half* normed, __half* residual, const Mark& mark, cudaStream_t stream) const;
  std::string description() const;

 private:
  struct LayerWeights {
    const __half *router, *gate_up, *down, *shared_gate_up, *shared_down;
  };
  void allocate(int seed, cudaStream_t stream);
  ExpertMlpShape s_;
  ExpertRoutingShape routing_shape_;
  ExpertRouting routing_;
  DeviceBuffer weights_, routing_buffer_, activations_;
  std::vector<LayerWeights> layers_;
  __half *scores_ = nullptr, *gate_up_ = nullptr, *act_ = nullptr, *down_ = nullptr;
  std::unique_ptr<StepGemm> router_gemm_, shared_gate_up_gemm_, shared_down_gemm_;
};

}  // namespace modelcost::cuda
