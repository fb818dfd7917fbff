// NonMaxSuppression at the analyzer's output size, as torchvision's CUDA NMS: each (batch, class)
// sorts its boxes by score (CUB, stable, descending), a kernel computes for every box the 64-bit
// masks of the lower-ranked boxes it overlaps by more than the IoU threshold, then one block per
// (batch, class) walks the boxes in score order, keeping each box no kept box suppressed and
// adding its mask (torchvision's gather_keep_from_mask). Every (batch, class) writes its kept
// boxes into its own max_per_class output rows and zeroes the rest: no host synchronisation.
#include <cub/device/device_segmented_sort.cuh>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

constexpr int kMaskBits = 64;
constexpr int kKeepThreads = 1024;
constexpr int64_t kMaxMaskWords = 48 * 1024 / 8;  // the suppressed set of one segment in shared memory

template <typename T>
__device__ void corners(const T* box, bool center, float* lo, float* hi) {
  for (int d = 0; d < 2; ++d) {
    const float a = to_float(box[d]), b = to_float(box[d + 2]);
    lo[d] = center ? a - b / 2 : fminf(a, b);
    hi[d] = center ? a + b / 2 : fmaxf(a, b);
  }
}

__device__ bool overlaps(const float* a, const float* b, float threshold) {  // {lo0, lo1, hi0, hi1}
  const float ih = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), iw = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
  if (ih <= 0 || iw <= 0) return false;
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (area_a <= 0 || area_b <= 0) return false;
  return ih * iw / (area_a + area_b - ih * iw) > threshold;
}

// Block (column block, row block, segment): bit j of mask[seg][row][column block] says whether
// ranked box row suppresses ranked box column*64 + j (only boxes ranked below it).
template <typename T>
__global__ void overlap_masks(const T* boxes, const int* order, NmsPlan p, int64_t words, uint64_t* mask) {
  const int64_t col_block = blockIdx.x, row_block = blockIdx.y, seg = blockIdx.z;
  if (col_block < row_block) return;
  const int64_t batch = seg / p.classes;
  __shared__ float cols[kMaskBits][4];
  const int64_t col = col_block * kMaskBits + threadIdx.x;
  if (col < p.boxes) {
    const T* box = boxes + (batch * p.boxes + order[seg * p.boxes + col]) * 4;
    corners(box, p.center_point_box, &cols[threadIdx.x][0], &cols[threadIdx.x][2]);
  }
  __syncthreads();
  const int64_t row = row_block * kMaskBits + threadIdx.x;
  if (row >= p.boxes) return;
  float own[4];
  corners(boxes + (batch * p.boxes + order[seg * p.boxes + row]) * 4, p.center_point_box, &own[0], &own[2]);
  uint64_t bits = 0;
  for (int j = 0; j < kMaskBits; ++j) {
    const int64_t other = col_block * kMaskBits + j;
    if (other > row && other < p.boxes && overlaps(own, cols[j], p.iou_threshold)) bits |= uint64_t{1} << j;
  }
  mask[(seg * p.boxes + row) * words + col_block] = bits;
}

template <typename T>
__global__ void keep_boxes(const T* sorted_scores, const int* order, const uint64_t* mask, NmsPlan p, int64_t words,
                           int64_t* selected) {
  extern __shared__ uint64_t removed[];
  const int64_t seg = blockIdx.x;
  for (int64_t w = threadIdx.x; w < words; w += blockDim.x) removed[w] = 0;
  __syncthreads();
  int64_t kept = 0;
  int64_t* rows = selected + seg * p.max_per_class * 3;
  for (int64_t i = 0; i < p.boxes && kept < p.max_per_class; ++i) {
    if (p.has_score_threshold && !(to_float(sorted_scores[seg * p.boxes + i]) > p.score_threshold)) break;
    if ((removed[i / kMaskBits] >> (i % kMaskBits)) & 1) continue;
    if (threadIdx.x == 0) {
      rows[kept * 3] = seg / p.classes;
      rows[kept * 3 + 1] = seg % p.classes;
      rows[kept * 3 + 2] = order[seg * p.boxes + i];
    }
    ++kept;
    const uint64_t* row_mask = mask + (seg * p.boxes + i) * words;
    for (int64_t w = i / kMaskBits + threadIdx.x; w < words; w += blockDim.x) removed[w] |= row_mask[w];
    __syncthreads();
  }
  for (int64_t r = kept * 3 + threadIdx.x; r < p.max_per_class * 3; r += blockDim.x) rows[r] = 0;
}

