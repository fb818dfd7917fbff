#include "graph/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>

namespace modelcost {

Shape tensor_proto_shape(const onnx::TensorProto& t) { return Shape(t.dims().begin(), t.dims().end()); }

bool tensor_proto_is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL;
}

namespace {
template <typename T>
void from_raw(const std::string& raw, size_t n, std::vector<int64_t>* ints, std::vector<double>* floats) {
  for (size_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, raw.data() + i * sizeof(T), sizeof(T));
    if (ints) ints->push_back(static_cast<int64_t>(x));
    if (floats) floats->push_back(static_cast<double>(x));
  }
}

double half_to_double(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(frac, -24) : exp == 31 ? (frac ? NAN : INFINITY) : std::ldexp(frac + 1024, exp - 25);
  return sign ? -v : v;
}
double bfloat_to_double(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

std::shared_ptr<const TensorValue> read_tensor_value(const onnx::TensorProto& t, size_t max_elements) {
  if (tensor_proto_is_external(t)) return nullptr;
  double n_elements = element_count(tensor_proto_shape(t));
  if (n_elements > static_cast<double>(max_elements) || n_elements < 0) return nullptr;
  const size_t n = static_cast<size_t>(n_elements);
  auto v = std::make_shared<TensorValue>();
  const std::string& raw = t.raw_data();
  const bool has_raw = t.has_raw_data();
  using TP = onnx::TensorProto;
  switch (t.data_type()) {
    case TP::INT64:
      if (has_raw) { if (raw.size() < n * 8) return nullptr; from_raw<int64_t>(raw, n, &v->ints, nullptr); }
      else v->ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TP::INT32: case TP::INT16: case TP::INT8: case TP::UINT8: case TP::UINT16: case TP::BOOL:
      if (has_raw) {
        const auto dt = t.data_type();
        size_t es = dt == TP::INT32 ? 4 : (dt == TP::INT16 || dt == TP::UINT16) ? 2 : 1;
        if (raw.size() < n * es) return nullptr;
        if (dt == TP::INT32) from_raw<int32_t>(raw, n, &v->ints, nullptr);
        else if (dt == TP::INT16) from_raw<int16_t>(raw, n, &v->ints, nullptr);
        else if (dt == TP::UINT16) from_raw<uint16_t>(raw, n, &v->ints, nullptr);
        else if (dt == TP::INT8) from_raw<int8_t>(raw, n, &v->ints, nullptr);
        else from_raw<uint8_t>(raw, n, &v->ints, nullptr);
      } else {
        v->ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    case TP::UINT32: case TP::UINT64:
      if (has_raw) {
        if (t.data_type() == TP::UINT32) { if (raw.size() < n * 4) return nullptr; from_raw<uint32_t>(raw, n, &v->ints, nullptr); }
        else { if (raw.size() < n * 8) return nullptr; from_raw<uint64_t>(raw, n, &v->ints, nullptr); }
      } else {
        v->ints.assign(t.uint64_data().begin(), t.uint64_data().end());
      }
      break;
    case TP::FLOAT:
      v->is_float = true;
      if (has_raw) { if (raw.size() < n * 4) return nullptr; from_raw<float>(raw, n, nullptr, &v->floats); }
      else v->floats.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::DOUBLE:
      v->is_float = true;
      if (has_raw) { if (raw.size() < n * 8) return nullptr; from_raw<double>(raw, n, nullptr, &v->floats); }
      else v->floats.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TP::FLOAT16: case TP::BFLOAT16: {
      v->is_float = true;
      const bool half = t.data_type() == TP::FLOAT16;
      std::vector<int64_t> bits;
      if (has_raw) { if (raw.size() < n * 2) return nullptr; from_raw<uint16_t>(raw, n, &bits, nullptr); }
      else bits.assign(t.int32_data().begin(), t.int32_data().end());
      for (int64_t b : bits) v->floats.push_back(half ? half_to_double(uint16_t(b)) : bfloat_to_double(uint16_t(b)));
      break;
    }
    default:
      return nullptr;
  }
  if (v->size() != n) return nullptr;  // malformed or absent contents
  return v;
}

}  // namespace modelcost
