// A MatMul / Gemm with its epilogue in one cuBLASLt call: D = act(A B + C + bias) with the bias
// a [N] vector in the epilogue (CUBLASLT_EPILOGUE_BIAS, RELU_BIAS, GELU_BIAS; cuBLASLt's GELU is
// the tanh form) and the residual through C with beta = 1; a BatchNorm over the product's rows
// folded into a copy of the constant weight and the bias; a sequence-first [S, B, N] -> [B, S, N]
// transpose between the product and its residual is folded into the store (cublaslt_product.h).
// The algorithm is the heuristic's first, or the fastest of its candidates with --autotune.
// A 1x1 conv over a channels-last tensor is the same product ([N*H*W, C] x [OC, C]^T), so conv
// groups take this kernel too where it beats cuDNN's.
#include <memory>

#include "deployed/group_runner.h"
#include "gemm/cublaslt_product.h"

namespace modelcost::cuda {
namespace {

cublasLtEpilogue_t epilogue_of(bool bias, EpilogueActivation act) {
  switch (act) {
    case EpilogueActivation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case EpilogueActivation::kGelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

class FusedGemmKernel : public GroupKernel {
 public:
  static constexpr auto kDtypes = kFloatDtypes;
  // A 1x1 conv is one GEMM channels-last only.
  static constexpr auto kConvDtypes = kHalfDtypes;

  ~FusedGemmKernel() override {
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  // `conv`: the anchor is a 1x1 conv and `m` its GEMM.
  bool prepare(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m, bool conv, std::string* why) {
    handle_ = view.cuda.lt;
    conv_ = conv;
    const Node& node = view.node(e.anchor);
    const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
    if (!takes_dtype(kDtypes, dtype)) {
      *why = "matrix product in an unsupported dtype";
      return false;
    }
    const cudaDataType_t type = dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F;
    using Bias = MatMulParams::Bias;
    const bool own_bias = m.bias == Bias::kRow && m.beta == 1.0;
    if ((m.bias != Bias::kNone && !own_bias) || m.alpha != 1.0) {
      *why = "Gemm with a bias other than a [N] row, or alpha != 1";
      return false;
    }
    a_ptr_ = view.buffers.data(node.inputs[0]);
    b_ptr_ = view.buffers.data(node.inputs[1]);
    d_ptr_ = view.buffers.data(e.output);
    c_ptr_ = e.residual >= 0 ? view.buffers.data(e.residual) : d_ptr_;
    beta_ = e.residual >= 0 ? 1.f : 0.f;
    const void* bias = own_bias ? view.buffers.data(node.inputs[2]) : e.bias >= 0 ? view.buffers.data(e.bias) : nullptr;
    if (e.folds_into_weights()) {  // folded into the weight's columns, the rest into the bias
      folded_ = e.batch_norm >= 0 ? fold_batch_norm_into_weights(view, e, m) : fold_column_scale_into_weights(view, e, m);
      b_ptr_ = folded_.weights.data();
      bias = folded_.bias.data();
      scale_folded_ = e.column_scale >= 0;
    }
    // fp32 runs TF32 tensor cores only where asked (--dtype tf32), as the per-node product does.
    const bool tf32 = dtype == 1 && view.spec(e.anchor).allow_tf32;
    MC_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc_, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_first = m.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_second = m.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
    MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
    const cublasLtEpilogue_t epilogue = epilogue_of(bias != nullptr, e.activation);
    MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    if (bias) {
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
    }
    layouts_ = std::make_unique<LtProductLayouts>(m, type, e.interleaved_rows);
    bias_ = bias != nullptr;
    activation_ = e.activation;
    residual_ = e.residual >= 0;
    interleaved_ = e.interleaved_rows > 1;
    auto call = [this](const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) { return this->call(algo, stream); };
    if (choose_lt_algorithm(view.cuda, desc_, *layouts_, workspace_, call, choice_)) return true;
    *why = "cuBLASLt offers no algorithm for this epilogue";
    return false;
  }

  void launch(cudaStream_t stream) override { MC_CUBLASLT_CHECK(call(choice_.algo, stream)); }

  std::string implementation() const override {
    std::string s = conv_ ? "conv 1x1 as GEMM: cublasLt" : "cublasLt";
    if (folded_.weights.data()) s += scale_folded_ ? " +folded column scale" : " +folded batch norm";
    if (bias_) s += " +bias";
    if (activation_ == EpilogueActivation::kRelu) s += " +relu";
    if (activation_ == EpilogueActivation::kGelu) s += " +gelu(tanh)";
    if (residual_) s += " +residual (C, beta 1)";
    if (interleaved_) s += " +transposed store";
    return s + " epilogue";
  }

 private:
  cublasStatus_t call(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
    const LtProductLayouts& l = *layouts_;
    return cublasLtMatmul(handle_, desc_, &alpha_, b_ptr_, l.b, a_ptr_, l.a, &beta_, c_ptr_, l.c, d_ptr_, l.d, &algo,
                          workspace_.data(), workspace_.bytes(), stream);
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  std::unique_ptr<LtProductLayouts> layouts_;
  LtAlgorithmChoice choice_;
  DeviceBuffer workspace_;
  WeightsWithBatchNorm folded_;  // the weight and bias with the epilogue's BatchNorm in them
  const void *a_ptr_ = nullptr, *b_ptr_ = nullptr, *c_ptr_ = nullptr;
  void* d_ptr_ = nullptr;
  float alpha_ = 1.f, beta_ = 0.f;
  bool bias_ = false, residual_ = false, interleaved_ = false;
  bool conv_ = false;  // a 1x1 conv run as its GEMM
  bool scale_folded_ = false;  // the folded factor is a column scale (else a BatchNorm)
  EpilogueActivation activation_ = EpilogueActivation::kNone;
};

}  // namespace

std::unique_ptr<GroupKernel> make_fused_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why) {
  if (e.second_residual >= 0) {
    *why = "cuBLASLt's epilogue takes one residual";
    return nullptr;
  }
  const EpilogueActivation act = e.activation;
  if (act != EpilogueActivation::kNone && act != EpilogueActivation::kRelu && act != EpilogueActivation::kGelu) {
    *why = "cuBLASLt's epilogues take ReLU and GELU only";
    return nullptr;
  }
  auto kernel = std::make_unique<FusedGemmKernel>();
  MatMulParams m;
  if (const auto* conv = std::get_if<ConvParams>(&view.plan(e.anchor))) {
    const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
    if (!is_pointwise_gemm_conv(*conv) || !view.cuda.channels_last_half || !takes_dtype(FusedGemmKernel::kConvDtypes, dtype)) {
      *why = "only a channels-last fp16/bf16 1x1 conv is one GEMM";
      return nullptr;
    }
    m = conv_gemm_params(*conv);
  } else {
    m = std::get<MatMulParams>(view.plan(e.anchor));
  }
  const bool conv = std::holds_alternative<ConvParams>(view.plan(e.anchor));
  if (!kernel->prepare(view, e, m, conv, why)) return nullptr;
  if (conv || e.folds_into_weights()) return kernel;
  if (auto thin = make_thin_gemm_kernel(view, e, m))
    return make_timed_choice(std::move(thin), std::move(kernel), view.cuda, group_measurement_key(view, "thin product or cublasLt"));
  if (auto skinny = make_skinny_gemm_kernel(view, e, m))
    return make_timed_choice(std::move(skinny), std::move(kernel), view.cuda, group_measurement_key(view, "skinny product or cublasLt"));
  return kernel;
}

}  // namespace modelcost::cuda
