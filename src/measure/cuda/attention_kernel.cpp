// Attention groups on the own flash-attention kernel (flash_attention.cu). Shapes come from the
// group's two matrix products (scores = Q K^T: [bh, sq, sk] with head dim d; P V), the scale
// from its constant scalar Mul / Div members before the Softmax, the mask from an Add member's
// input computed outside the group. Q, K and V are read from the group's inputs where they are
// [bh, s, d] tensors (K through a transpose member); where the layout moves of the group (head
// split of a packed QKV projection) would have to run first, contiguous copies of the same
// size stand in, as a runtime's attention reads them through strides.
#include <cmath>

#include "measure/cuda/fused_kernels.h"
#include "measure/cuda/group_runner.h"

namespace modelcost::cuda {
namespace {

class AttentionKernel : public GroupKernel {
 public:
  AttentionKernel(const AttentionShape& shape, const void* q, const void* k, const void* v, void* o, std::string note)
      : shape_(shape), q_(q), k_(k), v_(v), o_(o), note_(std::move(note)) {}
  std::vector<DeviceBuffer> owned;
  void launch(cudaStream_t stream) override { launch_flash_attention(shape_, q_, k_, v_, o_, stream); }
  std::string implementation() const override {
    return "flash attention kernel (own, fp16 mma.sync, d " + std::to_string(shape_.d) + (shape_.mask ? ", mask" : "") +
           (shape_.group > 1 ? ", gqa" : "") + note_ + ")";
  }

 private:
  AttentionShape shape_;
  const void *q_, *k_, *v_;
  void* o_;
  std::string note_;
};

double known_scalar(const TensorSpec& t) {
  if (!t.value || t.value->size() != 1) return NAN;
  return t.value->as_double(0);
}

}  // namespace

std::unique_ptr<GroupKernel> make_attention_kernel(const GroupView& view, std::string* why) {
  std::vector<size_t> products, softmax;
  for (size_t m : view.group.members) {
    if (std::holds_alternative<MatMulParams>(view.plan(m))) products.push_back(m);
    if (std::holds_alternative<SoftmaxPlan>(view.plan(m))) softmax.push_back(m);
  }
  if (products.size() != 2 || softmax.size() != 1) {
    *why = "attention group without exactly two matrix products and one softmax";
    return nullptr;
  }
  const auto& scores = std::get<MatMulParams>(view.plan(products[0]));
  const auto& pv = std::get<MatMulParams>(view.plan(products[1]));
  const NodeSpec& s_spec = view.spec(products[0]);
  if (s_spec.outputs[0].dtype != 10 || view.spec(products[1]).outputs[0].dtype != 10) {
    *why = "the flash-attention kernel runs fp16";
    return nullptr;
  }
  AttentionShape shape;
  shape.bh = scores.batch;
  shape.sq = scores.m;
  shape.sk = scores.n;
  shape.d = scores.k;
  const Shape& score_shape = s_spec.outputs[0].shape;
  shape.heads = score_shape.size() >= 3 ? score_shape[score_shape.size() - 3] : 1;
  if (pv.batch != shape.bh || pv.k != shape.sk || pv.n != shape.d || pv.m != shape.sq || shape.heads <= 0) {
    *why = "the two products do not chain as attention";
    return nullptr;
  }
  if (shape.d != 32 && shape.d != 64 && shape.d != 128) {
    *why = "head dim " + std::to_string(shape.d) + " (the kernel runs 32, 64, 128)";
    return nullptr;
  }
  const double kv_elements = view.spec(products[1]).inputs[1].elements();
  const int64_t kv_bh = static_cast<int64_t>(kv_elements / double(shape.sk * shape.d));
  shape.group = kv_bh > 0 && shape.bh % kv_bh == 0 ? shape.bh / kv_bh : 1;
  double scale = 1;
  for (size_t m : view.group.members) {
    if (m > softmax[0]) break;
    const auto* e = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!e || (e->op != ElementwiseOp::kMul && e->op != ElementwiseOp::kDiv)) continue;
    const double v = known_scalar(view.spec(m).in(1));
    if (std::isfinite(v) && v != 0) scale = e->op == ElementwiseOp::kMul ? scale * v : scale / v;
    if (e->op == ElementwiseOp::kMul && !std::isfinite(v)) {
      const double v0 = known_scalar(view.spec(m).in(0));
      if (std::isfinite(v0)) scale *= v0;
    }
  }
  shape.scale = static_cast<float>(scale);
  for (size_t m : view.group.members) {
    const auto* e = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!e || e->op != ElementwiseOp::kAdd || m > softmax[0] || m < products[0]) continue;
    for (size_t k = 0; k < 2; ++k) {
      const int t = view.node(m).inputs[k];
      const TensorSpec& spec = view.spec(m).inputs[k];
      if (view.producer(t) >= 0 || spec.dtype != 10 || score_shape.size() < 2) continue;
      const std::vector<int64_t> st = broadcast_strides(spec.shape, score_shape);
      const size_t r = st.size();
      shape.mask = view.buffers.data(t);
      shape.mask_j = st[r - 1];
      shape.mask_i = st[r - 2];
      shape.mask_h = r >= 3 ? st[r - 3] : 0;
      shape.mask_b = r >= 4 ? st[r - 4] : 0;
    }
  }
  // Q from the scores product's first input; K through a transposing member; V the second
  // product's second input.
  const double q_count = double(shape.bh * shape.sq * shape.d), kv_count = double(kv_bh * shape.sk * shape.d);
  auto external = [&](int t, double count) -> const void* {
    const int src = view.source(t);
    if (view.producer(src) >= 0) return nullptr;
    return count > 0 ? view.buffers.data(src) : nullptr;
  };
  const void* q = external(view.node(products[0]).inputs[0], q_count);
  const void* v = external(view.node(products[1]).inputs[1], kv_count);
  const void* k = nullptr;
  const int k_t = view.source(view.node(products[0]).inputs[1]);
  const int k_producer = view.producer(k_t);
  const std::vector<int64_t> perm = k_producer >= 0 ? view.spec(k_producer).attributes.get_ints("perm") : std::vector<int64_t>{};
  bool swaps_last_two = perm.size() >= 2;
  for (size_t i = 0; i < perm.size(); ++i)
    swaps_last_two = swaps_last_two && perm[i] == int64_t(i + 2 == perm.size() ? i + 1 : i + 1 == perm.size() ? i - 1 : i);
  if (k_producer >= 0 && view.node(k_producer).op_type == "Transpose" && swaps_last_two) k = external(view.node(k_producer).inputs[0], kv_count);
  const int out = view.node(products[1]).outputs[0];
  std::vector<DeviceBuffer> owned;
  std::string note;
  auto stand_in = [&](double count) {
    owned.emplace_back(static_cast<size_t>(count * 2));
    launch_fill_random(ElementType::kFloat16, owned.back().data(), static_cast<int64_t>(count), -1.f, 1.f, owned.size(),
                       view.cuda.stream);
    return owned.back().data();
  };
  if (!q || !k || !v) note = ", Q/K/V read as contiguous copies";
  if (!q) q = stand_in(q_count);
  if (!k) k = stand_in(kv_count);
  if (!v) v = stand_in(kv_count);
  auto kernel = std::make_unique<AttentionKernel>(shape, q, k, v, view.buffers.data(out), note);
  kernel->owned = std::move(owned);
  return kernel;
}

}  // namespace modelcost::cuda
