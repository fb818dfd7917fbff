// The math helpers the expressions of elementwise_ops.h use on the device, in float (fast
// intrinsics where PyTorch's kernels use them too), one line each: return type, name,
// parameters, body. device_math.cuh defines them for the compiled kernels and the generated
// chain kernels (chain_source.cpp) get the same lines as text, so both compute every op alike.
#pragma once

// clang-format off
#define MC_DEVICE_MATH(X)                                                    \
  X(float, exp_, (float x), __expf(x))                                       \
  X(float, log_, (float x), __logf(x))                                       \
  X(float, log1p_, (float x), log1pf(x))                                     \
  X(float, erf_, (float x), erff(x))                                         \
  X(float, tanh_, (float x), tanhf(x))                                       \
  X(float, sqrt_, (float x), sqrtf(x))                                       \
  X(float, fabs_, (float x), fabsf(x))                                       \
  X(float, floor_, (float x), floorf(x))                                     \
  X(float, ceil_, (float x), ceilf(x))                                       \
  X(float, rint_, (float x), rintf(x))                                       \
  X(float, sin_, (float x), sinf(x))                                         \
  X(float, cos_, (float x), cosf(x))                                         \
  X(float, tan_, (float x), tanf(x))                                         \
  X(float, asin_, (float x), asinf(x))                                       \
  X(float, acos_, (float x), acosf(x))                                       \
  X(float, atan_, (float x), atanf(x))                                       \
  X(float, sinh_, (float x), sinhf(x))                                       \
  X(float, cosh_, (float x), coshf(x))                                       \
  X(float, asinh_, (float x), asinhf(x))                                     \
  X(float, acosh_, (float x), acoshf(x))                                     \
  X(float, atanh_, (float x), atanhf(x))                                     \
  X(float, pow_, (float x, float y), powf(x, y))                             \
  X(float, fmod_, (float x, float y), fmodf(x, y))                           \
  X(float, clamp_, (float x, float lo, float hi), fminf(fmaxf(x, lo), hi))   \
  X(long long, int_, (float x), static_cast<long long>(x))
// clang-format on
