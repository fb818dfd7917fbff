// Data movement: strided copies (Transpose, Slice, Concat, Split, Expand, Pad, scalar Gather) and
// Gather by an index tensor (Resize: resize_kernels.cu). Copies are element-size generic (1, 2, 4, 8 bytes) and
// move 16-byte vectors where the innermost dim is contiguous on both sides.
#include <algorithm>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/index_math.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {

struct CopyIndexing {
  int rank;
  int64_t dims[kMaxCopyRank], src[kMaxCopyRank], dst[kMaxCopyRank];
  int64_t src_offset, dst_offset;
};

// The 64-bit path, for copies whose indices do not fit in 31 bits.
template <typename E>
__global__ void strided_copy_kernel(const E* src, E* dst, CopyIndexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, s = ix.src_offset, d = ix.dst_offset;
    for (int k = ix.rank - 1; k >= 0; --k) {
      const int64_t q = rest / ix.dims[k], r = rest - q * ix.dims[k];
      s += r * ix.src[k];
      d += r * ix.dst[k];
      rest = q;
    }
    dst[d] = src[s];
  }
}

struct CopyIndexing32 {
  int rank;
  FastDivider dims[kMaxCopyRank];
  uint32_t src[kMaxCopyRank], dst[kMaxCopyRank];
  uint32_t src_offset, dst_offset;
};

template <typename E>
__global__ void strided_copy_kernel32(const E* __restrict__ src, E* __restrict__ dst, CopyIndexing32 ix, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t rest = i, s = ix.src_offset, d = ix.dst_offset;
#pragma unroll
    for (int k = kMaxCopyRank - 1; k >= 0; --k) {
      if (k >= ix.rank) continue;
      const uint32_t q = ix.dims[k].div(rest), r = rest - q * ix.dims[k].divisor;
      s += r * ix.src[k];
      d += r * ix.dst[k];
      rest = q;
    }
    dst[d] = src[s];
  }
}

// A copy whose innermost destination dim is strided in the source while another dim is
// contiguous there (a transpose): 32x32 tiles staged through shared memory, so that both the
// reads (along the source-contiguous dim) and the writes (along the destination-contiguous
// dim) are coalesced. The remaining dims index tiles through blockIdx.z.
struct TileIndexing {
  uint32_t rows, cols;          // rows: the source-contiguous dim; cols: the destination-contiguous dim
  uint32_t row_dst, col_src;    // the two cross strides (row_src = col_dst = 1)
  int batch_rank;
  FastDivider batch_dims[kMaxCopyRank];
  uint32_t batch_src[kMaxCopyRank], batch_dst[kMaxCopyRank];
  uint32_t batches, src_offset, dst_offset;
};

constexpr int kTile = 32, kTileRows = 8;

// The source and destination offsets of batch b, from its index along the tile's batch dims.
__device__ __forceinline__ void batch_offsets(const TileIndexing& t, uint32_t b, uint32_t& s, uint32_t& d) {
  s = t.src_offset;
  d = t.dst_offset;
  for (int k = t.batch_rank - 1; k >= 0; --k) {
    const uint32_t q = t.batch_dims[k].div(b), r = b - q * t.batch_dims[k].divisor;
    s += r * t.batch_src[k];
    d += r * t.batch_dst[k];
    b = q;
  }
}

