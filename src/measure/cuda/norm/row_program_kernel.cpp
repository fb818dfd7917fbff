// A group of reductions over the trailing axes of one shape with its elementwise prologue and
// epilogue (the kernel plan's row kernel: a spelled-out LayerNorm, RMSNorm or L2 normalisation,
// a softmax after a scale or a bias) run as one generated row program (row_program.h).
#include <map>

#include "core/cuda_check.h"
#include "core/device_info.h"
#include "core/dtype_gate.h"
#include "core/runtime_compiler.h"
#include "deployed/group_runner.h"
#include "norm/row_program.h"
#include "ops/op_registry.h"
#include "timing/timing.h"

namespace modelcost::cuda {
namespace {

class RowProgramKernel : public GroupKernel {
 public:
  RowProgramKernel(cudaKernel_t kernel, const RowProgram& program, const RowProgramSource& source, std::string ops)
      : kernel_(kernel), args_(row_program_args(program)), blocks_(int(source.blocks)),
        threads_per_row_(source.threads_per_row), ops_(std::move(ops)) {}
  void launch(cudaStream_t stream) override {
    if (blocks_ == 0) return;
    void* params[] = {&args_};
    MC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks_), dim3(kRowProgramThreads), params, 0, stream));
    MC_CUDA_CHECK(cudaGetLastError());
  }
  std::string implementation() const override {
    return "row program kernel (" + ops_ + "), generated, " + (threads_per_row_ == 32 ? "a warp" : "a block") + " per row";
  }

 private:
  cudaKernel_t kernel_;
  ChainArgs args_;
  int blocks_ = 0, threads_per_row_ = 32;
  std::string ops_;
};

bool is_row_fold(ReduceOp f) {
  return f == ReduceOp::kSum || f == ReduceOp::kMean || f == ReduceOp::kMax || f == ReduceOp::kMin ||
         f == ReduceOp::kSumSquare || f == ReduceOp::kL2;
}

// Builds the program member by member over the frame of the first reduction's input: its leading
// dims are the rows, its trailing (reduced) dims one row.
class RowProgramBuilder {
 public:
  RowProgramBuilder(const GroupView& view, size_t last) : view_(view), last_(last) {}

  bool set_frame(const RowView& reduce, size_t m, std::string* why) {
    full_ = view_.spec(m).inputs[0].shape;
    if (reduce.inner != 1) return fail("the reduction is not over the trailing axes", why);
    int64_t n = 1;
    size_t lead = full_.size();
    while (lead > 0 && n < reduce.axis_len) n *= full_[--lead];
    if (n != reduce.axis_len) return fail("the reduced axes do not split the shape", why);
    p_.row_dims.assign(full_.begin(), full_.begin() + lead);
    p_.row_length = n;
    return true;
  }

  bool add(size_t m, std::string* why) {
    const OpPlan& plan = view_.plan(m);
    const Node& node = view_.node(m);
    if (const auto* r = std::get_if<ReducePlan>(&plan)) {
      if (!is_row_fold(r->op) || view_.spec(m).inputs[0].shape != full_ || r->inner != 1 || r->axis_len != p_.row_length)
        return fail("a reduction over other rows", why);
      RowStep step;
      step.reduction = true;
      step.fold = r->op;
      return read(m, 0, &step.operand[0], why) && close(m, step, why);
    }
    if (const auto* sm = std::get_if<SoftmaxPlan>(&plan)) {
      if (view_.spec(m).inputs[0].shape != full_ || sm->inner != 1 || sm->axis_len != p_.row_length)
        return fail("a softmax over other rows", why);
      int8_t x = 0;
      return read(m, 0, &x, why) && add_softmax(m, x, sm->log_softmax, why);
    }
    if (const auto* e = std::get_if<ElementwisePlan>(&plan)) {
      RowStep step;
      step.op = e->op;
      step.alpha = static_cast<float>(e->alpha);
      step.beta = static_cast<float>(e->beta);
      for (int k = 0; k < elementwise_arity(e->op) && k < int(node.inputs.size()); ++k)
        if (!read(m, k, &step.operand[k], why)) return false;
      return close(m, step, why);
    }
    if (op_traits(node.domain, node.op_type).repeat) {  // a row's value broadcast over the row
      int8_t value = 0;
      if (!read(m, 0, &value, why)) return false;
      operand_of_[node.outputs[0]] = value;
      return store_if_read(m, value, why);
    }
    return fail("member '" + node.name + "' (" + node.op_type + ") is neither elementwise nor a row reduction", why);
  }

  std::unique_ptr<GroupKernel> finish(std::string* why) {
    if (p_.steps.empty() || p_.outputs.empty()) {
      *why = "nothing for a row program to compute";
      return nullptr;
    }
    const int sms = current_device_multiprocessors();
    const RowProgramSource source = row_program_source(p_, sms);
    cudaKernel_t kernel = compile_kernel(view_.cuda.timing->ledger, source.text, kRowProgramKernelName, why);
    if (!kernel) return nullptr;
    return std::make_unique<RowProgramKernel>(kernel, p_, source, ops_);
  }

 private:
  static bool fail(const std::string& reason, std::string* why) {
    *why = reason;
    return false;
  }

