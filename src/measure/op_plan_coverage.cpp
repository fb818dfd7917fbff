// Which standard op types measurement covers, and for the others the reason, named once here
// (tests/measure/op_coverage_test.cpp checks every op of the op table is one or the other).
#include <map>

#include "measure/op_plan_internal.h"

namespace modelcost {
namespace {

// Ops with no GPU path yet, and why. Nodes of these report the reason as "not measured".
const std::map<std::string, std::string>& gaps() {
  static const std::map<std::string, std::string> table = {
      // Data-dependent output shapes: a measurement needs the real data.
      {"NonZero", "data-dependent output shape"}, {"Unique", "data-dependent output shape"},
      {"NonMaxSuppression", "data-dependent output shape"}, {"Compress", "data-dependent output shape"},
      // Control flow and sequences run subgraphs the measure stage does not replay.
      {"If", "control flow (subgraphs)"}, {"Loop", "control flow (subgraphs)"}, {"Scan", "control flow (subgraphs)"},
      {"SequenceAt", "sequence op"}, {"SequenceConstruct", "sequence op"}, {"SequenceEmpty", "sequence op"},
      {"SequenceErase", "sequence op"}, {"SequenceInsert", "sequence op"}, {"SequenceLength", "sequence op"},
      {"SequenceMap", "sequence op"}, {"SplitToSequence", "sequence op"}, {"ConcatFromSequence", "sequence op"},
      {"Optional", "optional op"}, {"OptionalGetElement", "optional op"}, {"OptionalHasElement", "optional op"},
      // Random generators: their cost is the generator, not a data movement we reproduce.
      {"RandomNormal", "random generator"}, {"RandomNormalLike", "random generator"},
      {"RandomUniform", "random generator"}, {"RandomUniformLike", "random generator"}, {"Multinomial", "random generator"},
      {"Bernoulli", "random generator"},
      // Not built yet: named so the reports say so.
      {"TopK", "no GPU kernel yet (sort-based)"}, {"Einsum", "no GPU kernel yet (general contraction)"},
      {"LSTM", "no GPU kernel yet (recurrent)"}, {"GRU", "no GPU kernel yet (recurrent)"},
      {"RNN", "no GPU kernel yet (recurrent)"}, {"ConvTranspose", "no GPU kernel yet"},
      {"ConvInteger", "no GPU kernel yet (integer conv)"}, {"MatMulInteger", "no GPU kernel yet (integer GEMM)"},
      {"QLinearConv", "no GPU kernel yet (quantized)"}, {"QLinearMatMul", "no GPU kernel yet (quantized)"},
      {"QuantizeLinear", "no GPU kernel yet (quantized)"}, {"DequantizeLinear", "no GPU kernel yet (quantized)"},
      {"DynamicQuantizeLinear", "no GPU kernel yet (quantized)"},
      {"InstanceNormalization", "no GPU kernel yet"}, {"GroupNormalization", "no GPU kernel yet"},
      {"LpNormalization", "no GPU kernel yet"}, {"MeanVarianceNormalization", "no GPU kernel yet"},
      {"RMSNormalization", "no GPU kernel yet"}, {"LRN", "no GPU kernel yet"}, {"LpPool", "no GPU kernel yet"},
      {"MaxRoiPool", "no GPU kernel yet"}, {"RoiAlign", "no GPU kernel yet"}, {"MaxUnpool", "no GPU kernel yet"},
      {"GlobalLpPool", "no GPU kernel yet"}, {"Hardmax", "no GPU kernel yet"}, {"OneHot", "no GPU kernel yet"},
      {"EyeLike", "no GPU kernel yet"}, {"ConstantOfShape", "no GPU kernel yet"}, {"Trilu", "no GPU kernel yet"},
      {"ReverseSequence", "no GPU kernel yet"}, {"DepthToSpace", "no GPU kernel yet"},
      {"SpaceToDepth", "no GPU kernel yet"}, {"GridSample", "no GPU kernel yet"}, {"AffineGrid", "no GPU kernel yet"},
      {"Col2Im", "no GPU kernel yet"}, {"CenterCropPad", "no GPU kernel yet"}, {"Det", "no GPU kernel yet"},
      {"DFT", "no GPU kernel yet"}, {"STFT", "no GPU kernel yet"}, {"HannWindow", "no GPU kernel yet"},
      {"HammingWindow", "no GPU kernel yet"}, {"BlackmanWindow", "no GPU kernel yet"},
      {"MelWeightMatrix", "no GPU kernel yet"}, {"Attention", "no GPU kernel yet (fused attention)"},
      {"RotaryEmbedding", "no GPU kernel yet"}, {"TfIdfVectorizer", "no GPU kernel yet (strings)"},
      {"StringNormalizer", "strings"}, {"StringConcat", "strings"}, {"StringSplit", "strings"},
      {"RegexFullMatch", "strings"}, {"ImageDecoder", "image decoding"},
      {"NegativeLogLikelihoodLoss", "training loss"}, {"SoftmaxCrossEntropyLoss", "training loss"},
      {"Gradient", "training op"}, {"Momentum", "training op"}, {"Adagrad", "training op"}, {"Adam", "training op"},
      {"Swish", "no GPU kernel yet"}, {"SimplifiedLayerNormalization", "no GPU kernel yet"},
      {"DeformConv", "no GPU kernel yet"}, {"BitCast", "no GPU kernel yet"}, {"TensorScatter", "no GPU kernel yet"},
      {"CumProd", "no GPU kernel yet"},
  };
  return table;
}

}  // namespace

std::string measurement_gap(const std::string& op_type) {
  if (plan_detail::has_planner(op_type)) return "";
  auto it = gaps().find(op_type);
  return it == gaps().end() ? "no measurement kernel for " + op_type : it->second;
}

bool gap_is_named(const std::string& op_type) { return gaps().count(op_type) > 0; }

}  // namespace modelcost