template <typename E>
__global__ void transpose_tile_kernel(const E* __restrict__ src, E* __restrict__ dst, TileIndexing t) {
  constexpr int kPad = sizeof(E) == 2 ? 2 : 1;  // row pitch of an odd number of 4-byte words: no bank conflicts
  __shared__ E tile[kTile][kTile + kPad];
  const uint32_t r0 = blockIdx.y * kTile, c0 = blockIdx.x * kTile;
  for (uint32_t b = blockIdx.z; b < t.batches; b += gridDim.z) {
    uint32_t s, d;
    batch_offsets(t, b, s, d);
    const uint32_t r = r0 + threadIdx.x;
#pragma unroll
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const uint32_t c = c0 + k;
      if (r < t.rows && c < t.cols) tile[k][threadIdx.x] = src[s + r + c * t.col_src];
    }
    __syncthreads();
    const uint32_t c = c0 + threadIdx.x;
#pragma unroll
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const uint32_t rr = r0 + k;
      if (rr < t.rows && c < t.cols) dst[d + rr * t.row_dst + c] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

// A transpose whose one side is a few elements wide (CoaT's [.., 3136, 8] <-> [.., 8, 3136], a
// head's 8 channels): a 32x32 tile would leave three quarters of its lanes idle, so each thread
// moves one packed vector of those R elements, their strided partners coalesced across the warp.
// kThinRows: t.rows == R packed in the source (col_src == R): one vector read, R writes along
// cols. Otherwise t.cols == R packed in the destination (row_dst == R): R reads, one vector write.
template <typename E, int R>
struct alignas(sizeof(E) * R) Packed {
  E v[R];
};

template <typename E, int R, bool kThinRows>
__global__ void transpose_thin_kernel(const E* __restrict__ src, E* __restrict__ dst, TileIndexing t, FastDivider along,
                                      uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t b = along.div(i), j = i - b * along.divisor;
    uint32_t s, d;
    batch_offsets(t, b, s, d);
    if constexpr (kThinRows) {
      const Packed<E, R> p = *reinterpret_cast<const Packed<E, R>*>(src + s + j * R);
#pragma unroll
      for (int r = 0; r < R; ++r) dst[d + r * t.row_dst + j] = p.v[r];
    } else {
      Packed<E, R> p;
#pragma unroll
      for (int c = 0; c < R; ++c) p.v[c] = src[s + j + c * t.col_src];
      *reinterpret_cast<Packed<E, R>*>(dst + d + j * R) = p;
    }
  }
}

template <typename E, typename I>
__global__ void gather_kernel(const E* data, const I* indices, E* out, int64_t axis_len, int64_t inner, int64_t count,
                              int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t in_row = i % inner, j = (i / inner) % count, o = i / (inner * count);
    int64_t k = static_cast<int64_t>(indices[j]);
    if (k < 0) k += axis_len;
    out[i] = data[(o * axis_len + k) * inner + in_row];
  }
}

template <typename E, typename I>
__global__ void gather_kernel32(const E* __restrict__ data, const I* __restrict__ indices, E* __restrict__ out,
                                uint32_t axis_len, FastDivider inner, FastDivider count, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t row = inner.div(i), in_row = i - row * inner.divisor;
    const uint32_t o = count.div(row), j = row - o * count.divisor;
    int64_t k = static_cast<int64_t>(indices[j]);
    if (k < 0) k += axis_len;
    out[i] = data[(o * axis_len + static_cast<uint32_t>(k)) * inner.divisor + in_row];
  }
}

namespace {

template <typename E>
void copy_as(const void* src, void* dst, const CopyIndexing& ix, int64_t n, cudaStream_t stream) {
  bool small = fits_int32(n);
  int64_t src_end = ix.src_offset + 1, dst_end = ix.dst_offset + 1;
  for (int k = 0; k < ix.rank; ++k) {
    src_end += (ix.dims[k] - 1) * ix.src[k];
    dst_end += (ix.dims[k] - 1) * ix.dst[k];
    small = small && ix.src[k] >= 0 && ix.dst[k] >= 0;
  }
  small = small && fits_int32(src_end) && fits_int32(dst_end);
  if (!small) {
    strided_copy_kernel<E><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<const E*>(src), static_cast<E*>(dst), ix, n);
    return;
  }
  CopyIndexing32 c{};
  c.rank = ix.rank;
  for (int k = 0; k < ix.rank; ++k) {
    c.dims[k] = FastDivider(static_cast<uint32_t>(ix.dims[k]));
    c.src[k] = static_cast<uint32_t>(ix.src[k]);
    c.dst[k] = static_cast<uint32_t>(ix.dst[k]);
  }
  c.src_offset = static_cast<uint32_t>(ix.src_offset);
  c.dst_offset = static_cast<uint32_t>(ix.dst_offset);
  strided_copy_kernel32<E><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<const E*>(src), static_cast<E*>(dst), c,
                                                                     static_cast<uint32_t>(n));
}

// Whether every packed vector of R elements the thin kernel moves on one side starts aligned:
// the side's offset and batch strides multiples of R, its pointer aligned to the vector.
bool packs_align(const void* p, int bytes, int R, uint32_t offset, const uint32_t* strides, int rank) {
  if (reinterpret_cast<uintptr_t>(p) % (static_cast<uintptr_t>(bytes) * R) != 0 || offset % R != 0) return false;
  for (int k = 0; k < rank; ++k)
    if (strides[k] % R != 0) return false;
  return true;
}

