// Kernel durations from CUPTI's activity API. Every sample pushes an external correlation id
// around its launches (cuptiActivityPushExternalCorrelationId); CUPTI tags the API calls made
// meanwhile with it, and each kernel record carries the correlation id of the call that
// launched it, so the GPU's own start/end timestamps are attributed to the sample exactly,
// whichever library (cuDNN, cuBLASLt, our kernels) launched them.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace modelcost::cuda {

class WallLedger;

struct KernelSpan {
  double kernel_ns = 0;      // sum of kernel durations
  uint64_t first_start = 0, last_end = 0;  // GPU timestamps (ns)
  std::vector<std::string> names;          // in launch order
  std::vector<double> durations_ns;        // of each, in the same order
  std::vector<uint64_t> starts;            // GPU start timestamp of each (ns), in the same order
};

class CuptiTimer {
 public:
  // Attaches CUPTI and enables kernel and API records; its start and its detaches are booked in
  // `ledger`, which must outlive it. CUPTI's buffer callbacks are process-global, so one timer
  // at a time receives the records: while another is live this one stays off. ok() is false
  // then, or when CUPTI refused (callers fall back to CUDA events); error() says which.
  explicit CuptiTimer(WallLedger& ledger);
  // Flushes CUPTI's buffers and disables the records it enabled: a timer made later attaches.
  ~CuptiTimer();
  CuptiTimer(const CuptiTimer&) = delete;
  CuptiTimer& operator=(const CuptiTimer&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // A fresh external correlation id, never reused during this timer's life.
  uint64_t next_external_id() { return next_external_id_++; }
  void push(uint64_t external_id);
  void pop();
  // Flushes CUPTI's buffers (call after synchronising) and returns the kernels of each external
  // id seen since the last collect.
  std::map<uint64_t, KernelSpan> collect();
  // Kernels whose launch carried no external id (outside any push/pop) since the last collect.
  size_t unattributed() const { return unattributed_; }

  // Kernel and API records off for a scope (records so far are kept): with them on, CUPTI's
  // range profiler reads 0 for the SASS instruction counters (seen with CUDA 13 on H100/H200).
  class Pause {
   public:
    explicit Pause(CuptiTimer& timer);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    CuptiTimer& timer_;
    bool active_ = false;  // false inside a Detach or without CUPTI: nothing to restore
  };

  // CUPTI detached from the process for a scope (cuptiFinalize; records so far are kept), then
  // attached again: with the records only disabled (Pause) CUPTI stays attached, and an attached
  // CUPTI slowed the GPU's own work in a graph replay (ResNet-50 at batch 1 on the H100: 547.6 us
  // a replay, against 502.6 us in a process without CUPTI). Whole-model replays are timed so.
  class Detach {
   public:
    explicit Detach(CuptiTimer& timer);
    ~Detach();
    Detach(const Detach&) = delete;
    Detach& operator=(const Detach&) = delete;

   private:
    CuptiTimer& timer_;
    bool active_ = false;
    std::optional<Pause> pause_;  // MODELCOST_CUPTI_DETACH=0: the records paused instead
  };

 private:
  struct Records;   // what CUPTI delivered, kernels and correlations (cupti_timer.cpp)
  struct Delivery;  // CUPTI's buffer callbacks, which hand the records to live_
  bool attach();
  bool enable_records();
  void disable_records();
  bool is_live() const;

  // The timer CUPTI's callbacks deliver to (nullptr: none; records delivered then are dropped).
  // Guarded by live_mutex_: the buffer-completed callback may run on CUPTI's own thread.
  static CuptiTimer* live_;
  static std::mutex live_mutex_;

  WallLedger& ledger_;
  std::unique_ptr<Records> records_;
  uint64_t next_external_id_ = 1;
  bool ok_ = false;
  bool detached_ = false;
  std::string error_;
  size_t unattributed_ = 0;
};

}  // namespace modelcost::cuda