template <typename T>
cudaError_t sort_segments(void* temp, size_t& bytes, const T* keys, T* sorted, const int* index, int* order, int64_t n,
                          int64_t segments, const int64_t* offsets, cudaStream_t stream) {
  return cub::DeviceSegmentedSort::StableSortPairsDescending(temp, bytes, keys, sorted, index, order, n, segments,
                                                             offsets, offsets + 1, stream);
}

class NmsRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  explicit NmsRunner(const NmsPlan& plan) : p_(plan), segments_(plan.batches * plan.classes), words_((plan.boxes + 63) / 64) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    type_ = element_type(in[0].spec.dtype);
    boxes_ = in[0].data;
    scores_ = in[1].data;
    selected_ = static_cast<int64_t*>(out[0].data);
    const int64_t n = segments_ * p_.boxes;
    sorted_.resize(static_cast<size_t>(n) * element_bytes(type_) + 16);
    index_.resize(static_cast<size_t>(n) * sizeof(int) + 16);
    order_.resize(static_cast<size_t>(n) * sizeof(int) + 16);
    offsets_.resize(static_cast<size_t>(segments_ + 1) * sizeof(int64_t));
    mask_.resize(static_cast<size_t>(n * words_) * sizeof(uint64_t) + 16);
    // The box numbers of every segment and the segment offsets are constants: made once, untimed.
    launch_segment_layout(static_cast<int*>(index_.data()), static_cast<int64_t*>(offsets_.data()), segments_, p_.boxes,
                          ctx.stream);
    MC_DISPATCH_TYPE(type_, MC_CUDA_CHECK((sort_segments<T>(nullptr, temp_bytes_, nullptr, nullptr, nullptr, nullptr, n,
                                                            segments_, nullptr, ctx.stream))));
    temp_.resize(std::max<size_t>(temp_bytes_, 16));
  }

  void launch(cudaStream_t s) override {
    const int64_t n = segments_ * p_.boxes;
    size_t bytes = temp_bytes_;
    int* order = static_cast<int*>(order_.data());
    uint64_t* mask = static_cast<uint64_t*>(mask_.data());
    const dim3 blocks(static_cast<unsigned>(words_), static_cast<unsigned>(words_), static_cast<unsigned>(segments_));
    MC_DISPATCH_TYPE(type_, {
      T* sorted = static_cast<T*>(sorted_.data());
      MC_CUDA_CHECK((sort_segments<T>(temp_.data(), bytes, static_cast<const T*>(scores_), sorted,
                                      static_cast<const int*>(index_.data()), order, n, segments_,
                                      static_cast<const int64_t*>(offsets_.data()), s)));
      overlap_masks<T><<<blocks, kMaskBits, 0, s>>>(static_cast<const T*>(boxes_), order, p_, words_, mask);
      keep_boxes<T><<<static_cast<unsigned>(segments_), kKeepThreads, words_ * sizeof(uint64_t), s>>>(sorted, order, mask, p_,
                                                                                                    words_, selected_);
    });
    MC_CUDA_CHECK_LAUNCH();
  }

  std::string implementation() const override {
    return "own NMS: cub segmented sort, IoU bit masks, one block per class keeps boxes (output at the analyzer's bound)";
  }

 private:
  NmsPlan p_;
  int64_t segments_, words_;
  ElementType type_ = ElementType::kFloat32;
  const void *boxes_ = nullptr, *scores_ = nullptr;
  int64_t* selected_ = nullptr;
  DeviceBuffer sorted_, index_, order_, offsets_, mask_, temp_;
  size_t temp_bytes_ = 0;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_nms_runner(const NodeSpec& spec, const NmsPlan& plan, std::string* reason) {
  const int32_t dtype = spec.inputs[0].dtype;
  if (!accepts_dtype(NmsRunner::kDtypes, dtype, "NonMaxSuppression of ", reason)) return nullptr;
  if (spec.inputs[1].dtype != dtype) return *reason = "NonMaxSuppression with boxes and scores of different dtypes", nullptr;
  const int64_t words = (plan.boxes + 63) / 64;
  if (words > kMaxMaskWords || words > 65535) return *reason = "NonMaxSuppression of more than 393216 boxes per class", nullptr;
  if (plan.batches * plan.classes > 65535) return *reason = "NonMaxSuppression of more than 65535 (batch, class) pairs", nullptr;
  const double mask_bytes = static_cast<double>(plan.batches * plan.classes) * static_cast<double>(plan.boxes) * words * 8;
  if (mask_bytes > 8e9) return *reason = "NonMaxSuppression overlap masks above 8 GB", nullptr;
  return std::make_unique<NmsRunner>(plan);
}

}  // namespace modelcost::cuda
