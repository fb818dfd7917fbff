// Op rules: attention family — the com.microsoft fused attention ops of ONNX Runtime (Attention,
// MultiHeadAttention, GroupQueryAttention, the packed and decoder forms, SparseAttention) and
// ai.onnx Attention of opset 23 (RotaryEmbedding: rotary_embedding.cpp). Inputs, attributes and
// output shapes follow ONNX Runtime's ContribOperators.md. Formulas: docs/ops/attention.md.
#include "ops/defs/attention_common.h"

namespace modelcost {

AttentionWork attention_work(int64_t batch, int64_t heads, int64_t q_len, int64_t kv_len, int64_t head_size,
                             int64_t v_head_size) {
  AttentionWork w;
  w.batch = static_cast<double>(batch);
  w.heads = static_cast<double>(heads);
  w.q_len = static_cast<double>(q_len);
  w.kv_len = static_cast<double>(kv_len);
  w.head_size = static_cast<double>(head_size);
  w.v_head_size = static_cast<double>(v_head_size);
  return w;
}

OpCost attention_cost(const AttentionWork& w) {
  const double scores = w.batch * w.heads * w.q_len * w.kv_len;
  OpCost cost;
  cost.macs = w.projection_macs + scores * (w.head_size + w.v_head_size);
  const double per_score = 1 /* scale */ + (w.mask ? 1 : 0) + (w.softcap ? 3 : 0) + kSoftmaxFlops;
  cost.flops = 2 * cost.macs + w.projection_flops + per_score * scores + kRotaryFlops * w.rotary_elements;
  cost.estimate = w.estimate;
  return cost;
}

int64_t per_head(const OpContext& c, int64_t hidden, int64_t heads, const char* what) {
  if (heads <= 0 || hidden % heads != 0)
    c.fail(std::string(what) + " " + std::to_string(hidden) + " is not divisible by " + std::to_string(heads) + " heads");
  return hidden / heads;
}

double rotary_fraction(const OpContext& c, size_t cos_input, int64_t head_size) {
  if (head_size <= 0) c.fail("a rotary embedding needs a head size of at least 1, got " + std::to_string(head_size));
  int64_t dim = c.attr_int("rotary_embedding_dim", 0);
  if (dim <= 0 && c.has_input(cos_input) && c.in_rank(cos_input) > 0) dim = 2 * c.in_shape(cos_input).back();
  if (dim <= 0 || dim > head_size) dim = head_size;
  return static_cast<double>(dim) / static_cast<double>(head_size);
}

namespace {

struct Output {
  int32_t dtype = 0;
  Shape shape;
  bool estimate = false;
};

// What a rule derives from one attention node: the work and each output (in node order).
struct AttentionPlan {
  AttentionWork work;
  std::vector<Output> outputs;
};

using Planner = AttentionPlan (*)(const OpContext&);

template <Planner Plan>
void infer_attention(OpContext& c) {
  const AttentionPlan p = Plan(c);
  for (size_t i = 0; i < p.outputs.size() && i < c.num_outputs(); ++i)
    c.set_output(i, p.outputs[i].dtype, p.outputs[i].shape, p.outputs[i].estimate);
}

template <Planner Plan>
OpCost cost_attention(const OpContext& c) {
  return attention_cost(Plan(c).work);
}

double d(int64_t v) { return static_cast<double>(v); }

void require_rank(const OpContext& c, size_t input, size_t rank, const char* layout) {
  if (c.in_rank(input) != rank)
    c.fail("input " + std::to_string(input) + " must be " + layout + ", got " + shape_to_string(c.in_shape(input)));
}

// A scalar input's value when known (past_sequence_length, total_sequence_length), else -1.
int64_t known_scalar(const OpContext& c, size_t input) {
  if (!c.has_input(input) || !c.value(input) || c.value(input)->size() == 0) return -1;
  return c.value(input)->as_int(0);
}

constexpr size_t kNoCosCache = static_cast<size_t>(-1);

// Query and key elements a fused rotary embedding rotates when do_rotary is set (grouped-query
// layouts: the work's query heads and kv_heads key heads per token), else 0.
double grouped_rotary_elements(const OpContext& c, const AttentionWork& w, int64_t kv_heads, size_t cos_input) {
  if (c.attr_int("do_rotary", 0) == 0) return 0;
  const double fraction = rotary_fraction(c, cos_input, static_cast<int64_t>(w.head_size));
  return w.batch * w.q_len * (w.heads + d(kv_heads)) * w.head_size * fraction;
}

void require_grouped_heads(const OpContext& c, int64_t heads, int64_t kv_heads) {
  if (heads % kv_heads != 0)
    c.fail("num_heads " + std::to_string(heads) + " is not a multiple of kv_num_heads " + std::to_string(kv_heads));
}

// The past sequence length of a [batch, heads, past_sequence, head_size] input, 0 when absent.
int64_t past_length(const OpContext& c, size_t input, const char* layout) {
  if (!c.has_input(input)) return 0;
  require_rank(c, input, 4, layout);
  return c.in_shape(input)[2];
}

// Keys attended to when the past is a buffer of max_sequence_length slots shared with the
// present: the filled length (scalar input `filled_input`) plus the new tokens; when that
// length is unknown, the buffer length stands in as an estimate.
struct SharedBufferLength {
  int64_t kv_len;
  bool estimate;
};
SharedBufferLength shared_buffer_length(const OpContext& c, size_t filled_input, int64_t buffer_len, int64_t new_len) {
  const int64_t filled = known_scalar(c, filled_input);
  return {filled >= 0 ? filled + new_len : buffer_len, filled < 0};
}

// Merged QKV weights [input_hidden, q_hidden + k_hidden + v_hidden] of (Packed)Attention, checked
// against the input's last dim: num_heads and the three hidden sizes (qkv_hidden_sizes, else thirds).
struct MergedQkv {
  int64_t heads;
  std::vector<int64_t> sizes;
};
MergedQkv merged_qkv(const OpContext& c, const Shape& x, const Shape& w) {
  if (w[0] != x.back()) c.fail("weights " + shape_to_string(w) + " do not match input " + shape_to_string(x));
  MergedQkv m{required_int_attr(c, "num_heads", 1), c.attr_ints("qkv_hidden_sizes")};
  std::vector<int64_t>& sizes = m.sizes;
  if (sizes.empty()) {
    if (w[1] % 3 != 0) c.fail("weights' second dim " + std::to_string(w[1]) + " is not 3 x hidden");
    sizes.assign(3, w[1] / 3);
  }
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != w[1])
    c.fail("qkv_hidden_sizes do not add up to the weights' second dim " + std::to_string(w[1]));
  return m;
}

// Outputs of the multi-head forms, from the work's geometry: the attention output [batch, q_len,
// heads * v_head_size], present key and value, and the scores [batch, heads, q_len, kv_len] (the
// last three estimated with the kv length).
std::vector<Output> multi_head_outputs(const OpContext& c, const AttentionWork& w, const Shape& present_k,
                                       const Shape& present_v) {
  const int32_t dtype = c.in_dtype(0);
  auto dim = [&](double v) { return checked_dim(c, v, "an attention output dim"); };
  return {{dtype, {dim(w.batch), dim(w.q_len), dim(w.heads * w.v_head_size)}},
          {dtype, present_k, w.estimate},
          {dtype, present_v, w.estimate},
          {dtype, {dim(w.batch), dim(w.heads), dim(w.q_len), dim(w.kv_len)}, w.estimate}};
}

// ---- Attention (merged QKV weights) and DecoderMaskedSelfAttention ----
// input, weights, bias, mask_index, past, attention_bias, past_sequence_length, ...
AttentionPlan plan_attention(const OpContext& c) {
  require_rank(c, 0, 3, "[batch, sequence, input_hidden]");
  require_rank(c, 1, 2, "[input_hidden, q_hidden + k_hidden + v_hidden]");
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  const auto [heads, sizes] = merged_qkv(c, x, w);
  if (sizes[0] != sizes[1]) c.fail("Q and K hidden sizes differ");
  const int64_t b = x[0], s = x[1];
  const int64_t h = per_head(c, sizes[0], heads, "hidden size"), vh = per_head(c, sizes[2], heads, "v hidden size");
  int64_t past = 0;
  bool estimate = false;
  Shape present{2, b, heads, s, h};
  int64_t kv_len = s;
  if (c.has_input(4)) {
    require_rank(c, 4, 5, "[2, batch, heads, past_sequence, head_size]");
    past = c.in_shape(4)[3];
    present = {2, b, heads, past + s, h};
    kv_len = past + s;
    if (c.attr_int("past_present_share_buffer", 0) != 0) {  // past holds max_sequence_length slots
      present = c.in_shape(4);
      const SharedBufferLength shared = shared_buffer_length(c, 6, past, s);
      kv_len = shared.kv_len;
      estimate = shared.estimate;
    }
  }
  AttentionPlan p;
  p.work = attention_work(b, heads, s, kv_len, h, vh);
  AttentionWork& work = p.work;
  work.projection_macs = d(b) * d(s) * d(x[2]) * d(w[1]);
  work.projection_flops = c.has_input(2) ? d(b) * d(s) * d(w[1]) : 0;
  work.mask = c.has_input(3) || c.has_input(5);
  if (c.attr_int("do_rotary", 0) != 0) work.rotary_elements = 2 * d(b) * d(s) * d(sizes[0]) * rotary_fraction(c, kNoCosCache, h);
  work.estimate = estimate;
  p.outputs = {{c.in_dtype(0), {b, s, sizes[2]}}, {c.in_dtype(0), present}};
  return p;
}

// ---- MultiHeadAttention ----
// query, key, value, bias, key_padding_mask, attention_bias, past_key, past_value,
// past_sequence_length, cache_indirection.
AttentionPlan plan_multi_head_attention(const OpContext& c) {
  const int64_t heads = required_int_attr(c, "num_heads", 1);
  const Shape& q = c.in_shape(0);
  int64_t b, s, h, vh, kv, hidden;
  bool key_is_cache = false;  // key / value given as [batch, heads, kv_sequence, head_size]
  if (q.size() == 5) {  // packed QKV [batch, sequence, heads, 3, head_size]
    if (q[2] != heads || q[3] != 3) c.fail("packed QKV " + shape_to_string(q) + " is not [batch, sequence, num_heads, 3, head_size]");
    b = q[0], s = q[1], h = vh = q[4], kv = s;
  } else if (q.size() == 3) {
    b = q[0], s = q[1];
    h = per_head(c, q[2], heads, "query hidden size");
    if (!c.has_input(1)) c.fail("key is required unless the query is packed QKV");
    const Shape& k = c.in_shape(1);
    if (k.size() == 5) {  // packed KV [batch, kv_sequence, heads, 2, head_size]
      if (k[2] != heads || k[3] != 2 || k[4] != h) c.fail("packed KV " + shape_to_string(k) + " does not match the query");
      kv = k[1], vh = h;
    } else {
      if (!c.has_input(2)) c.fail("value is required with an unpacked key");
      const Shape& v = c.in_shape(2);
      if (k.size() == 4) {
        key_is_cache = true;
        if (k[1] != heads || k[3] != h) c.fail("key " + shape_to_string(k) + " is not [batch, num_heads, kv_sequence, head_size]");
        kv = k[2];
        vh = v.size() == 4 ? v[3] : per_head(c, v.back(), heads, "value hidden size");
      } else if (k.size() == 3) {
        if (k[2] != q[2]) c.fail("key hidden size " + std::to_string(k[2]) + " differs from the query's " + std::to_string(q[2]));
        kv = k[1];
        vh = per_head(c, v.back(), heads, "value hidden size");
      } else {
        c.fail("key must be 3-D, 4-D or packed 5-D, got " + shape_to_string(k));
      }
    }
  } else {
    c.fail("query must be [batch, sequence, hidden] or packed QKV, got " + shape_to_string(q));
  }
  hidden = dim_product(c, heads, h, "num_heads * head_size");
  int64_t total = kv;
  bool estimate = false;
  Shape present_k{b, heads, kv, h}, present_v{b, heads, kv, vh};
  if (c.has_input(6) && !key_is_cache) {
    require_rank(c, 6, 4, "[batch, heads, past_sequence, head_size]");
    const int64_t past = c.in_shape(6)[2];
    total = past + kv;
    present_k = {b, heads, total, h};
    present_v = {b, heads, total, vh};
    if (c.has_input(8)) {  // buffer sharing: the past holds max_sequence_length slots
      present_k = c.in_shape(6);
      present_v = c.has_input(7) ? c.in_shape(7) : Shape{b, heads, past, vh};
      const SharedBufferLength shared = shared_buffer_length(c, 8, past, kv);
      total = shared.kv_len;
      estimate = shared.estimate;
    }
  }
  AttentionPlan p;
  p.work = attention_work(b, heads, s, total, h, vh);
  AttentionWork& work = p.work;
  if (c.has_input(3)) work.projection_flops = d(b) * (d(s) * d(hidden) + (key_is_cache ? 0 : d(kv) * (d(hidden) + d(heads) * d(vh))));
  work.mask = c.has_input(4) || c.has_input(5);
  work.estimate = estimate;
  p.outputs = multi_head_outputs(c, work, present_k, present_v);
  return p;
}

// ---- GroupQueryAttention ----
// query, key, value, past_key, past_value, seqlens_k, total_sequence_length, cos_cache,
// sin_cache, position_ids, attention_bias, head_sink, ...
AttentionPlan plan_group_query_attention(const OpContext& c) {
  const int64_t heads = required_int_attr(c, "num_heads", 1);
  const int64_t kv_heads = required_int_attr(c, "kv_num_heads", 1);
  require_grouped_heads(c, heads, kv_heads);
  require_rank(c, 0, 3, "[batch, sequence, hidden] or packed QKV");
  const Shape& q = c.in_shape(0);
  const int64_t b = q[0], s = q[1];
  int64_t h, kv = s;
  if (c.has_input(1)) {
    h = per_head(c, q[2], heads, "query hidden size");
    require_rank(c, 1, 3, "[batch, kv_sequence, kv_hidden]");
    const Shape& k = c.in_shape(1);
    if (k[2] != dim_product(c, kv_heads, h, "kv_num_heads * head_size"))
      c.fail("key " + shape_to_string(k) + " is not [batch, kv_sequence, kv_num_heads * head_size]");
    kv = k[1];
  } else {
    h = per_head(c, q[2], dim_sum(c, heads, dim_product(c, 2, kv_heads, "kv_num_heads"), "packed heads"), "packed QKV width");
  }
  const int64_t past = past_length(c, 3, "[batch, kv_heads, past_sequence, head_size]");
  const int64_t given_total = known_scalar(c, 6);
  const int64_t total = given_total >= 0 ? given_total : past + kv;
  const bool estimate = given_total < 0 && c.has_input(3);  // the past may be a max-length buffer
  const int64_t present_len = c.has_input(3) && given_total >= 0 ? std::max(past, given_total) : total;
  AttentionPlan p;
  p.work = attention_work(b, heads, s, total, h, h);
  AttentionWork& work = p.work;
  work.mask = c.has_input(10);
  work.softcap = c.attr_float("softcap", 0) > 0;
  work.rotary_elements = grouped_rotary_elements(c, work, kv_heads, 7);
  work.estimate = estimate;
  const int32_t dtype = c.in_dtype(0);
  const int32_t cache = c.has_input(3) ? c.in_dtype(3) : dtype;
  p.outputs = {{dtype, {b, s, heads * h}},
               {cache, {b, kv_heads, present_len, h}, estimate},
               {cache, {b, kv_heads, present_len, h}, estimate},
               {dtype, {b, heads, s, total}, estimate}};
  return p;
}

// ---- packed (padding removed) forms: token_offset [batch, sequence] gives the padded size ----

// PackedAttention: input [tokens, input_hidden], weights, bias, token_offset,
// cumulative_sequence_length, attention_bias.
AttentionPlan plan_packed_attention(const OpContext& c) {
  require_rank(c, 0, 2, "[tokens, input_hidden]");
  require_rank(c, 1, 2, "[input_hidden, q_hidden + k_hidden + v_hidden]");
  require_rank(c, 3, 2, "token_offset [batch, sequence]");
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  const auto [heads, sizes] = merged_qkv(c, x, w);
  const Shape& offsets = c.in_shape(3);
  const int64_t h = per_head(c, sizes[0], heads, "hidden size");
  const int64_t vh = per_head(c, sizes[2], heads, "v hidden size");
  AttentionPlan p;
  p.work = attention_work(offsets[0], heads, offsets[1], offsets[1], h, vh);
  AttentionWork& work = p.work;
  work.projection_macs = d(x[0]) * d(x[1]) * d(w[1]);
  work.projection_flops = c.has_input(2) ? d(x[0]) * d(w[1]) : 0;
  work.mask = c.has_input(5);
  work.estimate = d(x[0]) < element_count(offsets);  // padded products bound the real ones
  p.outputs = {{c.in_dtype(0), {x[0], sizes[2]}}};
  return p;
}

// PackedMultiHeadAttention: query [tokens, hidden] or [tokens, heads, 3, head_size], key, value,
// bias, token_offset, cumulative_sequence_length, attention_bias.
AttentionPlan plan_packed_multi_head_attention(const OpContext& c) {
  const int64_t heads = required_int_attr(c, "num_heads", 1);
  const Shape& q = c.in_shape(0);
  int64_t h, vh;
  if (q.size() == 4) {
    if (q[1] != heads || q[2] != 3) c.fail("packed QKV " + shape_to_string(q) + " is not [tokens, num_heads, 3, head_size]");
    h = vh = q[3];
  } else if (q.size() == 2) {
    h = per_head(c, q[1], heads, "query hidden size");
    if (!c.has_input(2)) c.fail("key and value are required unless the query is packed QKV");
    vh = per_head(c, c.in_shape(2).back(), heads, "value hidden size");
  } else {
    c.fail("query must be [tokens, hidden] or [tokens, num_heads, 3, head_size], got " + shape_to_string(q));
  }
  require_rank(c, 4, 2, "token_offset [batch, sequence]");
  const Shape& offsets = c.in_shape(4);
  AttentionPlan p;
  p.work = attention_work(offsets[0], heads, offsets[1], offsets[1], h, vh);
  AttentionWork& work = p.work;
  work.projection_flops = c.has_input(3) ? d(q[0]) * d(heads) * d(2 * h + vh) : 0;
  work.mask = c.has_input(6);
  work.estimate = d(q[0]) < element_count(offsets);
  p.outputs = {{c.in_dtype(0), {q[0], heads * vh}}};
  return p;
}

// ---- DecoderMaskedMultiHeadAttention (one new token per step) ----
// query, key, value, mask_index, attention_bias, past_key, past_value, past_sequence_length,
// beam_width, cache_indirection, bias.
AttentionPlan plan_decoder_masked_mha(const OpContext& c) {
  const int64_t heads = required_int_attr(c, "num_heads", 1);
  require_rank(c, 0, 3, "[batch, sequence, hidden] or packed QKV");
  const Shape& q = c.in_shape(0);
  const int64_t b = q[0], s = q[1];
  const bool cross = c.has_input(1) && c.in_rank(1) == 4;
  int64_t h, vh, kv = s, total;
  bool estimate = false;
  Shape present_k, present_v;
  if (!c.has_input(1)) {  // packed QKV: 2 * hidden + v_hidden, with v_hidden = hidden
    if (q[2] % 3 != 0) c.fail("packed QKV width " + std::to_string(q[2]) + " is not 3 x hidden");
    h = vh = per_head(c, q[2] / 3, heads, "hidden size");
  } else {
    h = per_head(c, q[2], heads, "query hidden size");
    if (!c.has_input(2)) c.fail("value is required with a key");
    const Shape& v = c.in_shape(2);
    vh = cross ? v.back() : per_head(c, v.back(), heads, "value hidden size");
    kv = cross ? c.in_shape(1)[2] : c.in_shape(1)[1];
  }
  if (cross) {
    total = kv;
    present_k = c.in_shape(1);
    present_v = c.in_shape(2);
  } else {
    const int64_t past = past_length(c, 5, "[batch, heads, past_sequence, head_size]");
    total = past + kv;
    present_k = {b, heads, total, h};
    present_v = {b, heads, total, vh};
    if (c.attr_int("past_present_share_buffer", 0) != 0 && c.has_input(5)) {
      present_k = c.in_shape(5);
      present_v = c.has_input(6) ? c.in_shape(6) : present_k;
      const SharedBufferLength shared = shared_buffer_length(c, 7, past, kv);
      total = shared.kv_len;
      estimate = shared.estimate;
    }
  }
  AttentionPlan p;
  p.work = attention_work(b, heads, s, total, h, vh);
  AttentionWork& work = p.work;
  if (c.has_input(10)) work.projection_flops = d(b) * d(s) * d(heads) * (cross ? d(h) : d(2 * h + vh));
  work.mask = c.has_input(3) || c.has_input(4);
  work.estimate = estimate;
  p.outputs = multi_head_outputs(c, work, present_k, present_v);
  return p;
}

// ---- SparseAttention (block sparse; counted as dense, an upper bound) ----
// query, key, value, past_key, past_value, block_row_indices, block_col_indices,
// total_sequence_length, key_total_sequence_lengths, cos_cache, sin_cache.
AttentionPlan plan_sparse_attention(const OpContext& c) {
  const int64_t heads = required_int_attr(c, "num_heads", 1);
  const int64_t kv_heads = required_int_attr(c, "kv_num_heads", 1);
  required_int_attr(c, "sparse_block_size", 1);
  require_grouped_heads(c, heads, kv_heads);
  require_rank(c, 0, 3, "[batch, sequence, hidden] or packed QKV");
  require_rank(c, 3, 4, "past_key [batch, kv_heads, max_cache_sequence, head_size]");
  const Shape& q = c.in_shape(0);
  const int64_t h = c.has_input(1) ? per_head(c, q[2], heads, "query hidden size")
                                   : per_head(c, q[2], dim_sum(c, heads, dim_product(c, 2, kv_heads, "kv_num_heads"), "packed heads"),
                                              "packed QKV width");
  const int64_t given_total = known_scalar(c, 7);
  AttentionPlan p;
  p.work = attention_work(q[0], heads, q[1], given_total >= 0 ? given_total : c.in_shape(3)[2], h, h);
  AttentionWork& work = p.work;
  work.rotary_elements = grouped_rotary_elements(c, work, kv_heads, 9);
  work.estimate = true;
  const int32_t dtype = c.in_dtype(0);
  p.outputs = {{dtype, {q[0], q[1], heads * h}}, {dtype, c.in_shape(3)}, {dtype, c.has_input(4) ? c.in_shape(4) : c.in_shape(3)}};
  return p;
}

// ---- ai.onnx Attention (opset 23): Q, K, V, attn_mask, past_key, past_value ----
AttentionPlan plan_onnx_attention(const OpContext& c) {
  const Shape& q = c.in_shape(0);
  const Shape& k = c.in_shape(1);
  const Shape& v = c.in_shape(2);
  int64_t b, q_heads, kv_heads, s, kv, h, vh;
  if (q.size() == 4) {
    if (k.size() != 4 || v.size() != 4) c.fail("Q, K and V must all be 4-D or all 3-D");
    b = q[0], q_heads = q[1], s = q[2], h = q[3], kv_heads = k[1], kv = k[2], vh = v[3];
    if (k[3] != h) c.fail("K head size " + std::to_string(k[3]) + " differs from Q's " + std::to_string(h));
  } else if (q.size() == 3) {
    if (k.size() != 3 || v.size() != 3) c.fail("Q, K and V must all be 4-D or all 3-D");
    q_heads = required_int_attr(c, "q_num_heads", 1);
    kv_heads = required_int_attr(c, "kv_num_heads", 1);
    b = q[0], s = q[1], kv = k[1];
    h = per_head(c, q[2], q_heads, "Q hidden size");
    if (k[2] != dim_product(c, kv_heads, h, "kv_num_heads * head_size"))
      c.fail("K " + shape_to_string(k) + " is not [batch, kv_sequence, kv_num_heads * head_size]");
    vh = per_head(c, v[2], kv_heads, "V hidden size");
  } else {
    c.fail("Q must be 3-D or 4-D, got " + shape_to_string(q));
  }
  if (kv_heads < 1) c.fail("K has " + std::to_string(kv_heads) + " heads; attention needs at least one");
  if (q_heads % kv_heads != 0)
    c.fail("query heads " + std::to_string(q_heads) + " are not a multiple of key/value heads " + std::to_string(kv_heads));
  const int64_t past = past_length(c, 4, "past_key [batch, kv_heads, past_sequence, head_size]");
  const int64_t total = past + kv;
  AttentionPlan p;
  p.work = attention_work(b, q_heads, s, total, h, vh);
  AttentionWork& work = p.work;
  work.mask = c.has_input(3);
  work.softcap = c.attr_float("softcap", 0) > 0;
  const int32_t dtype = c.in_dtype(0);
  const Shape y = q.size() == 4 ? Shape{b, q_heads, s, vh} : Shape{b, s, dim_product(c, q_heads, vh, "q_num_heads * v_head_size")};
  p.outputs = {{dtype, y}, {dtype, {b, kv_heads, total, h}}, {dtype, {b, kv_heads, total, vh}}, {dtype, {b, q_heads, s, total}}};
  return p;
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  constexpr std::string_view ms = "com.microsoft";
  r.add(OpForm::kAttention, {
      {ms, "Attention", infer_attention<plan_attention>, cost_attention<plan_attention>, {}, inputs(2, 7).outputs(1, 2)},
      {ms, "DecoderMaskedSelfAttention", infer_attention<plan_attention>, cost_attention<plan_attention>, {}, inputs(7, 9).outputs(2, 2)},
      {ms, "MultiHeadAttention", infer_attention<plan_multi_head_attention>, cost_attention<plan_multi_head_attention>, {}, inputs(1, 10).outputs(1, 4)},
      {ms, "GroupQueryAttention", infer_attention<plan_group_query_attention>, cost_attention<plan_group_query_attention>, {}, inputs(7, 17).outputs(1, 4)},
      {ms, "PackedAttention", infer_attention<plan_packed_attention>, cost_attention<plan_packed_attention>, {}, inputs(5, 6)},
      {ms, "PackedMultiHeadAttention", infer_attention<plan_packed_multi_head_attention>, cost_attention<plan_packed_multi_head_attention>, {}, inputs(6, 7)},
      {ms, "DecoderMaskedMultiHeadAttention", infer_attention<plan_decoder_masked_mha>, cost_attention<plan_decoder_masked_mha>, {}, inputs(1, 11).outputs(1, 4)},
      {ms, "SparseAttention", infer_attention<plan_sparse_attention>, cost_attention<plan_sparse_attention>, {}, inputs(9, 11).outputs(3, 3)},
      {"", "Attention", infer_attention<plan_onnx_attention>, cost_attention<plan_onnx_attention>, not_measured("no GPU kernel yet (fused attention)"), inputs(3, 7).outputs(1, 4)},
  });
}

}  // namespace modelcost
