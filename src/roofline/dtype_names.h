// The names a user may give a precision (--dtype, dtype=): any case, and the common aliases of
// PyTorch and NumPy ("float16", "half", "bfloat16", "float32", ...).
#pragma once
#include <string>

namespace modelcost {

// "FP16", "float16", "half" -> "fp16"; "bfloat16" -> "bf16"; "float32", "float", "single" -> "fp32";
// "float8", "e4m3", "e5m2" -> "fp8". Other names come back lower-cased, for the option's own check.
std::string canonical_dtype_name(const std::string& text);

// Bytes per element of a canonical name: 4 for fp32 and tf32 (fp32 storage), 2 for fp16 and bf16,
// 1 for the 8-bit types.
double dtype_name_bytes(const std::string& dtype);

}  // namespace modelcost
