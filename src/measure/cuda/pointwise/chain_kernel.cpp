// A group's elementwise members as one pointwise chain kernel: every member
// must iterate the same output dims; inputs from outside the chain are read through their
// broadcast strides, values inside stay in registers, and only tensors read outside the group
// are stored.
#include <algorithm>
#include <map>

#include "core/cuda_check.h"
#include "core/runtime_compiler.h"
#include "deployed/group_runner.h"
#include "pointwise/chain_source.h"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {
namespace {

// The chain's own kernel compiled at run time (chain_source.h); where NVRTC is missing or
// refuses it, the precompiled kernel that interprets the program (pointwise_chain.cu).
class ChainKernel : public GroupKernel {
 public:
  ChainKernel(const ChainProgram& program, std::string ops, cudaStream_t stream) : program_(program), ops_(std::move(ops)) {
    const ChainSource source = chain_source(program_);
    kernel_ = compile_kernel(source.text, kChainKernelName, &interpreted_because_);
    if (!kernel_) return;
    args_ = chain_args(program_);
    vector_ = source.vector;
    int device = 0, sms = 0;
    MC_CUDA_CHECK(cudaGetDevice(&device));
    MC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks_ = static_cast<int>(std::min<int64_t>((source.work_items + kChainThreads - 1) / kChainThreads, int64_t(sms) * 8));
    if (launch_generated(stream) != cudaSuccess) {  // a launch the driver refuses: interpret instead
      cudaGetLastError();
      kernel_ = nullptr;
      interpreted_because_ = "the generated kernel did not launch";
    }
  }
  void launch(cudaStream_t stream) override {
    if (!kernel_) return launch_pointwise_chain(program_, stream);
    MC_CUDA_CHECK(launch_generated(stream));
  }
  std::string implementation() const override {
    return "pointwise chain kernel (" + ops_ + ")" +
           (kernel_ ? ", generated, " + std::to_string(vector_) + (vector_ == 1 ? " element" : " elements") + " per thread"
                    : ", interpreted (" + interpreted_because_ + ")");
  }

 private:
  cudaError_t launch_generated(cudaStream_t stream) {
    if (blocks_ == 0) return cudaSuccess;
    void* params[] = {&args_};
    const cudaError_t status = cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks_),
                                                dim3(kChainThreads), params, 0, stream);
    return status != cudaSuccess ? status : cudaGetLastError();
  }

  ChainProgram program_;
  std::string ops_;
  cudaKernel_t kernel_ = nullptr;
  std::string interpreted_because_;
  ChainArgs args_;
  int vector_ = 1, blocks_ = 0;
};

bool float_type(int32_t dtype) { return takes_dtype(kFloatDtypes, dtype); }

}  // namespace

std::unique_ptr<GroupKernel> make_chain_kernel(const GroupView& view, const std::vector<size_t>& members, std::string* why) {
  ChainProgram p;
  std::map<int, int> operand_of;  // tensor id -> operand (>= 0 input, < 0 step)
  const std::vector<int64_t>* dims = nullptr;
  std::string ops;
  for (size_t m : members) {
    const auto* plan = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!plan) {
      *why = "member '" + view.node(m).name + "' (" + view.node(m).op_type + ") is not elementwise";
      return nullptr;
    }
    if (!dims) dims = &plan->dims;
    if (plan->dims != *dims || plan->dims.size() > size_t(kChainMaxRank)) {
      *why = "members iterate different shapes";
      return nullptr;
    }
    if (p.steps == kChainMaxSteps) {
      *why = "chain longer than " + std::to_string(kChainMaxSteps) + " steps";
      return nullptr;
    }
    ChainStep& step = p.step[p.steps];
    step.op = plan->op;
    step.alpha = static_cast<float>(plan->alpha);
    step.beta = static_cast<float>(plan->beta);
    const Node& node = view.node(m);
    const int arity = elementwise_arity(plan->op);
    for (int k = 0; k < arity && k < static_cast<int>(node.inputs.size()); ++k) {
      const int id = view.source(node.inputs[k]);
      auto it = operand_of.find(id);
      if (it != operand_of.end() && (it->second < 0 || plan->input_strides[k] == std::vector<int64_t>(
                                                                 p.strides[it->second], p.strides[it->second] + dims->size()))) {
        step.operand[k] = static_cast<int8_t>(it->second);
        continue;
      }
      const TensorSpec& t = view.spec(m).inputs[k];
      if (!float_type(t.dtype) || p.inputs == kChainMaxInputs) {
        *why = !float_type(t.dtype) ? "a chain input is not a float tensor" : "more than 8 chain inputs";
        return nullptr;
      }
      p.input[p.inputs] = view.buffers.data(id);
      p.input_type[p.inputs] = element_type(t.dtype);
      for (size_t d = 0; d < dims->size(); ++d) p.strides[p.inputs][d] = plan->input_strides[k][d];
      step.operand[k] = static_cast<int8_t>(p.inputs);
      operand_of[id] = p.inputs++;
    }
    const int out = node.outputs[0];
    operand_of[out] = -(p.steps + 1);
    if ((view.is_output(out) || m == members.back()) && p.outputs < kChainMaxOutputs) {
      if (!float_type(view.spec(m).outputs[0].dtype)) {
        *why = "a chain output is not a float tensor";
        return nullptr;
      }
      p.output[p.outputs] = view.buffers.data(out);
      p.output_type[p.outputs] = element_type(view.spec(m).outputs[0].dtype);
      p.output_step[p.outputs++] = p.steps;
    } else if (view.is_output(out)) {
      *why = "more than 4 chain outputs";
      return nullptr;
    }
    ++p.steps;
    ops += (ops.empty() ? "" : ",") + node.op_type;
  }
  if (!dims) {
    *why = "no elementwise member";
    return nullptr;
  }
  p.rank = static_cast<int>(dims->size());
  for (int d = 0; d < p.rank; ++d) p.dims[d] = (*dims)[d];
  p.set_flat();
  return std::make_unique<ChainKernel>(p, ops, view.cuda.stream);
}

}  // namespace modelcost::cuda