// The thin transpose (transpose_thin_kernel) of R = 2, 4 or 8 elements of at most 16 bytes; false
// where the tile does not have that form.
template <typename E>
bool thin_transpose_as(const void* src, void* dst, const TileIndexing& t, cudaStream_t stream) {
  const bool thin_rows = t.col_src == t.rows && t.rows <= 8 && packs_align(src, sizeof(E), t.rows, t.src_offset, t.batch_src, t.batch_rank);
  const bool thin_cols = !thin_rows && t.row_dst == t.cols && t.cols <= 8 &&
                         packs_align(dst, sizeof(E), t.cols, t.dst_offset, t.batch_dst, t.batch_rank);
  const uint32_t R = thin_rows ? t.rows : t.cols, along = thin_rows ? t.cols : t.rows;
  if ((!thin_rows && !thin_cols) || uint64_t(along) * t.batches > 0xffffffffu) return false;
  const uint32_t n = along * t.batches;
  const FastDivider by(along);
  const auto* from = static_cast<const E*>(src);
  auto* to = static_cast<E*>(dst);
  // Packs of more than 16 bytes are not compiled: no single load or store moves them.
#define MC_THIN_CASE(K)                                                                                            \
  if constexpr (sizeof(E) * K <= 16)                                                                               \
    if (R == K) {                                                                                                  \
      if (thin_rows) transpose_thin_kernel<E, K, true><<<capped_grid(n), kThreads, 0, stream>>>(from, to, t, by, n);  \
      else transpose_thin_kernel<E, K, false><<<capped_grid(n), kThreads, 0, stream>>>(from, to, t, by, n);          \
      return true;                                                                                                 \
    }
  MC_THIN_CASE(2) MC_THIN_CASE(4) MC_THIN_CASE(8)
#undef MC_THIN_CASE
  return false;
}

// The tiled transpose when the copy has that form (see TileIndexing), or the thin one where a side
// is a few elements wide; false otherwise.
template <typename E>
bool transpose_as(const void* src, void* dst, const CopyIndexing& ix, int64_t n, cudaStream_t stream) {
  const int last = ix.rank - 1;
  if (ix.rank < 2 || ix.dst[last] != 1 || ix.src[last] == 1 || !fits_int32(n)) return false;
  int row = -1;
  for (int k = 0; k < last; ++k)
    if (ix.src[k] == 1) row = k;
  if (row < 0 || ix.dims[last] < 2 || ix.dims[row] < 2) return false;
  int64_t src_end = ix.src_offset + 1, dst_end = ix.dst_offset + 1;
  for (int k = 0; k < ix.rank; ++k) {
    if (ix.src[k] < 0 || ix.dst[k] < 0) return false;
    src_end += (ix.dims[k] - 1) * ix.src[k];
    dst_end += (ix.dims[k] - 1) * ix.dst[k];
  }
  if (!fits_int32(src_end) || !fits_int32(dst_end)) return false;
  TileIndexing t{};
  t.rows = static_cast<uint32_t>(ix.dims[row]);
  t.cols = static_cast<uint32_t>(ix.dims[last]);
  t.row_dst = static_cast<uint32_t>(ix.dst[row]);
  t.col_src = static_cast<uint32_t>(ix.src[last]);
  t.batches = 1;
  for (int k = 0; k < last; ++k) {
    if (k == row) continue;
    t.batch_dims[t.batch_rank] = FastDivider(static_cast<uint32_t>(ix.dims[k]));
    t.batch_src[t.batch_rank] = static_cast<uint32_t>(ix.src[k]);
    t.batch_dst[t.batch_rank] = static_cast<uint32_t>(ix.dst[k]);
    ++t.batch_rank;
    t.batches *= static_cast<uint32_t>(ix.dims[k]);
  }
  t.src_offset = static_cast<uint32_t>(ix.src_offset);
  t.dst_offset = static_cast<uint32_t>(ix.dst_offset);
  if (thin_transpose_as<E>(src, dst, t, stream)) return true;
  if (ix.dims[last] < 8 || ix.dims[row] < 8) return false;  // a thin tile wastes most of the block
  const uint32_t tiles_x = (t.cols + kTile - 1) / kTile, tiles_y = (t.rows + kTile - 1) / kTile;
  if (tiles_y > 65535) return false;
  // Enough blocks for several waves; a block walks further batches with a z-stride.
  const uint32_t z = std::min<uint32_t>(t.batches, std::max<uint32_t>(1, 132 * 32 / (tiles_x * tiles_y)));
  const dim3 grid(tiles_x, tiles_y, std::min<uint32_t>(z, 65535)), block(kTile, kTileRows);
  transpose_tile_kernel<E><<<grid, block, 0, stream>>>(static_cast<const E*>(src), static_cast<E*>(dst), t);
  return true;
}

