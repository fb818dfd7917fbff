#include "timing/cupti_timer.h"

#include "timing/wall_ledger.h"

#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace modelcost::cuda {
namespace {

constexpr size_t kBufferBytes = 8u << 20;

// The kinds enable_records() turns on, which Pause and the destructor turn off again.
constexpr CUpti_ActivityKind kRecordKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                               CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME,
                                               CUPTI_ACTIVITY_KIND_DRIVER};

// True on success; otherwise *error names the call and CUPTI's reason.
bool succeeded(CUptiResult r, const char* what, std::string* error) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  *error = std::string(what) + ": " + (text ? text : "unknown CUPTI error");
  return false;
}

}  // namespace

// Filled by the buffer-completed callback, which may run on CUPTI's own thread.
struct CuptiTimer::Records {
  struct KernelRecord {
    uint32_t correlation;
    uint64_t start, end;
    std::string name;
  };
  std::mutex mutex;
  std::unordered_map<uint32_t, uint64_t> external_of;  // API correlation id -> external id
  std::vector<KernelRecord> kernels;
};

struct CuptiTimer::Delivery {
  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = kBufferBytes;
    *max_records = 0;
  }

  static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::lock_guard<std::mutex> live(live_mutex_);
    if (live_) {
      Records& r = *live_->records_;
      std::lock_guard<std::mutex> lock(r.mutex);
      CUpti_Activity* record = nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          r.kernels.push_back({k->correlationId, k->start, k->end, k->name ? k->name : "?"});
        } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
          const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
          if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) r.external_of[e->correlationId] = e->externalId;
        }
      }
    }
    std::free(buffer);
  }
};

CuptiTimer* CuptiTimer::live_ = nullptr;
std::mutex CuptiTimer::live_mutex_;

CuptiTimer::CuptiTimer(WallLedger& ledger) : ledger_(ledger), records_(std::make_unique<Records>()) {
  LedgerScope start(ledger_, "CUPTI start");
  // MODELCOST_CUPTI=0: no CUPTI in the process (CUDA events time everything; no kernel breakdown).
  if (const char* env = std::getenv("MODELCOST_CUPTI"); env && std::string(env) == "0") {
    error_ = "CUPTI turned off (MODELCOST_CUPTI=0)";
    return;
  }
  {
    std::lock_guard<std::mutex> lock(live_mutex_);
    if (live_) {
      error_ = "another CuptiTimer is live in this process (CUPTI delivers its records to one)";
      return;
    }
    live_ = this;
  }
  ok_ = attach();
}

CuptiTimer::~CuptiTimer() {
  if (!is_live()) return;
  if (!detached_) {
    cuptiActivityFlushAll(1);  // what CUPTI still holds reaches this timer, not a later one
    disable_records();
  }
  std::lock_guard<std::mutex> lock(live_mutex_);
  live_ = nullptr;
}

bool CuptiTimer::is_live() const {
  std::lock_guard<std::mutex> lock(live_mutex_);
  return live_ == this;
}

bool CuptiTimer::attach() {
  return succeeded(cuptiActivityRegisterCallbacks(Delivery::requested, Delivery::completed),
                   "cuptiActivityRegisterCallbacks", &error_) &&
         enable_records();
}

bool CuptiTimer::enable_records() {
  auto check = [&](CUptiResult r, const char* what) { return succeeded(r, what, &error_); };
  return check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernel records") &&
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "enable external correlation") &&
        // External correlation records accompany API records: both runtime and driver, since
        // cuDNN and cuBLASLt launch some kernels through the driver API.
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable runtime records") &&
        check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "enable driver records");
}

void CuptiTimer::disable_records() {
  for (CUpti_ActivityKind kind : kRecordKinds) cuptiActivityDisable(kind);
}

CuptiTimer::Pause::Pause(CuptiTimer& timer) : timer_(timer) {
  if (!timer_.ok_ || timer_.detached_) return;
  active_ = true;
  cuptiActivityFlushAll(1);
  timer_.disable_records();
}

CuptiTimer::Pause::~Pause() {
  if (active_ && timer_.ok_) timer_.ok_ = timer_.enable_records();
}

CuptiTimer::Detach::Detach(CuptiTimer& timer) : timer_(timer) {
  if (!timer_.ok_ || timer_.detached_) return;
  // MODELCOST_CUPTI_DETACH=0: records off only (the replays then run under an attached CUPTI).
  if (const char* env = std::getenv("MODELCOST_CUPTI_DETACH"); env && std::string(env) == "0") {
    pause_.emplace(timer_);
    return;
  }
  LedgerScope phase(timer_.ledger_, "CUPTI detached and attached again");
  cudaDeviceSynchronize();   // nothing in flight that CUPTI would still record
  cuptiActivityFlushAll(1);  // the buffers so far reach the callback, so collect() still sees them
  if (cuptiFinalize() != CUPTI_SUCCESS) return;  // still attached: the replays run under it, as before
  active_ = timer_.detached_ = true;
}

CuptiTimer::Detach::~Detach() {
  if (!active_) return;
  LedgerScope phase(timer_.ledger_, "CUPTI detached and attached again");
  timer_.detached_ = false;
  timer_.ok_ = timer_.attach();
}

void CuptiTimer::push(uint64_t id) { cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }

void CuptiTimer::pop() {
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::map<uint64_t, KernelSpan> CuptiTimer::collect() {
  cuptiActivityFlushAll(1);
  Records& c = *records_;
  std::lock_guard<std::mutex> lock(c.mutex);
  using Kernel = Records::KernelRecord;
  std::sort(c.kernels.begin(), c.kernels.end(), [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
  std::map<uint64_t, KernelSpan> spans;
  unattributed_ = 0;
  for (const Kernel& k : c.kernels) {
    auto it = c.external_of.find(k.correlation);
    if (it == c.external_of.end()) {
      ++unattributed_;
      continue;
    }
    KernelSpan& s = spans[it->second];
    s.kernel_ns += static_cast<double>(k.end - k.start);
    if (s.names.empty() || k.start < s.first_start) s.first_start = k.start;
    s.last_end = std::max(s.last_end, k.end);
    s.names.push_back(k.name);
    s.durations_ns.push_back(static_cast<double>(k.end - k.start));
    s.starts.push_back(k.start);
  }
  c.kernels.clear();
  c.external_of.clear();
  return spans;
}

}  // namespace modelcost::cuda
