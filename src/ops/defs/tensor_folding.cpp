#include "ops/defs/tensor_folding.h"

#include "ops/rule_helpers.h"

namespace modelcost {
namespace {

// Calls fn(out_flat, coords) for every element of `shape` in row-major order.
template <typename Fn>
void for_each_coord(const Shape& shape, Fn&& fn) {
  const size_t n = static_cast<size_t>(element_count(shape));
  std::vector<int64_t> coords(shape.size(), 0);
  for (size_t k = 0; k < n; ++k) {
    fn(k, coords);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++coords[d] < shape[d]) break;
      coords[d] = 0;
    }
  }
}

bool small_output(const OpContext& c, size_t output) {
  return c.has_output(output) && c.out(output).has_shape &&
         c.may_fold(element_count(c.out(output).shape));
}

bool complete(const TensorValue* v, const Shape& shape) {
  return v && static_cast<double>(v->size()) == element_count(shape);
}

// Builds output `output` by copying from `src` at the flat index map(coords) returns.
template <typename Map>
void fold_copy(OpContext& c, size_t output, const TensorValue& src, Map&& map) {
  TensorValue v;
  v.is_float = src.is_float;
  for_each_coord(c.out(output).shape, [&](size_t, const std::vector<int64_t>& coords) {
    const size_t from = map(coords);
    if (src.is_float) v.floats.push_back(src.floats[from]);
    else v.ints.push_back(src.ints[from]);
  });
  c.set_value(output, std::move(v));
}

size_t flat_index(const std::vector<int64_t>& coords, const std::vector<int64_t>& strides) {
  size_t idx = 0;
  for (size_t d = 0; d < coords.size(); ++d) idx += static_cast<size_t>(coords[d] * strides[d]);
  return idx;
}

}  // namespace

void fold_concat(OpContext& c, int64_t axis) {
  if (!small_output(c, 0)) return;
  std::vector<const TensorValue*> parts;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  bool is_float = false;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    if (!complete(c.value(i), c.in_shape(i))) return;
    parts.push_back(c.value(i));
    offsets.push_back(offset);
    offset += c.in_shape(i)[axis];
    is_float = is_float || c.value(i)->is_float;
  }
  if (is_float) {
    for (const auto* p : parts) if (!p->is_float) return;  // mixed storage: leave unfolded
  }
  std::vector<std::vector<int64_t>> part_strides;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i)) part_strides.push_back(strides_of(c.in_shape(i)));
  TensorValue v;
  v.is_float = is_float;
  for_each_coord(c.out(0).shape, [&](size_t, const std::vector<int64_t>& coords) {
    size_t part = parts.size() - 1;
    while (part > 0 && coords[axis] < offsets[part]) --part;
    std::vector<int64_t> local = coords;
    local[axis] -= offsets[part];
    const size_t from = flat_index(local, part_strides[part]);
    if (is_float) v.floats.push_back(parts[part]->floats[from]);
    else v.ints.push_back(parts[part]->ints[from]);
  });
  c.set_value(0, std::move(v));
}

void fold_slice(OpContext& c, const SliceSpec& spec) {
  if (!small_output(c, 0) || !complete(c.value(0), c.in_shape(0))) return;
  const auto strides = strides_of(c.in_shape(0));
  fold_copy(c, 0, *c.value(0), [&](const std::vector<int64_t>& coords) {
    size_t idx = 0;
    for (size_t d = 0; d < coords.size(); ++d) idx += static_cast<size_t>((spec.start[d] + coords[d] * spec.step[d]) * strides[d]);
    return idx;
  });
}

void fold_slice_axis(OpContext& c, size_t output, int64_t axis, int64_t offset, int64_t) {
  if (!small_output(c, output) || !complete(c.value(0), c.in_shape(0))) return;
  const auto strides = strides_of(c.in_shape(0));
  fold_copy(c, output, *c.value(0), [&](const std::vector<int64_t>& coords) {
    std::vector<int64_t> in = coords;
    in[axis] += offset;
    return flat_index(in, strides);
  });
}