// The gather of `p` moving elements of type E (its inner rows counted in E's).
template <typename E>
void gather_as(const GatherPlan& p, const IndexOperands& o, cudaStream_t stream) {
  const void *data = o.data, *indices = o.indices;
  void* out = o.y;
  const bool i64 = o.indices_int64;
  const int64_t axis_len = p.axis_len, inner = p.inner, count = p.indices, n = p.outer * count * inner;
  if (fits_int32(n) && fits_int32(count * axis_len * inner * (n / (count * inner)))) {
    const FastDivider inner_div(static_cast<uint32_t>(inner)), count_div(static_cast<uint32_t>(count));
    if (i64)
      gather_kernel32<E, int64_t><<<capped_grid(n), kThreads, 0, stream>>>(
          static_cast<const E*>(data), static_cast<const int64_t*>(indices), static_cast<E*>(out),
          static_cast<uint32_t>(axis_len), inner_div, count_div, static_cast<uint32_t>(n));
    else
      gather_kernel32<E, int32_t><<<capped_grid(n), kThreads, 0, stream>>>(
          static_cast<const E*>(data), static_cast<const int32_t*>(indices), static_cast<E*>(out),
          static_cast<uint32_t>(axis_len), inner_div, count_div, static_cast<uint32_t>(n));
    return;
  }
  if (i64)
    gather_kernel<E, int64_t><<<capped_grid(n), kThreads, 0, stream>>>(
        static_cast<const E*>(data), static_cast<const int64_t*>(indices), static_cast<E*>(out), axis_len, inner, count, n);
  else
    gather_kernel<E, int32_t><<<capped_grid(n), kThreads, 0, stream>>>(
        static_cast<const E*>(data), static_cast<const int32_t*>(indices), static_cast<E*>(out), axis_len, inner, count, n);
}
}  // namespace

void launch_strided_copy(int bytes, const void* src, void* dst, const StridedCopy& c, cudaStream_t stream) {
  if (c.dims.size() > kMaxCopyRank) throw Error(kExitRuntime, "copy of rank above 8");
  CopyIndexing ix{};
  ix.rank = static_cast<int>(c.dims.size());
  int64_t n = 1;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    ix.dims[i] = c.dims[i];
    ix.src[i] = c.src_strides[i];
    ix.dst[i] = c.dst_strides[i];
    n *= c.dims[i];
  }
  ix.src_offset = c.src_offset;
  ix.dst_offset = c.dst_offset;
  if (n == 0) return;
  // Widen the element: innermost dim contiguous on both sides, its length, every outer stride and
  // both offsets divisible by the widening factor, and 16-byte aligned pointers.
  const int last = ix.rank - 1;
  int widen = 16 / bytes;
  auto divisible = [&](int f) {
    if (ix.src[last] != 1 || ix.dst[last] != 1 || ix.dims[last] % f || ix.src_offset % f || ix.dst_offset % f) return false;
    for (int k = 0; k < last; ++k)
      if (ix.src[k] % f || ix.dst[k] % f) return false;
    return (reinterpret_cast<uintptr_t>(src) % (f * bytes)) == 0 && (reinterpret_cast<uintptr_t>(dst) % (f * bytes)) == 0;
  };
  while (widen > 1 && !divisible(widen)) widen /= 2;
  if (widen > 1) {
    for (int k = 0; k < last; ++k) { ix.src[k] /= widen; ix.dst[k] /= widen; }
    ix.dims[last] /= widen;
    ix.src_offset /= widen;
    ix.dst_offset /= widen;
    n /= widen;
  }
  bool done = false;
  switch (bytes * widen) {
    case 1: copy_as<uint8_t>(src, dst, ix, n, stream); break;
    case 2:
      done = transpose_as<uint16_t>(src, dst, ix, n, stream);
      if (!done) copy_as<uint16_t>(src, dst, ix, n, stream);
      break;
    case 4:
      done = transpose_as<uint32_t>(src, dst, ix, n, stream);
      if (!done) copy_as<uint32_t>(src, dst, ix, n, stream);
      break;
    case 8:
      done = transpose_as<uint2>(src, dst, ix, n, stream);
      if (!done) copy_as<uint2>(src, dst, ix, n, stream);
      break;
    case 16: copy_as<uint4>(src, dst, ix, n, stream); break;
    default: throw Error(kExitRuntime, "copy of elements of " + std::to_string(bytes) + " bytes");
  }
  MC_CUDA_CHECK_LAUNCH();
}

