// Measures achievable.attention_load_scale as `modelcost calibrate` does (calibrate_attention_load.cpp):
// the prefill's causal flash attention between compute-bound products over the same attention
// alone, REPEATS times, so that the spread between runs shows beside the figure.
// Usage: attention_load [REPEATS]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "core/cuda_backend.h"

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "attention_load: no CUDA device\n");
    return 1;
  }
  for (int i = 0; i < repeats; ++i) {
    modelcost::CalibrationResult r;
    modelcost::cuda::calibrate_attention_load(stream, r);
    for (const auto& note : r.notes) std::printf("%s\n", note.c_str());
  }
  cudaStreamDestroy(stream);
  return 0;
}