void fold_transpose(OpContext& c, const std::vector<int64_t>& perm) {
  if (!small_output(c, 0) || !complete(c.value(0), c.in_shape(0))) return;
  const auto strides = strides_of(c.in_shape(0));
  const size_t rank = perm.size();
  fold_copy(c, 0, *c.value(0), [&](const std::vector<int64_t>& coords) {
    size_t idx = 0;
    for (size_t d = 0; d < rank; ++d) idx += static_cast<size_t>(coords[d] * strides[(perm[d] + rank) % rank]);
    return idx;
  });
}

void fold_broadcast_copy(OpContext& c) {
  if (!small_output(c, 0) || !complete(c.value(0), c.in_shape(0))) return;
  const Shape& in = c.in_shape(0);
  const auto strides = strides_of(in);
  const size_t lead = c.out(0).shape.size() - in.size();
  fold_copy(c, 0, *c.value(0), [&](const std::vector<int64_t>& coords) {
    size_t idx = 0;
    for (size_t d = 0; d < in.size(); ++d) if (in[d] != 1) idx += static_cast<size_t>(coords[d + lead] * strides[d]);
    return idx;
  });
}

void fold_tile(OpContext& c) {
  if (!small_output(c, 0) || !complete(c.value(0), c.in_shape(0))) return;
  const Shape& in = c.in_shape(0);
  const auto strides = strides_of(in);
  fold_copy(c, 0, *c.value(0), [&](const std::vector<int64_t>& coords) {
    size_t idx = 0;
    for (size_t d = 0; d < in.size(); ++d) idx += static_cast<size_t>((coords[d] % in[d]) * strides[d]);
    return idx;
  });
}

void fold_gather(OpContext& c, int64_t axis) {
  if (!small_output(c, 0) || !complete(c.value(0), c.in_shape(0)) || !complete(c.value(1), c.in_shape(1))) return;
  const Shape& data = c.in_shape(0);
  const size_t index_rank = c.in_rank(1);
  const auto strides = strides_of(data);
  const auto index_strides = strides_of(c.in_shape(1));
  const TensorValue& indices = *c.value(1);
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t k = indices.as_int(i);
    if (k < -data[axis] || k >= data[axis]) return;  // out of range: the shape rule reports it
  }
  fold_copy(c, 0, *c.value(0), [&](const std::vector<int64_t>& coords) {
    size_t idx = 0;
    for (int64_t d = 0; d < axis; ++d) idx += static_cast<size_t>(coords[d] * strides[d]);
    size_t which = 0;
    for (size_t d = 0; d < index_rank; ++d) which += static_cast<size_t>(coords[axis + d] * index_strides[d]);
    int64_t k = indices.as_int(which);
    if (k < 0) k += data[axis];
    idx += static_cast<size_t>(k * strides[axis]);
    for (size_t d = axis + 1; d < data.size(); ++d) idx += static_cast<size_t>(coords[d + index_rank - 1] * strides[d]);
    return idx;
  });
}

void fold_where(OpContext& c) {
  if (!small_output(c, 0)) return;
  for (size_t i = 0; i < 3; ++i) if (!complete(c.value(i), c.in_shape(i))) return;
  const TensorValue &cond = *c.value(0), &x = *c.value(1), &y = *c.value(2);
  if (x.is_float != y.is_float) return;
  const Shape& out = c.out(0).shape;
  const std::vector<int64_t> strides_of_input[3] = {strides_of(c.in_shape(0)), strides_of(c.in_shape(1)),
                                                    strides_of(c.in_shape(2))};
  auto index_in = [&](const std::vector<int64_t>& coords, size_t input) {
    const Shape& in = c.in_shape(input);
    const auto& strides = strides_of_input[input];
    size_t idx = 0;
    const size_t lead = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) if (in[d] != 1) idx += static_cast<size_t>(coords[d + lead] * strides[d]);
    return idx;
  };
  TensorValue v;
  v.is_float = x.is_float;
  for_each_coord(out, [&](size_t, const std::vector<int64_t>& coords) {
    const bool take_x = cond.as_int(index_in(coords, 0)) != 0;
    const TensorValue& src = take_x ? x : y;
    const size_t from = index_in(coords, take_x ? 1 : 2);
    if (v.is_float) v.floats.push_back(src.floats[from]);
    else v.ints.push_back(src.ints[from]);
  });
  c.set_value(0, std::move(v));
}

}  // namespace modelcost
