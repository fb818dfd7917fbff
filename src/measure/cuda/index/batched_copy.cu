// Several copies in one launch: a Concat's inputs into their slices of the output, or a Split's
// slices of the input into its outputs, as a compiler generates them, instead of one kernel per
// tensor (a DenseNet block's Concat of 25 inputs was 25 launches). Each copy is rows of contiguous
// columns with its own leading dimensions; blocks are dealt to the copies in proportion to their
// elements, so a block finds its copy once.
#include <algorithm>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/index_math.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int kMaxBatched = 32;
constexpr int kChunk = 4 * kThreads;  // elements per block

struct BatchedCopies {
  int count = 0;
  const void* src[kMaxBatched];
  void* dst[kMaxBatched];
  FastDivider cols[kMaxBatched];
  uint32_t src_ld[kMaxBatched], dst_ld[kMaxBatched], elements[kMaxBatched];
  uint32_t first_block[kMaxBatched + 1];
};

template <typename E>
__global__ void batched_copy_kernel(const BatchedCopies b) {
  __shared__ int copy;
  if (threadIdx.x == 0) {
    int c = 0;
    while (c + 1 < b.count && blockIdx.x >= b.first_block[c + 1]) ++c;
    copy = c;
  }
  __syncthreads();
  const int c = copy;
  const E* src = static_cast<const E*>(b.src[c]);
  E* dst = static_cast<E*>(b.dst[c]);
  const uint32_t begin = (blockIdx.x - b.first_block[c]) * kChunk;
  const uint32_t end = min(begin + kChunk, b.elements[c]);
  for (uint32_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const uint32_t row = b.cols[c].div(i), col = i - row * b.cols[c].divisor;
    dst[row * b.dst_ld[c] + col] = src[row * b.src_ld[c] + col];
  }
}

// One copy as rows x contiguous columns, in elements: false where its dims do not reduce to that.
struct Rows {
  int64_t rows = 1, cols = 1, src_ld = 0, dst_ld = 0, src_offset = 0, dst_offset = 0;
};
bool as_rows(const StridedCopy& c, Rows* r) {
  const size_t rank = c.dims.size();
  if (rank == 0 || rank > 2 || c.src_strides.back() != 1 || c.dst_strides.back() != 1) return false;
  r->cols = c.dims.back();
  r->rows = rank == 2 ? c.dims[0] : 1;
  r->src_ld = rank == 2 ? c.src_strides[0] : r->cols;
  r->dst_ld = rank == 2 ? c.dst_strides[0] : r->cols;
  r->src_offset = c.src_offset;
  r->dst_offset = c.dst_offset;
  // Forward strides only: the kernel's 32-bit indices assume them.
  return r->rows > 0 && r->cols > 0 && r->src_ld >= 0 && r->dst_ld >= 0 && r->src_offset >= 0 && r->dst_offset >= 0;
}

// The widest element (up to 16 bytes) every copy's columns, leading dims, offsets and pointers allow.
int common_widening(int bytes, const std::vector<BatchedCopy>& copies, const std::vector<Rows>& rows) {
  int widen = 16 / bytes;
  auto fits = [&](int f) {
    for (size_t k = 0; k < rows.size(); ++k) {
      const Rows& r = rows[k];
      if (r.cols % f || r.src_ld % f || r.dst_ld % f || r.src_offset % f || r.dst_offset % f) return false;
      if (reinterpret_cast<uintptr_t>(copies[k].src) % (f * bytes) || reinterpret_cast<uintptr_t>(copies[k].dst) % (f * bytes))
        return false;
    }
    return true;
  };
  while (widen > 1 && !fits(widen)) widen /= 2;
  return widen;
}

}  // namespace

bool launch_batched_copies(int bytes, const std::vector<BatchedCopy>& copies, cudaStream_t stream) {
  if (copies.size() < 2 || copies.size() > size_t(kMaxBatched)) return false;
  std::vector<Rows> rows(copies.size());
  for (size_t k = 0; k < copies.size(); ++k)
    if (!as_rows(*copies[k].copy, &rows[k])) return false;
  const int widen = common_widening(bytes, copies, rows);
  BatchedCopies b{};
  b.count = static_cast<int>(copies.size());
  int64_t blocks = 0;
  for (size_t k = 0; k < copies.size(); ++k) {
    const Rows& r = rows[k];
    const int64_t cols = r.cols / widen, elements = r.rows * cols;
    const int64_t src_end = r.src_offset / widen + (r.rows - 1) * (r.src_ld / widen) + cols;
    const int64_t dst_end = r.dst_offset / widen + (r.rows - 1) * (r.dst_ld / widen) + cols;
    if (!fits_int32(elements) || !fits_int32(src_end) || !fits_int32(dst_end)) return false;
    b.src[k] = static_cast<const char*>(copies[k].src) + r.src_offset * bytes;
    b.dst[k] = static_cast<char*>(copies[k].dst) + r.dst_offset * bytes;
    b.cols[k] = FastDivider(static_cast<uint32_t>(cols));
    b.src_ld[k] = static_cast<uint32_t>(r.src_ld / widen);
    b.dst_ld[k] = static_cast<uint32_t>(r.dst_ld / widen);
    b.elements[k] = static_cast<uint32_t>(elements);
    b.first_block[k] = static_cast<uint32_t>(blocks);
    blocks += (elements + kChunk - 1) / kChunk;
  }
  b.first_block[copies.size()] = static_cast<uint32_t>(blocks);
  if (blocks == 0) return true;
  if (!fits_int32(blocks)) return false;
  const dim3 grid(static_cast<unsigned>(blocks));
  switch (bytes * widen) {
    case 1: batched_copy_kernel<uint8_t><<<grid, kThreads, 0, stream>>>(b); break;
    case 2: batched_copy_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(b); break;
    case 4: batched_copy_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(b); break;
    case 8: batched_copy_kernel<uint2><<<grid, kThreads, 0, stream>>>(b); break;
    case 16: batched_copy_kernel<uint4><<<grid, kThreads, 0, stream>>>(b); break;
    default: return false;
  }
  MC_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace modelcost::cuda
