// Sibling products (the fusion stage's "sibling_products" group: Q, K and V of one input, or a
// gated MLP's gate and up) as one strided batched cuBLASLt call: the shared input is batch
// stride 0, the weights are stacked into one [S, K, N] copy at preparation (as torch.compile's
// freezing concatenates them), the biases into [S, N] read by the bias epilogue with a batch
// stride, and the S results land side by side, where ModelBuffers placed them.
#include <memory>

#include "deployed/group_runner.h"
#include "gemm/cublaslt_product.h"

namespace modelcost::cuda {
namespace {

// One product of the set: its matrix member, its bias tensor (-1: none) and the tensor it leaves.
struct SiblingProduct {
  size_t node = 0;
  int bias = -1;
  int output = -1;
};

// Copies `parts` (device buffers of `bytes` each) one after another into `stacked`.
void stack(const std::vector<const void*>& parts, size_t bytes, DeviceBuffer& stacked, cudaStream_t stream) {
  stacked.resize(parts.size() * bytes);
  for (size_t s = 0; s < parts.size(); ++s)
    MC_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(stacked.data()) + s * bytes, parts[s], bytes, cudaMemcpyDeviceToDevice, stream));
}

class SiblingProductsKernel : public GroupKernel {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  ~SiblingProductsKernel() override {
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  bool prepare(const GroupView& view, std::string* why) {
    std::vector<SiblingProduct> products;
    MatMulParams m;
    if (!read_products(view, products, m, why)) return false;
    const int32_t dtype = view.spec(products[0].node).outputs[0].dtype;
    const size_t element = static_cast<size_t>(dtype_size(dtype));
    const size_t out_bytes = static_cast<size_t>(m.m * m.n) * element;
    d_ptr_ = view.buffers.data(products[0].output);
    for (size_t s = 0; s < products.size(); ++s)
      if (view.buffers.data(products[s].output) != static_cast<char*>(d_ptr_) + s * out_bytes) {
        *why = "the sibling products' results are not side by side in memory";
        return false;
      }
    a_ptr_ = view.buffers.data(view.node(products[0].node).inputs[0]);
    std::vector<const void*> weights, biases;
    for (const SiblingProduct& p : products) {
      weights.push_back(view.buffers.data(view.node(p.node).inputs[1]));
      if (p.bias >= 0) biases.push_back(view.buffers.data(p.bias));
    }
    stack(weights, static_cast<size_t>(m.k * m.n) * element, weights_, view.cuda.stream);
    if (!biases.empty()) stack(biases, static_cast<size_t>(m.n) * element, biases_, view.cuda.stream);
    count_ = products.size();
    m.batch = static_cast<int64_t>(count_);
    m.a_batch_stride = 0;  // the one input, read by every product
    m.b_batch_stride = m.k * m.n;
    return describe(view, m, dtype, why);
  }

  void launch(cudaStream_t stream) override { MC_CUBLASLT_CHECK(call(choice_.algo, stream)); }

  std::string implementation() const override {
    return "cublasLt strided batch of " + std::to_string(count_) + " sibling products (one input, stacked weights)" +
           (biases_.data() ? " +bias epilogue" : "");
  }

 private:
  // The products in member order, each of the same plain product shape, their results in the
  // order the fusion stage names them.
  static bool read_products(const GroupView& view, std::vector<SiblingProduct>& products, MatMulParams& m, std::string* why) {
    const std::vector<int> outputs = sibling_outputs(view.group, view.analysis);
    for (size_t member : view.group.members) {
      const auto* params = std::get_if<MatMulParams>(&view.plan(member));
      if (!params) continue;
      if (products.empty()) m = *params;
      if (params->batch != 1 || params->m != m.m || params->n != m.n || params->k != m.k || params->trans_a ||
          params->trans_b || params->bias != MatMulParams::Bias::kNone || params->alpha != 1.0) {
        *why = "sibling products of different or batched shapes";
        return false;
      }
      products.push_back({member, -1, -1});
    }
    if (products.size() < 2 || outputs.size() != products.size()) {
      *why = "fewer than two sibling products";
      return false;
    }
    for (size_t s = 0; s < products.size(); ++s) {
      products[s].output = outputs[s];
      const int result = view.node(products[s].node).outputs[0];
      if (outputs[s] == result) continue;
      for (int in : view.node(static_cast<size_t>(view.producer(outputs[s]))).inputs)
        if (in != result) products[s].bias = in;
    }
    if (!takes_dtype(kDtypes, view.spec(products[0].node).outputs[0].dtype)) {
      *why = "matrix product in an unsupported dtype";
      return false;
    }
    return true;
  }

  bool describe(const GroupView& view, const MatMulParams& m, int32_t dtype, std::string* why) {
    handle_ = view.cuda.lt;
    const cudaDataType_t type = dtype == 10 ? CUDA_R_16F : dtype == 16 ? CUDA_R_16BF : CUDA_R_32F;
    const bool tf32 = dtype == 1 && view.spec(view.group.anchor).allow_tf32;
    MC_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc_, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (biases_.data()) {
      const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const void* bias = biases_.data();
      const int64_t stride = m.n;
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
      MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &stride, sizeof(stride)));
    }
    layouts_ = std::make_unique<LtProductLayouts>(m, type);
    auto call = [this](const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) { return this->call(algo, stream); };
    if (choose_lt_algorithm(view.cuda, desc_, *layouts_, workspace_, call, choice_)) return true;
    *why = "cuBLASLt offers no algorithm for the batched sibling products";
    return false;
  }

  cublasStatus_t call(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) {
    const LtProductLayouts& l = *layouts_;
    return cublasLtMatmul(handle_, desc_, &alpha_, weights_.data(), l.b, a_ptr_, l.a, &beta_, d_ptr_, l.c, d_ptr_, l.d, &algo,
                          workspace_.data(), workspace_.bytes(), stream);
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  std::unique_ptr<LtProductLayouts> layouts_;
  LtAlgorithmChoice choice_;
  DeviceBuffer workspace_, weights_, biases_;
  const void* a_ptr_ = nullptr;
  void* d_ptr_ = nullptr;
  float alpha_ = 1.f, beta_ = 0.f;
  size_t count_ = 0;
};

}  // namespace

std::unique_ptr<GroupKernel> make_sibling_products_kernel(const GroupView& view, std::string* why) {
  auto kernel = std::make_unique<SiblingProductsKernel>();
  if (!kernel->prepare(view, why)) return nullptr;
  return kernel;
}

}  // namespace modelcost::cuda
