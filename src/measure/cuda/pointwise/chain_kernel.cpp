// A group's elementwise members (and inference BatchNorms, as a scale and a shift) as one
// pointwise chain kernel: every member must iterate the same output dims; inputs from outside the chain are read through their
// broadcast strides, values inside stay in registers, and only tensors read outside the group
// are stored.
#include <algorithm>
#include <map>
#include <optional>

#include "core/cuda_check.h"
#include "core/device_info.h"
#include "core/runtime_compiler.h"
#include "deployed/group_runner.h"
#include "pointwise/chain_source.h"
#include "pointwise/fused_kernels.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

// The chain's own kernel compiled at run time (chain_source.h); where NVRTC is missing or
// refuses it, the precompiled kernel that interprets the program (pointwise_chain.cu).
class ChainKernel : public GroupKernel {
 public:
  // Compiled (its time booked in cuda.timing's ledger) and launched once on cuda.stream.
  ChainKernel(const ChainProgram& program, std::string ops, std::vector<FoldedBatchNorm> owned, CudaContext& cuda)
      : program_(program), ops_(std::move(ops)), owned_(std::move(owned)) {
    const ChainSource source = chain_source(program_);
    kernel_ = compile_kernel(cuda.timing->ledger, source.text, kChainKernelName, &interpreted_because_);
    if (!kernel_) return;
    args_ = chain_args(program_);
    vector_ = source.vector;
    const int sms = current_device_multiprocessors();
    blocks_ = static_cast<int>(std::min<int64_t>((source.work_items + kChainThreads - 1) / kChainThreads, int64_t(sms) * 8));
    if (launch_generated(cuda.stream) != cudaSuccess) {  // a launch the driver refuses: interpret instead
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
  std::vector<FoldedBatchNorm> owned_;  // inputs made at prepare time
  cudaKernel_t kernel_ = nullptr;
  std::string interpreted_because_;
  ChainArgs args_;
  int vector_ = 1, blocks_ = 0;
};

bool float_type(int32_t dtype) { return takes_dtype(kFloatDtypes, dtype); }

// Builds the chain's program member by member: elementwise members as their step, an inference
// BatchNormalization as the two steps a runtime folds it to, x * scale + shift, with scale =
// gamma / sqrt(var + eps) and shift = beta - mean * scale computed once at prepare time.
class ChainBuilder {
 public:
  // `dims`: the shape the chain iterates; `last`: the member whose value the chain stores whether
  // or not the group's readers need it.
  ChainBuilder(const GroupView& view, std::vector<int64_t> dims, size_t last)
      : view_(view), dims_(std::move(dims)), last_(last) {}

  // A chain over a channels-last [N, C, H, W] tensor iterated as its bytes are, rows [N*H*W, C]:
  // what a per-channel operand needs there. Members must then be same-shaped elementwise work
  // whose operands are full-sized or scalars.
  static ChainBuilder channels_last_rows(const GroupView& view, const std::vector<int64_t>& nchw, size_t last) {
    ChainBuilder b(view, {nchw[0] * nchw[2] * nchw[3], nchw[1]}, last);
    b.logical_ = nchw;
    return b;
  }

  bool add(size_t m, std::string* why) {
    if (const auto* plan = std::get_if<ElementwisePlan>(&view_.plan(m))) return add_elementwise(m, *plan, why);
    if (std::holds_alternative<BatchNormPlan>(view_.plan(m))) return add_batch_norm(m, why);
    *why = "member '" + view_.node(m).name + "' (" + view_.node(m).op_type + ") is not elementwise";
    return false;
  }

  // The conv's output plus its per-channel bias as the first step, read by later members in the
  // conv output's place; the conv output must have no reader outside the group.
  bool add_conv_bias(size_t anchor, std::string* why) {
    const Node& conv = view_.node(anchor);
    const int out = conv.outputs[0];
    const std::vector<int64_t>& shape = view_.spec(anchor).outputs[0].shape;
    if (conv.inputs.size() < 3 || conv.inputs[2] < 0 || view_.is_output(out) || shape != (logical_.empty() ? dims_ : logical_) ||
        !admit(dims_, 1, why)) {
      if (why->empty()) *why = "the conv has no bias, its output is read outside the group or is not the chain's shape";
      return false;
    }
    std::vector<int64_t> per_channel(dims_.size(), 0);
    per_channel[logical_.empty() ? 1 : dims_.size() - 1] = 1;
    const int x = operand(out, contiguous_strides(dims_), view_.buffers.data(out), view_.spec(anchor).outputs[0].dtype, why);
    const int b = x == kNoOperand ? kNoOperand
                                  : operand(conv.inputs[2], per_channel, view_.buffers.data(conv.inputs[2]),
                                            view_.spec(anchor).inputs[2].dtype, why);
    if (b == kNoOperand) return false;
    ChainStep& add = p_.step[p_.steps];
    add.op = ElementwiseOp::kAdd;
    add.operand[0] = static_cast<int8_t>(x);
    add.operand[1] = static_cast<int8_t>(b);
    operand_of_[out] = -(p_.steps + 1);
    ++p_.steps;
    ops_ = "bias";
    return true;
  }

  std::unique_ptr<GroupKernel> finish() {
    p_.rank = static_cast<int>(dims_.size());
    for (int d = 0; d < p_.rank; ++d) p_.dims[d] = dims_[d];
    p_.set_flat();
    return std::make_unique<ChainKernel>(p_, ops_, std::move(owned_), view_.cuda);
  }

 private:
  // The member's iteration dims must be the chain's, and a step must be left for each of its steps.
  bool admit(const std::vector<int64_t>& dims, int steps, std::string* why) {
    if (dims != dims_ || dims.size() > size_t(kChainMaxRank)) {
      *why = "members iterate different shapes";
      return false;
    }
    if (p_.steps + steps > kChainMaxSteps) {
      *why = "chain longer than " + std::to_string(kChainMaxSteps) + " steps";
      return false;
    }
    return true;
  }

  // The operand reading tensor `id` through `strides` (an earlier step's value where it made it).
  int operand(int id, const std::vector<int64_t>& strides, const void* data, int32_t dtype, std::string* why) {
    auto it = operand_of_.find(id);
    if (it != operand_of_.end() &&
        (it->second < 0 || strides == std::vector<int64_t>(p_.strides[it->second], p_.strides[it->second] + dims_.size())))
      return it->second;
    if (!float_type(dtype) || p_.inputs == kChainMaxInputs) {
      *why = !float_type(dtype) ? "a chain input is not a float tensor" : "more than 8 chain inputs";
      return kNoOperand;
    }
    p_.input[p_.inputs] = data;
    p_.input_type[p_.inputs] = element_type(dtype);
    for (size_t d = 0; d < dims_.size(); ++d) p_.strides[p_.inputs][d] = strides[d];
    if (id != kPrivateTensor) operand_of_[id] = p_.inputs;
    return p_.inputs++;
  }

  // Strides over the member's dims as the chain reads them (rows: full-sized or scalar only).
  std::vector<int64_t> chain_strides(const std::vector<int64_t>& strides) const {
    if (logical_.empty()) return strides;
    if (std::all_of(strides.begin(), strides.end(), [](int64_t v) { return v == 0; })) return {0, 0};
    if (strides == contiguous_strides(logical_)) return {dims_[1], 1};
    return {};
  }

  bool add_elementwise(size_t m, const ElementwisePlan& plan, std::string* why) {
    if (!admit(logical_.empty() || plan.dims != logical_ ? plan.dims : dims_, 1, why)) return false;
    ChainStep& step = p_.step[p_.steps];
    step.op = plan.op;
    step.alpha = static_cast<float>(plan.alpha);
    step.beta = static_cast<float>(plan.beta);
    const Node& node = view_.node(m);
    const int arity = elementwise_arity(plan.op);
    for (int k = 0; k < arity && k < static_cast<int>(node.inputs.size()); ++k) {
      const int id = view_.source(node.inputs[k]);
      const std::vector<int64_t> strides = chain_strides(plan.input_strides[k]);
      if (strides.size() != dims_.size()) {
        *why = "a member broadcasts along an axis of the channels-last rows";
        return false;
      }
      const int o = operand(id, strides, view_.buffers.data(id), view_.spec(m).inputs[k].dtype, why);
      if (o == kNoOperand) return false;
      step.operand[k] = static_cast<int8_t>(o);
    }
    return close_step(m, why);
  }

  // Over its own shape [N, C, ...], or over rows [M, C] in any view of them the chain iterates
  // (a shape of M * C elements ending in C: LeViT's Flatten, BatchNorm, Reshape back).
  bool add_batch_norm(size_t m, std::string* why) {
    if (!logical_.empty()) {
      *why = "a BatchNorm in a chain over channels-last rows";
      return false;
    }
    const NodeSpec& spec = view_.spec(m);
    const Shape& own = spec.outputs[0].shape;
    const bool rows = is_rows_view(own, dims_);  // as the kernel plan's fusion admitted it
    if (!admit(rows ? dims_ : own, 2, why)) return false;
    const int x_id = view_.source(view_.node(m).inputs[0]);
    const int x = operand(x_id, broadcast_strides(rows ? dims_ : spec.inputs[0].shape, dims_), view_.buffers.data(x_id),
                          spec.inputs[0].dtype, why);
    if (x == kNoOperand) return false;
    std::vector<int64_t> per_channel(dims_.size(), 0);
    per_channel[rows ? dims_.size() - 1 : 1] = 1;
    owned_.push_back(fold_batch_norm(view_, m));
    const int s = operand(kPrivateTensor, per_channel, owned_.back().scale, 1, why);
    const int t = s == kNoOperand ? kNoOperand : operand(kPrivateTensor, per_channel, owned_.back().shift, 1, why);
    if (t == kNoOperand) return false;
    ChainStep& mul = p_.step[p_.steps++];
    mul.op = ElementwiseOp::kMul;
    mul.operand[0] = static_cast<int8_t>(x);
    mul.operand[1] = static_cast<int8_t>(s);
    ChainStep& add = p_.step[p_.steps];
    add.op = ElementwiseOp::kAdd;
    add.operand[0] = static_cast<int8_t>(-p_.steps);  // the product just made
    add.operand[1] = static_cast<int8_t>(t);
    return close_step(m, why);
  }

  // Member m's value is the step just written: stored where read outside the group or last.
  bool close_step(size_t m, std::string* why) {
    const Node& node = view_.node(m);
    const int out = node.outputs[0];
    operand_of_[out] = -(p_.steps + 1);
    if ((view_.is_output(out) || m == last_) && p_.outputs < kChainMaxOutputs) {
      if (!float_type(view_.spec(m).outputs[0].dtype)) {
        *why = "a chain output is not a float tensor";
        return false;
      }
      p_.output[p_.outputs] = view_.buffers.data(out);
      p_.output_type[p_.outputs] = element_type(view_.spec(m).outputs[0].dtype);
      p_.output_step[p_.outputs++] = p_.steps;
    } else if (view_.is_output(out)) {
      *why = "more than 4 chain outputs";
      return false;
    }
    ++p_.steps;
    ops_ += (ops_.empty() ? "" : ",") + node.op_type;
    return true;
  }

 private:
  static constexpr int kNoOperand = 127, kPrivateTensor = -1000000;
  const GroupView& view_;
  const std::vector<int64_t> dims_;
  std::vector<int64_t> logical_;  // rows over channels-last bytes: the members' own [N, C, H, W]
  const size_t last_;
  ChainProgram p_;
  std::map<int, int> operand_of_;  // tensor id -> operand (>= 0 input, < 0 step)
  std::vector<FoldedBatchNorm> owned_;
  std::string ops_;
};

// The shape a chain of `members` iterates: its first elementwise member's (a BatchNorm over rows fits it).
const std::vector<int64_t>* chain_dims(const GroupView& view, const std::vector<size_t>& members) {
  const std::vector<int64_t>* dims = nullptr;
  for (size_t m : members)
    if (const auto* e = std::get_if<ElementwisePlan>(&view.plan(m)); e && !dims) dims = &e->dims;
  if (!dims && !members.empty() && std::holds_alternative<BatchNormPlan>(view.plan(members.front())))
    dims = &view.spec(members.front()).outputs[0].shape;
  return dims;
}

}  // namespace

std::unique_ptr<GroupKernel> make_chain_kernel(const GroupView& view, const std::vector<size_t>& members, std::string* why) {
  const std::vector<int64_t>* dims = chain_dims(view, members);
  if (!dims) {
    *why = "no elementwise member";
    return nullptr;
  }
  ChainBuilder chain(view, *dims, members.back());
  for (size_t m : members)
    if (!chain.add(m, why)) return nullptr;
  return chain.finish();
}

std::unique_ptr<GroupKernel> make_bias_chain_kernel(const GroupView& view, size_t anchor, const std::vector<size_t>& members,
                                                    std::string* why) {
  const std::vector<int64_t>* dims = chain_dims(view, members);
  if (!dims) {
    *why = "no elementwise member";
    return nullptr;
  }
  // Channels-last, a per-channel bias is the last axis of the bytes' rows.
  const bool rows = view.cuda.channels_last_half && dims->size() == 4;
  ChainBuilder chain = rows ? ChainBuilder::channels_last_rows(view, *dims, members.back()) : ChainBuilder(view, *dims, members.back());
  if (!chain.add_conv_bias(anchor, why)) return nullptr;
  for (size_t m : members)
    if (!chain.add(m, why)) return nullptr;
  return chain.finish();
}


}  // namespace modelcost::cuda