void launch_gather(int bytes, const GatherPlan& plan, const IndexOperands& operands, cudaStream_t stream) {
  if (plan.outer * plan.indices * plan.inner == 0) return;
  // Rows of `inner` elements move as wider elements where their length and the pointers allow.
  int widen = 16 / bytes;
  while (widen > 1 && (plan.inner % widen || reinterpret_cast<uintptr_t>(operands.data) % (widen * bytes) ||
                       reinterpret_cast<uintptr_t>(operands.y) % (widen * bytes)))
    widen /= 2;
  GatherPlan wide = plan;
  wide.inner = plan.inner / widen;
  switch (bytes * widen) {
    case 1: gather_as<uint8_t>(wide, operands, stream); break;
    case 2: gather_as<uint16_t>(wide, operands, stream); break;
    case 4: gather_as<uint32_t>(wide, operands, stream); break;
    case 8: gather_as<uint2>(wide, operands, stream); break;
    case 16: gather_as<uint4>(wide, operands, stream); break;
    default: throw Error(kExitRuntime, "gather of elements of " + std::to_string(bytes) + " bytes");
  }
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda

namespace modelcost::cuda {

struct PadIndexing {
  int rank, mode;  // PadPlan::Mode
  int64_t out[kMaxCopyRank], in[kMaxCopyRank], in_stride[kMaxCopyRank], begin[kMaxCopyRank];
};

__device__ __forceinline__ int64_t pad_source(int mode, int64_t o, int64_t n) {
  if (mode == static_cast<int>(PadPlan::Mode::kEdge)) return o < 0 ? 0 : (o >= n ? n - 1 : o);
  if (mode == static_cast<int>(PadPlan::Mode::kWrap)) return ((o % n) + n) % n;
  if (n == 1) return 0;  // reflect
  const int64_t period = 2 * (n - 1), m = ((o % period) + period) % period;
  return m < n ? m : period - m;
}

template <typename E>
__global__ void pad_mapped_kernel(const E* __restrict__ src, E* __restrict__ dst, PadIndexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, s = 0;
    for (int k = ix.rank - 1; k >= 0; --k) {
      const int64_t q = rest / ix.out[k];
      s += pad_source(ix.mode, rest - q * ix.out[k] - ix.begin[k], ix.in[k]) * ix.in_stride[k];
      rest = q;
    }
    dst[i] = src[s];
  }
}

void launch_pad_mapped(int bytes, const PadPlan& p, const void* src, void* dst, cudaStream_t stream) {
  PadIndexing ix{};
  ix.rank = static_cast<int>(p.out_dims.size());
  ix.mode = static_cast<int>(p.mode);
  const std::vector<int64_t> strides = contiguous_strides(p.in_dims);
  int64_t n = 1;
  for (int k = 0; k < ix.rank; ++k) {
    ix.out[k] = p.out_dims[k];
    ix.in[k] = p.in_dims[k];
    ix.in_stride[k] = strides[k];
    ix.begin[k] = p.begin[k];
    n *= p.out_dims[k];
  }
  if (n == 0) return;
  const int grid = std::min(grid_for(n), 132 * 32);
  switch (bytes) {
    case 1: pad_mapped_kernel<uint8_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), ix, n); break;
    case 2: pad_mapped_kernel<uint16_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), ix, n); break;
    case 4: pad_mapped_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), ix, n); break;
    default: pad_mapped_kernel<uint64_t><<<grid, kThreads, 0, stream>>>(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), ix, n); break;
  }
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
