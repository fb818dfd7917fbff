// An op's traits, declared in its rule row's block (op_registry.h): the form of kernel a runtime
// runs for it, which the fusion stage, the roofline, the LLM recogniser and measurement read
// instead of lists of op names of their own.
#pragma once
#include <cstdint>

namespace modelcost {

// What kind of kernel a node of the op is, whatever its domain or spelling: ONNX Runtime's
// FusedConv is a kConv as Conv is, SkipLayerNormalization a kNorm as LayerNormalization is.
enum class OpForm : uint8_t {
  kUnset,      // no traits declared (a user rule): read from its cost (MACs: kGemm, else kOther)
  kConv,       // convolutions (dense, grouped, depthwise, transposed; float and quantized)
  kGemm,       // matrix products: MatMul, Gemm, Einsum, their fused and quantized forms, RNN cells
  kAttention,  // fused attention ops (the products, the softmax and the mask in one op)
  kPointwise,  // elementwise math, activations, casts, selects, per-channel affine (inference BN)
  kReduction,  // reductions along axes, softmax, cumulative sums
  kNorm,       // normalisations: a row reduction with its pointwise prologue and epilogue
  kPooling,    // window and global pooling
  kLayout,     // indexing changes: reshape, transpose, slice, concat, pad, tile
  kGather,     // gathers that read selected rows or elements
  kScatter,    // scatters and other indexed writes
  kOther,      // runs alone: control flow, sequences, generators, resize, sort and selection, ml
};
const char* op_form_name(OpForm form);

struct OpTraits {
  OpForm form = OpForm::kUnset;
  bool integer_math = false;  // computes on integer-quantized operands (int8 peak) whatever its activations
  bool view = false;          // its output is a view of its input's buffer in every runtime (Reshape, Squeeze, ...)
  constexpr OpTraits(OpForm f = OpForm::kUnset, bool integer = false, bool is_view = false)  // NOLINT: rows name a form alone
      : form(f), integer_math(integer), view(is_view) {}
  bool matrix() const { return form == OpForm::kConv || form == OpForm::kGemm || form == OpForm::kAttention; }
};

}  // namespace modelcost
