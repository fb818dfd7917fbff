// measure_serving_step_on_gpu (cuda_entry.h): builds the deployed step (decode, prefill or both)
// on each GPU of the tensor-parallel group (one host thread per GPU, NCCL communicators from one
// unique id), captures it in a CUDA graph, and times back-to-back replays with CUDA events between them, as a
// serving loop replays its step. Rank 0's replays are the samples.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "calibrate/nccl_api.h"
#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "llm/step_rank.h"
#include "measure/step_roles.h"
#include "measure/cuda_entry.h"
#include "timing/sampler.h"
#include "timing/timing.h"

namespace modelcost {
namespace cuda {
namespace {

// Holds every rank's thread at the same phase (set-up, warm-up, timing); a rank that fails
// aborts it so the others stop instead of waiting for it.
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_) throw Error(kExitRuntime, "another GPU of the group failed");
    const int generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation != generation_ || aborted_; });
    if (aborted_) throw Error(kExitRuntime, "another GPU of the group failed");
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_, waiting_ = 0, generation_ = 0;
  bool aborted_ = false;
};

struct KernelProfile {
  double busy_us = 0, span_us = 0;
  std::string breakdown;
  std::vector<KernelRoleTiming> by_role;
};

using KernelRoles = std::vector<std::pair<std::string, int>>;

// The replay's kernels (in start order) dealt to the roles of the capture in launch order; each
// kernel's time runs to the next one's start. Empty when the counts disagree.
std::vector<KernelRoleTiming> time_by_role(const KernelSpan& span, const KernelRoles& roles) {
  size_t total = 0;
  for (const auto& r : roles) total += static_cast<size_t>(r.second);
  if (total != span.starts.size() || total == 0) return {};
  std::vector<KernelRoleTiming> out;
  size_t next = 0;
  for (const auto& [role, count] : roles) {
    auto it = std::find_if(out.begin(), out.end(), [&](const KernelRoleTiming& t) { return t.role == role; });
    if (it == out.end()) it = out.insert(out.end(), KernelRoleTiming{role, 0, 0});
    for (int k = 0; k < count; ++k, ++next) {
      const double until = next + 1 < span.starts.size() ? static_cast<double>(span.starts[next + 1] - span.starts[next])
                                                         : span.durations_ns[next];
      it->kernels += 1;
      it->us += until / 1e3;
    }
  }
  return out;
}

struct RankResult {
  std::vector<float> samples_ms;
  KernelProfile profile;
  int64_t kernels = 0;
  std::string implementation;
  std::exception_ptr error;
};

// Replays `exec` back to back, an event between consecutive replays: samples in ms.
std::vector<float> time_replays(cudaGraphExec_t exec, cudaStream_t stream, int repeats) {
  std::vector<cudaEvent_t> events(repeats + 1);
  for (auto& e : events) MC_CUDA_CHECK(cudaEventCreate(&e));
  MC_CUDA_CHECK(cudaEventRecord(events[0], stream));
  for (int i = 0; i < repeats; ++i) {
    MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MC_CUDA_CHECK(cudaEventRecord(events[i + 1], stream));
  }
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> samples(repeats);
  for (int i = 0; i < repeats; ++i) MC_CUDA_CHECK(cudaEventElapsedTime(&samples[i], events[i], events[i + 1]));
  for (auto& e : events) cudaEventDestroy(e);
  return samples;
}

// One replay with `timer`'s kernel records (rank 0; the others, without a timer, replay alongside
// for the collectives).
KernelProfile profile_replay(cudaGraphExec_t exec, cudaStream_t stream, CuptiTimer* timer, const KernelRoles& roles) {
  KernelProfile p;
  const bool record = timer && timer->ok();
  const uint64_t id = record ? timer->next_external_id() : 0;
  if (record) timer->push(id);
  MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  if (record) timer->pop();
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!record) return p;
  const KernelSpan span = timer->collect()[id];
  std::map<std::string, std::pair<int, double>> kinds;  // short name -> (count, ns)
  for (size_t i = 0; i < span.names.size(); ++i) {
    auto& k = kinds[short_kernel_name(span.names[i])];
    k.first += 1;
    k.second += span.durations_ns[i];
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> sorted(kinds.begin(), kinds.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  p.by_role = time_by_role(span, roles);
  p.busy_us = span.kernel_ns / 1e3;
  p.span_us = static_cast<double>(span.last_end - span.first_start) / 1e3;
  for (const auto& [name, k] : sorted)
    p.breakdown += (p.breakdown.empty() ? "" : "; ") + name + " " + std::to_string(k.first) + "x " +
                   std::to_string(static_cast<int>(k.second / 1e3 + 0.5)) + " us";
  return p;
}

// The step's collectives of `role` alone (every rank replays them together, so none waits for a
// slower one): microseconds per step, the median of 10 replays of a graph of them.
double time_collectives_alone(const StepRank& step, const char* role, cudaStream_t stream, Barrier& barrier) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  step.enqueue_collectives(role);
  MC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  MC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  barrier.wait();
  MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  barrier.wait();
  std::vector<float> samples = time_replays(exec, stream, 10);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2] * 1e3;
}

// One GPU's place in the group: its rank, its communicator (nullptr alone), the group's barrier,
// and the timing state whose CUPTI timer rank 0 pauses and profiles the replays with.
struct RankSeat {
  int rank;
  ncclComm_t comm;
  Barrier& barrier;
  Timing& timing;
};

