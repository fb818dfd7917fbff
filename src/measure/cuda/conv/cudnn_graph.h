// cuDNN's graph (backend) API, the part the deployed view uses: descriptors that destroy
// themselves, tensors described by dims and strides, operation graphs, and the execution plans
// the heuristics offer for a graph (each finalized plan is one way cuDNN runs the whole graph,
// e.g. a conv with its bias and activation fused into one kernel by the runtime-fusion engine).
// Every refusal throws GraphRefused naming the call, so a caller can fall back.
#pragma once
#include <cudnn.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace modelcost::cuda {

struct GraphRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  // cudnnBackendSetAttribute; throws GraphRefused with `what` on any status but success.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values,
           const char* what);
  void set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value, const char* what);
  void finalize(const char* what);

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};
using Descriptor = std::unique_ptr<BackendDescriptor>;

// A finalized tensor descriptor: `dims` in N, C, spatial order, `strides` giving the layout.
Descriptor graph_tensor(int64_t uid, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                        cudnnDataType_t type, bool is_virtual);
// Strides of an N, C, spatial tensor stored channels-last (NHWC) or NCHW.
std::vector<int64_t> layout_strides(const std::vector<int64_t>& dims, bool channels_last);

// A pointwise operation y = mode(x[, b]) computed in fp32; `clip` for RELU's upper bound (< 0:
// none). Appends its descriptors to `keep` and returns the operation.
const BackendDescriptor& pointwise_op(cudnnPointwiseMode_t mode, const BackendDescriptor& x, const BackendDescriptor* b,
                                      const BackendDescriptor& y, double clip, std::vector<Descriptor>& keep);

// The finalized execution plans cuDNN's heuristics (mode A, then the fallback list) offer for
// `ops` as one graph, in the heuristics' order, at most `limit`, each with its workspace size.
struct GraphPlan {
  Descriptor plan;
  int64_t workspace = 0;
  int64_t engine = -1;  // the engine's global index, -1 where cuDNN does not say
};
std::vector<GraphPlan> graph_plans(cudnnHandle_t handle, const std::vector<const BackendDescriptor*>& ops, size_t limit,
                                   std::vector<Descriptor>& keep);

// A variant pack binding tensor uids to device pointers, with the workspace.
Descriptor variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace);

}  // namespace modelcost::cuda
