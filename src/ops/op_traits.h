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

// A block's traits: a form, then any of the named traits below, e.g.
// `OpTraits(OpForm::kLayout).with_view()`, `OpTraits(OpForm::kGemm).with_integer_math()`.
struct OpTraits {
  OpForm form = OpForm::kUnset;
  bool integer_math = false;  // computes on integer-quantized operands (int8 peak) whatever its activations
  bool view = false;          // its output is a view of its input's buffer in every runtime (Reshape, Squeeze, ...)
  // A permutation of its input's axes that a neighbouring kernel reads through strides or its
  // operand layout (a GEMM's transposed operand, attention's K^T): Transpose.
  bool permutation = false;
  bool repeat = false;      // its output repeats its input along broadcast axes (Expand, Tile)
  bool conversion = false;  // its output is its input's values in another element type (Cast)
  // A library conv call takes it in its fused epilogue (cuDNN's conv-bias-add-activation): the
  // bias or residual add, ReLU, a folded per-channel scale or shift.
  bool conv_epilogue = false;
  // What a GEMM or conv library call's own epilogue applies (the deployed runtime's kernel plan):
  // the sum of two operands, taken as the bias or the residual; an activation (ReLU, Clip as ReLU6).
  bool epilogue_add = false;
  bool epilogue_activation = false;
  // The product of two operands: by a constant per-column vector (a layer scale) right after a
  // product with a constant weight, it folds into the weight's columns and the bias.
  bool epilogue_scale = false;
  // Normalises with stored per-channel statistics (inference BatchNormalization): folds into the
  // weights of a conv whose output it reads; anywhere else a per-channel scale and shift of the
  // chain (two steps) or of a depthwise kernel's store.
  bool stored_statistics = false;
  bool transposed_conv = false;  // weights [C_in, C_out/group, k...], the output the larger (ConvTranspose)
  bool free_dim_order = false;   // operand and output dims in any order its equation names (Einsum)
  // A reduction over a row the generated row kernel computes with its pointwise prologue and
  // epilogue: one that folds each value in as it streams the row (sum, mean, max, min, sum of
  // squares, L2 norm), or a softmax (a max, then a sum of exponentials).
  bool row_program = false;

  constexpr OpTraits(OpForm f = OpForm::kUnset) : form(f) {}  // NOLINT: rows name a form alone
  constexpr OpTraits with_integer_math() const { return with(&OpTraits::integer_math); }
  constexpr OpTraits with_view() const { return with(&OpTraits::view); }
  constexpr OpTraits with_permutation() const { return with(&OpTraits::permutation); }
  constexpr OpTraits with_repeat() const { return with(&OpTraits::repeat); }
  constexpr OpTraits with_conversion() const { return with(&OpTraits::conversion); }
  constexpr OpTraits with_conv_epilogue() const { return with(&OpTraits::conv_epilogue); }
  constexpr OpTraits with_epilogue_add() const { return with(&OpTraits::epilogue_add); }
  constexpr OpTraits with_epilogue_activation() const { return with(&OpTraits::epilogue_activation); }
  constexpr OpTraits with_epilogue_scale() const { return with(&OpTraits::epilogue_scale); }
  constexpr OpTraits with_stored_statistics() const { return with(&OpTraits::stored_statistics); }
  constexpr OpTraits with_transposed_conv() const { return with(&OpTraits::transposed_conv); }
  constexpr OpTraits with_free_dim_order() const { return with(&OpTraits::free_dim_order); }
  constexpr OpTraits with_row_program() const { return with(&OpTraits::row_program); }

  bool matrix() const { return form == OpForm::kConv || form == OpForm::kGemm || form == OpForm::kAttention; }
  // Runs in no kernel of its own next to the kernel that reads it: a view, or a permutation that
  // kernel reads through strides.
  bool folds_into_operand() const { return view || permutation; }
  // Its output holds every value of its (first) input and nothing else, moved or converted: a view,
  // a permutation, a repeat or a conversion.
  bool keeps_values() const { return view || permutation || repeat || conversion; }

 private:
  constexpr OpTraits with(bool OpTraits::*trait) const {
    OpTraits t = *this;
    t.*trait = true;
    return t;
  }
};

}  // namespace modelcost