void run_rank(const ServingStepSpec& spec, const RankSeat& seat, RankResult& result) {
  const int rank = seat.rank;
  Barrier& barrier = seat.barrier;
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  try {
    MC_CUDA_CHECK(cudaSetDevice(rank));
    prepare_flash_decoding();
    MC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    {
      StepRank step(spec, rank, seat.comm, stream);
      step.autotune();
      barrier.wait();
      step.enqueue();  // eager once: NCCL and the libraries set up outside the capture
      MC_CUDA_CHECK(cudaStreamSynchronize(stream));
      barrier.wait();
      MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      step.enqueue();
      MC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      MC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      result.kernels = count_kernel_nodes(graph);
      result.implementation = step.description();
      for (int i = 0; i < spec.warmup; ++i) MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      MC_CUDA_CHECK(cudaStreamSynchronize(stream));
      {
        // CUPTI's records (on from the timer's first use here) stay off while the replays are timed.
        std::optional<CuptiTimer::Pause> pause;
        if (rank == 0) pause.emplace(seat.timing.cupti());
        barrier.wait();
        result.samples_ms = time_replays(exec, stream, spec.repeats);
        barrier.wait();
      }
      barrier.wait();
      result.profile = profile_replay(exec, stream, rank == 0 ? &seat.timing.cupti() : nullptr, step.kernel_roles());
      // Every rank times both (the collectives need them all); rank 0's profile keeps the times.
      if (seat.comm)
        for (const char* role : {step_role::kAllReduce, step_role::kGather}) {
          const double us = time_collectives_alone(step, role, stream, barrier);
          for (KernelRoleTiming& r : result.profile.by_role)
            if (r.role == role) r.alone_us = us;
        }
    }
  } catch (...) {
    result.error = std::current_exception();
    barrier.abort();
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (stream) cudaStreamDestroy(stream);
}

std::vector<RankResult> run_ranks(const ServingStepSpec& spec, Timing& timing) {
  const int tp = static_cast<int>(spec.tensor_parallel);
  std::vector<RankResult> results(tp);
  Barrier barrier(tp);
  if (tp == 1) {
    run_rank(spec, {0, nullptr, barrier, timing}, results[0]);
    return results;
  }
  int devices = 0;
  MC_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < tp) throw Error(kExitRuntime, "--tp " + std::to_string(tp) + " needs " + std::to_string(tp) +
                                                  " GPUs; this machine has " + std::to_string(devices));
  const NcclApi* nccl = nccl_api();
  if (!nccl) throw Error(kExitRuntime, "--tp " + std::to_string(tp) + " measures with NCCL: libnccl.so.2 not found");
  ncclUniqueId id;
  check_nccl(nccl->get_unique_id(&id), "ncclGetUniqueId");
  std::vector<ncclComm_t> comms(tp, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> finished{0}, ready{0};
  std::atomic<bool> failed{false};
  for (int r = 0; r < tp; ++r)
    threads.emplace_back([&, r] {
      try {
        MC_CUDA_CHECK(cudaSetDevice(r));
        check_nccl(nccl->comm_init_rank(&comms[r], tp, id, r), "ncclCommInitRank");
        ++ready;
        run_rank(spec, {r, comms[r], barrier, timing}, results[r]);
      } catch (...) {
        results[r].error = std::current_exception();
        barrier.abort();
      }
      if (results[r].error) failed = true;
      ++finished;
    });
  // A rank that fails can leave the others inside a collective that waits for it: once every
  // communicator exists, aborting them ends those kernels and every thread returns.
  bool aborted = false;
  while (finished < tp) {
    if (failed && !aborted && ready == tp) {
      for (ncclComm_t c : comms) nccl->comm_abort(c);
      aborted = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& t : threads) t.join();
  if (!aborted)
    for (ncclComm_t c : comms)
      if (c) nccl->comm_destroy(c);
  return results;
}

double quantile(const std::vector<float>& sorted, double q) {
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

}  // namespace

ServingStepTiming time_serving_step(const ServingStepSpec& spec, Timing& timing) {
  ServingStepTiming t;
  try {
    cuda::rank_shape(spec);  // refuses a spec that cannot run before any allocation
    if (spec.repeats < 1) throw Error(kExitUsage, "the deployed step needs at least one timed replay");
    std::vector<cuda::RankResult> ranks = cuda::run_ranks(spec, timing);
    for (const auto& r : ranks)
      if (r.error) std::rethrow_exception(r.error);
    std::vector<float> s = ranks[0].samples_ms;
    std::sort(s.begin(), s.end());
    t.measured = true;
    t.samples = static_cast<int>(s.size());
    t.min_us = s.front() * 1e3;
    t.max_us = s.back() * 1e3;
    t.median_us = cuda::quantile(s, 0.5) * 1e3;
    t.p10_us = cuda::quantile(s, 0.1) * 1e3;
    t.p90_us = cuda::quantile(s, 0.9) * 1e3;
    t.kernels = ranks[0].kernels;
    t.kernel_busy_us = ranks[0].profile.busy_us;
    t.kernel_span_us = ranks[0].profile.span_us;
    t.kernel_breakdown = ranks[0].profile.breakdown;
    t.by_role = ranks[0].profile.by_role;
    t.implementation = ranks[0].implementation;
  } catch (const Error& e) {
    t.reason = e.what();
  } catch (const std::exception& e) {
    t.reason = e.what();
  }
  return t;
}

}  // namespace cuda

// The tests' entry: the step with a timer of its own, attached at rank 0's first use and gone on
// return (a backend's timer live in the process meanwhile would get CUPTI's records instead).
ServingStepTiming measure_serving_step_on_gpu(const ServingStepSpec& spec) {
  cuda::Timing timing;
  return cuda::time_serving_step(spec, timing);
}

}  // namespace modelcost