  // Operand of member m's input k: a value made inside the program, else a new input read
  // through its broadcast strides over the frame.
  bool read(size_t m, int k, int8_t* operand, std::string* why) {
    const int id = view_.source(view_.node(m).inputs[k]);
    const TensorSpec& spec = view_.spec(m).inputs[k];
    const std::vector<int64_t> strides = broadcast_strides(spec.shape, full_);
    // A value made inside, or an input already read through the same strides (a view of a tensor
    // may broadcast it otherwise: then it is read again).
    if (auto it = operand_of_.find(id); it != operand_of_.end() && (it->second < 0 || input_strides_[it->second] == strides)) {
      *operand = static_cast<int8_t>(it->second);
      return true;
    }
    if (!takes_dtype(kFloatDtypes, spec.dtype)) return fail("a row program input is not a float tensor", why);
    if (p_.inputs.size() == size_t(kChainMaxInputs)) return fail("more than 8 row program inputs", why);
    RowInput in;
    in.data = view_.buffers.data(id);
    in.type = element_type(spec.dtype);
    in.row_strides.assign(strides.begin(), strides.begin() + p_.row_dims.size());
    // Along the row: one stride for the merged trailing dims, or none (a value per row).
    in.column_stride = row_stride(strides, full_, p_.row_dims.size());
    if (in.column_stride < 0) return fail("a row program input is not one stride along the row", why);
    *operand = static_cast<int8_t>(p_.inputs.size());
    operand_of_[id] = *operand;
    p_.inputs.push_back(in);
    input_strides_.push_back(strides);
    return true;
  }

  // exp(x - max) / sum, or (x - max) - log(sum): the max and the sum are the row's reductions.
  bool add_softmax(size_t m, int x, bool log_softmax, std::string* why) {
    if (p_.steps.size() + 6 > size_t(kChainMaxSteps)) return fail("a row program longer than 24 steps", why);
    auto push = [&](RowStep s) {
      p_.steps.push_back(s);
      return -int(p_.steps.size());
    };
    RowStep max;
    max.reduction = true;
    max.fold = ReduceOp::kMax;
    max.operand[0] = static_cast<int8_t>(x);
    const int top = push(max);
    const int shifted = push(binary(ElementwiseOp::kSub, x, top));
    const int e = push(unary(ElementwiseOp::kExp, shifted));
    RowStep sum;
    sum.reduction = true;
    sum.operand[0] = static_cast<int8_t>(e);
    const int total = push(sum);
    if (!log_softmax) return close(m, binary(ElementwiseOp::kDiv, e, total), why);
    const int log_total = push(unary(ElementwiseOp::kLog, total));
    return close(m, binary(ElementwiseOp::kSub, shifted, log_total), why);
  }
  static RowStep unary(ElementwiseOp op, int a) {
    RowStep s;
    s.op = op;
    s.operand[0] = static_cast<int8_t>(a);
    return s;
  }
  static RowStep binary(ElementwiseOp op, int a, int b) {
    RowStep s = unary(op, a);
    s.operand[1] = static_cast<int8_t>(b);
    return s;
  }

  bool close(size_t m, const RowStep& step, std::string* why) {
    if (p_.steps.size() == size_t(kChainMaxSteps)) return fail("a row program longer than 24 steps", why);
    p_.steps.push_back(step);
    const int value = -int(p_.steps.size());
    operand_of_[view_.node(m).outputs[0]] = value;
    ops_ += (ops_.empty() ? "" : ",") + view_.node(m).op_type;
    return store_if_read(m, value, why);
  }

  // Member m's value is stored where the group's readers need it, and by the last member.
  bool store_if_read(size_t m, int value, std::string* why) {
    const int out = view_.node(m).outputs[0];
    if (!view_.is_output(out) && m != last_) return true;
    const TensorSpec& spec = view_.spec(m).outputs[0];
    if (!takes_dtype(kFloatDtypes, spec.dtype)) return fail("a row program output is not a float tensor", why);
    if (p_.outputs.size() == size_t(kChainMaxOutputs)) return fail("more than 4 row program outputs", why);
    if (value >= 0) {  // an input stored as it is: an identity step
      RowStep copy;
      copy.operand[0] = static_cast<int8_t>(value);
      p_.steps.push_back(copy);
      value = -int(p_.steps.size());
    }
    RowOutput o;
    o.data = view_.buffers.data(out);
    o.type = element_type(spec.dtype);
    o.step = -value - 1;
    o.per_row = element_count(spec.shape) == double(p_.rows());
    if (!o.per_row && element_count(spec.shape) != double(p_.rows()) * double(p_.row_length))
      return fail("a row program output of another shape", why);
    p_.outputs.push_back(o);
    return true;
  }

  const GroupView& view_;
  const size_t last_;
  Shape full_;
  RowProgram p_;
  std::map<int, int> operand_of_;  // tensor id -> operand (>= 0 input, < 0 step)
  std::vector<std::vector<int64_t>> input_strides_;  // each input's strides over the frame
  std::string ops_;
};

}  // namespace

std::unique_ptr<GroupKernel> make_row_program_kernel(const GroupView& view, const std::vector<size_t>& members, std::string* why) {
  // The frame is the first reduction's; elementwise work before it (RMSNorm's square) reads it.
  const RowView* first = nullptr;
  size_t at = 0;
  for (size_t m : members) {
    if (const auto* r = std::get_if<ReducePlan>(&view.plan(m))) first = r;
    if (const auto* s = std::get_if<SoftmaxPlan>(&view.plan(m))) first = s;
    if (first) {
      at = m;
      break;
    }
  }
  if (!first) {
    *why = "no reduction";
    return nullptr;
  }
  RowProgramBuilder builder(view, members.back());
  if (!builder.set_frame(*first, at, why)) return nullptr;
  for (size_t m : members)
    if (!builder.add(m, why)) return nullptr;
  return builder.finish(why);
}

}  // namespace modelcost::cuda
