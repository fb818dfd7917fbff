// Work a library call's epilogue does beyond what its class curve times (docs/roofline.md,
// "Calibrated kernels").
#pragma once
#include "modelcost/fusion.h"
#include "modelcost/hardware.h"

namespace modelcost {

// fp32 operations per output of cuBLASLt's GELU epilogue (an accurate tanh and its polynomial on
// the CUDA cores after the K loop). Fitted on the zoo's tuned transformer families on the H200
// (236 products of eight networks, batch 1 and 32): 0.52 ps per output beyond the product's
// curve at its 55.9 TFLOP/s of fp32; the held-out EdgeNeXt's products land within 0.1 us of it.
constexpr double kGeluEpilogueFlopsPerOutput = 29;

// The time (us, the kernel alone) a GPU group spends in its library call's GELU epilogue: a GEMM or
// 1x1 conv group whose GELU cuBLASLt runs in the product's kernel (aligned rows; on unaligned ones it
// is a chain kernel of its own), its outputs at the device's fp32 vector rate (achievable where
// `achievable`, else the datasheet's). 0 for every other group.
double gelu_epilogue_us(const FusedGroup& group, const Device& device, double element_bytes, bool achievable);

}  // namespace modelcost
