// Decoders built by hand for the LLM plan and report tests: round shapes, every weight fp16 and
// stored [K, N], so figures are easy to check by hand. Header-only.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "modelcost/llm.h"

namespace modelcost::testing {

struct HandDecoder {
  int64_t layers = 0, hidden = 0, vocab = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t mlp = 0;                                     // gated MLP width; 0: none read
  std::vector<std::pair<int64_t, int64_t>> per_layer;  // (K, N) of each layer's weight GEMMs
};

inline DecoderModel hand_decoder(const HandDecoder& s) {
  DecoderModel m;
  m.layers = s.layers;
  m.hidden = s.hidden;
  m.vocab = s.vocab;
  m.heads = s.heads;
  m.kv_heads = s.kv_heads;
  m.head_dim = s.head_dim;
  m.attention = s.kv_heads == s.heads ? "MHA" : s.kv_heads == 1 ? "MQA" : "GQA";
  m.act_dtype = m.kv_dtype = "fp16";
  m.mlp_intermediate = s.mlp;
  m.gated_mlp = s.mlp > 0;
  for (int64_t l = 0; l < s.layers; ++l)
    for (const auto& [k, n] : s.per_layer) m.gemms.push_back({"g" + std::to_string(l), "MatMul", k, n, 2.0 * k * n, "fp16"});
  m.gemms.push_back({"head", "MatMul", s.hidden, s.vocab, 2.0 * s.hidden * s.vocab, "fp16", true});
  for (const WeightGemm& g : m.gemms) m.gemm_weight_bytes += g.stored_bytes;
  return m;
}

// 4 layers, hidden 1024, 8 query / 2 kv heads of 128, one GEMM of 1024 x 4096 per layer and an
// LM head of 1024 x 32000; no MLP read (the graph-derived decode step).
inline DecoderModel hand_model() { return hand_decoder({4, 1024, 32000, 8, 2, 128, 0, {{1024, 4096}}}); }

// Llama-shaped: 2 layers, hidden 256, 4 query / 2 kv heads of 64, a gated MLP of 512, vocab 1000
// (the deployed decode step).
inline DecoderModel llama_model() {
  return hand_decoder({2, 256, 1000, 4, 2, 64, 512, {{256, 256}, {256, 128}, {256, 128}, {256, 256}, {256, 512}, {256, 512}, {512, 256}}});
}

}  // namespace modelcost::testing
