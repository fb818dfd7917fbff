// The serving engine's event loop: arrivals, a scheduler's choice of each iteration's work, the
// paged KV cache, preemption by recompute, and the bookkeeping behind the metrics.
#include <algorithm>
#include <cmath>
#include <deque>

#include "modelcost/errors.h"
#include "serve/serve.h"

namespace modelcost {
namespace {

// A request once it has arrived.
struct Sequence {
  size_t index = 0;              // into the requests
  int64_t computed = 0;          // positions in the KV cache
  int64_t generated = 0;         // output tokens so far
  int64_t prefill_target = 0;    // positions its (re)prefill must compute: prompt + generated at admission
  int64_t blocks = 0;
  bool in_prefill() const { return computed < prefill_target; }
};

struct Work {
  size_t running_index = 0;
  int64_t new_tokens = 1;
  bool prefill = false;
};

// The figures of `result.requests` alone: latency percentiles, the span from the first arrival to
// the last finish, and the rates over it. Returns the span, at least 1e-12 s, to average over.
double fill_request_metrics(ServeResult& result, double first_arrival_s) {
  std::vector<double> ttft, tpot, latency;
  double last_finish = 0, output_tokens = 0;
  for (const RequestOutcome& o : result.requests) {
    ttft.push_back(o.ttft_ms());
    if (o.request.output > 1) tpot.push_back(o.tpot_ms());
    latency.push_back(o.latency_ms());
    last_finish = std::max(last_finish, o.finish_s);
    output_tokens += static_cast<double>(o.request.output);
  }
  result.ttft_ms = percentiles_of(ttft);
  result.tpot_ms = percentiles_of(tpot);
  result.latency_ms = percentiles_of(latency);
  result.duration_s = last_finish - first_arrival_s;
  const double duration = std::max(result.duration_s, 1e-12);
  result.requests_per_s = static_cast<double>(result.requests.size()) / duration;
  result.output_tokens_per_s = output_tokens / duration;
  return duration;
}

// One serving engine: its requests, scheduler, cache and clock. It plans an iteration at its clock
// (plan_next), and the caller says when the iteration ended (complete): at once for a lone engine,
// after its stages and their queues for a virtual engine of a pipeline (simulate_pipeline).
class Engine {
 public:
  Engine(IterationPricer& pricer, const std::vector<ServeRequest>& requests, const SchedulerOptions& options, int64_t total_blocks)
      : pricer_(pricer), requests_(requests), options_(options), outcomes_(requests.size()) {
    total_blocks_ = free_blocks_ = total_blocks;
    now_ = requests_.front().arrival_s;
  }

  bool finished() const { return finished_ >= requests_.size(); }
  double now() const { return now_; }
  // The next iteration's slices, planned at now(); empty when the engine idled until its next
  // arrival instead (now() moved on). Throws Error(kExitUsage) when nothing can ever be scheduled.
  std::vector<IterationPricer::Slice> plan_next();
  // The planned iteration ended at `end_s`: tokens come out, the finished leave.
  void complete(double end_s);
  ServeResult run();  // alone: each iteration ends its priced time after it starts
  ServeResult summarise() const;

 private:
  int64_t blocks_for(int64_t tokens) const { return (tokens + options_.block_tokens - 1) / options_.block_tokens; }
  void admit_arrivals();
  bool admit_waiting(int64_t first_tokens, int64_t reserve_tokens);
  bool grow_to(Sequence& s, int64_t tokens);
  bool make_room_for_decode(size_t i);
  void preempt_newest();
  std::vector<Work> plan_static();
  std::vector<Work> plan_continuous();
  std::vector<Work> plan_chunked();
  void apply(const std::vector<Work>& work);
  void finish_and_compact();

  IterationPricer& pricer_;
  const std::vector<ServeRequest>& requests_;
  SchedulerOptions options_;
  std::vector<RequestOutcome> outcomes_;
  std::deque<Sequence> waiting_;
  std::vector<Sequence> running_;  // admission order: the newest last
  size_t next_arrival_ = 0, finished_ = 0;
  double now_ = 0;
  int64_t total_blocks_ = 0, free_blocks_ = 0;
  double in_flight_integral_ = 0, kv_integral_ = 0, peak_kv_ = 0;
  int64_t iterations_ = 0, preemptions_ = 0;
  size_t waiting_at_half_ = 0, waiting_at_last_ = 0;
  std::vector<Work> planned_;
};

void Engine::admit_arrivals() {
  while (next_arrival_ < requests_.size() && requests_[next_arrival_].arrival_s <= now_) {
    // Arrived during the last iteration: in flight since its arrival, not the iteration's start.
    in_flight_integral_ += now_ - requests_[next_arrival_].arrival_s;
    outcomes_[next_arrival_].request = requests_[next_arrival_];
    waiting_.push_back(Sequence{next_arrival_});
    ++next_arrival_;
    if (next_arrival_ == (requests_.size() + 1) / 2) waiting_at_half_ = waiting_.size();
    if (next_arrival_ == requests_.size()) waiting_at_last_ = waiting_.size();
  }
}

// Moves the oldest waiting sequence to the running ones with blocks for `first_tokens` positions
// (or its whole prompt and output with `reserve_tokens` < 0); false when they are not free.
bool Engine::admit_waiting(int64_t first_tokens, int64_t reserve_tokens) {
  if (waiting_.empty() || static_cast<int64_t>(running_.size()) >= options_.max_batch) return false;
  Sequence s = waiting_.front();
  const ServeRequest& r = requests_[s.index];
  const int64_t need = blocks_for(reserve_tokens < 0 ? r.prompt + r.output : first_tokens);
  if (need > free_blocks_) return false;
  waiting_.pop_front();
  s.prefill_target = r.prompt + s.generated;
  s.computed = 0;
  s.blocks = need;
  free_blocks_ -= need;
  running_.push_back(s);
  return true;
}

bool Engine::grow_to(Sequence& s, int64_t tokens) {
  const int64_t more = blocks_for(tokens) - s.blocks;
  if (more <= 0) return true;
  if (more > free_blocks_) return false;
  free_blocks_ -= more;
  s.blocks += more;
  return true;
}

// The newest running sequence gives its blocks back and waits first in line to be recomputed.
void Engine::preempt_newest() {
  Sequence s = running_.back();
  running_.pop_back();
  free_blocks_ += s.blocks;
  s.blocks = 0;
  s.computed = 0;
  ++outcomes_[s.index].preemptions;
  ++preemptions_;
  waiting_.push_front(s);
}

// A block for running_[i]'s next position, preempting the newest until one is free; false when
// running_[i] itself was preempted.
bool Engine::make_room_for_decode(size_t i) {
  while (!grow_to(running_[i], running_[i].computed + 1)) {
    const bool self = running_.size() - 1 == i;
    preempt_newest();
    if (self) return false;
  }
  return true;
}

// Batches formed from the queue and run to completion, their whole cache reserved up front.
std::vector<Work> Engine::plan_static() {
  if (running_.empty())
    while (admit_waiting(0, -1)) {
    }
  std::vector<Work> work;
  for (size_t i = 0; i < running_.size(); ++i) {
    const Sequence& s = running_[i];
    work.push_back(s.in_prefill() ? Work{i, s.prefill_target, true} : Work{i, 1, false});
  }
  return work;
}

// vLLM: waiting prompts are prefilled in an iteration of their own while blocks are free; else
// every running sequence decodes one token.
std::vector<Work> Engine::plan_continuous() {
  std::vector<Work> work;
  while (!waiting_.empty()) {
    const Sequence& next = waiting_.front();
    if (!admit_waiting(requests_[next.index].prompt + next.generated, 0)) break;
    work.push_back(Work{running_.size() - 1, running_.back().prefill_target, true});
  }
  if (!work.empty()) return work;
  for (size_t i = 0; i < running_.size(); ++i)
    if (!make_room_for_decode(i)) break;
  for (size_t i = 0; i < running_.size(); ++i) work.push_back(Work{i, 1, false});
  return work;
}

// Sarathi: a token budget per iteration, decodes first, then prefill chunks (started prompts
// before new ones).
std::vector<Work> Engine::plan_chunked() {
  std::vector<Work> work;
  for (size_t i = 0; i < running_.size(); ++i)
    if (!running_[i].in_prefill() && !make_room_for_decode(i)) break;
  int64_t budget = options_.chunk;
  for (size_t i = 0; i < running_.size(); ++i)
    if (!running_[i].in_prefill()) {
      work.push_back(Work{i, 1, false});
      --budget;
    }
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence& s = running_[i];
    const int64_t n = std::min(budget, s.prefill_target - s.computed);
    if (!s.in_prefill() || !grow_to(s, s.computed + n)) continue;
    work.push_back(Work{i, n, true});
    budget -= n;
  }
  while (budget > 0 && !waiting_.empty()) {
    const Sequence& next = waiting_.front();
    const int64_t n = std::min(budget, requests_[next.index].prompt + next.generated);
    if (!admit_waiting(n, 0)) break;
    work.push_back(Work{running_.size() - 1, n, true});
    budget -= n;
  }
  // Started prompts each holding blocks and none able to grow: the newest gives way.
  if (work.empty() && !running_.empty()) {
    preempt_newest();
    return plan_chunked();
  }
  return work;
}

// The iteration has ended at now_: caches grow, tokens come out.
void Engine::apply(const std::vector<Work>& work) {
  for (const Work& w : work) {
    Sequence& s = running_[w.running_index];
    s.computed += w.new_tokens;
    if (w.prefill && s.in_prefill()) continue;  // a chunk short of the prompt's end
    RequestOutcome& outcome = outcomes_[s.index];
    if (++s.generated == 1) outcome.first_token_s = now_;
    if (s.generated == requests_[s.index].output) outcome.finish_s = now_;
  }
}

void Engine::finish_and_compact() {
  auto done = [&](const Sequence& s) { return s.generated >= requests_[s.index].output; };
  for (const Sequence& s : running_)
    if (done(s)) {
      free_blocks_ += s.blocks;
      ++finished_;
    }
  running_.erase(std::remove_if(running_.begin(), running_.end(), done), running_.end());
}

std::vector<IterationPricer::Slice> Engine::plan_next() {
  admit_arrivals();
  switch (options_.kind) {
    case SchedulerKind::kStatic: planned_ = plan_static(); break;
    case SchedulerKind::kContinuous: planned_ = plan_continuous(); break;
    case SchedulerKind::kChunked: planned_ = plan_chunked(); break;
  }
  std::vector<IterationPricer::Slice> slices;
  if (planned_.empty()) {  // idle until the next arrival
    if (next_arrival_ >= requests_.size())
      throw Error(kExitUsage, "serve: no request can be scheduled with " + std::to_string(total_blocks_) + " KV blocks");
    now_ = requests_[next_arrival_].arrival_s;
    return slices;
  }
  if (++iterations_ > options_.max_iterations)
    throw Error(kExitUsage, "serve: the simulation ran past " + std::to_string(options_.max_iterations) +
                                " iterations; simulate fewer --requests");
  slices.reserve(planned_.size());
  for (const Work& w : planned_) slices.push_back({w.new_tokens, running_[w.running_index].computed});
  return slices;
}

void Engine::complete(double end_s) {
  const double dt = end_s - now_;
  const double kv_use = static_cast<double>(total_blocks_ - free_blocks_) / static_cast<double>(total_blocks_);
  in_flight_integral_ += static_cast<double>(running_.size() + waiting_.size()) * dt;
  kv_integral_ += kv_use * dt;
  peak_kv_ = std::max(peak_kv_, kv_use);
  now_ = end_s;
  apply(planned_);
  finish_and_compact();
}

ServeResult Engine::run() {
  while (!finished()) {
    const std::vector<IterationPricer::Slice> slices = plan_next();
    if (!slices.empty()) complete(now_ + pricer_.iteration_ms(slices) * 1e-3);
  }
  return summarise();
}

ServeResult Engine::summarise() const {
  ServeResult result;
  result.requests = outcomes_;
  const double duration = fill_request_metrics(result, requests_.front().arrival_s);
  result.mean_in_flight = in_flight_integral_ / duration;
  result.mean_kv_use = kv_integral_ / duration;
  result.peak_kv_use = peak_kv_;
  result.kv_blocks = total_blocks_;
  result.iterations = iterations_;
  result.preemptions = preemptions_;
  // Under saturation the queue grows with time: longer at the last arrival than at half of them,
  // and a request's wait for its first token grows with its arrival (the last quarter's mean TTFT
  // well above the second quarter's; a stable queue's is the same).
  const auto n = static_cast<double>(requests_.size());
  const bool queue_grows = static_cast<double>(waiting_at_last_) >= 0.05 * n &&
                           static_cast<double>(waiting_at_last_) > 1.5 * static_cast<double>(waiting_at_half_);
  auto mean_ttft = [&](size_t from, size_t to) {
    double sum = 0;
    for (size_t i = from; i < to; ++i) sum += outcomes_[i].ttft_ms();
    return sum / static_cast<double>(std::max<size_t>(to - from, 1));
  };
  const size_t count = outcomes_.size();
  const bool wait_grows = count >= 40 && mean_ttft(3 * count / 4, count) > 1.5 * mean_ttft(count / 4, count / 2);
  result.saturated = queue_grows || wait_grows;
  return result;
}

void check_options(const SchedulerOptions& o, const StepSetup& setup) {
  if (o.max_batch < 1 || o.max_batch > 65536) throw Error(kExitUsage, "--max-batch must be between 1 and 65536");
  if (o.pipeline_stages < 1 || o.pipeline_stages > std::max<int64_t>(setup.model->layers, 1))
    throw Error(kExitUsage, "--pp must be between 1 and the model's " + std::to_string(setup.model->layers) + " layers");
  const auto& links = setup.device->interconnect;
  if (auto node = links.find("node_gpus"); node != links.end() && static_cast<double>(setup.tp) > node->second)
    throw Error(kExitUsage, "serve: --tp " + std::to_string(setup.tp) + " spans more than a node of " +
                                std::to_string(static_cast<int64_t>(node->second)) + " GPUs; tensor parallelism across nodes is not modelled");
  if (stage_boundaries_between_nodes(setup, o.pipeline_stages) > 0 &&
      (!links.count("infiniband_gbps") || !links.count("infiniband_latency_us")))
    throw Error(kExitUsage, "serve: " + std::to_string(setup.tp * o.pipeline_stages) + " devices span nodes, and " +
                                setup.device->id + " has no interconnect.infiniband figures to send between them");
  if (o.chunk < 1 || o.chunk > (1 << 24)) throw Error(kExitUsage, "--chunk must be between 1 and 16777216");
  if (o.block_tokens < 1) throw Error(kExitUsage, "serve: KV blocks must hold at least one token");
}

// The virtual engines' results as one engine's: every request, the rates over the whole span,
// the time averages summed over the engines (in flight) or averaged (cache use).
ServeResult merge_engines(const std::vector<ServeResult>& parts, const std::vector<ServeRequest>& requests) {
  ServeResult merged;
  double in_flight = 0, kv_use = 0;
  for (const ServeResult& part : parts) {
    merged.requests.insert(merged.requests.end(), part.requests.begin(), part.requests.end());
    in_flight += part.mean_in_flight * part.duration_s;
    kv_use += part.mean_kv_use * part.duration_s;
    merged.peak_kv_use = std::max(merged.peak_kv_use, part.peak_kv_use);
    merged.kv_blocks += part.kv_blocks;
    merged.iterations += part.iterations;
    merged.preemptions += part.preemptions;
    merged.saturated = merged.saturated || part.saturated;
  }
  std::stable_sort(merged.requests.begin(), merged.requests.end(),
                   [](const RequestOutcome& a, const RequestOutcome& b) { return a.request.arrival_s < b.request.arrival_s; });
  const double duration = fill_request_metrics(merged, requests.front().arrival_s);
  merged.mean_in_flight = in_flight / duration;
  merged.mean_kv_use = kv_use / duration / static_cast<double>(parts.size());
  return merged;
}

// Pipeline parallelism: one virtual engine per stage, the requests dealt to them in turn as they
// arrive. The engine whose clock is earliest plans next; its iteration takes each stage in turn
// as soon as the stage has finished the batch before it (stages serve batches in the order they
// come), then sends its hidden states to the next. A stage waiting for a batch is a bubble.
ServeResult simulate_pipeline(IterationPricer& pricer, const std::vector<ServeRequest>& requests, const SchedulerOptions& options,
                              int64_t blocks) {
  const auto stages = static_cast<size_t>(options.pipeline_stages);
  std::vector<std::vector<ServeRequest>> shares(stages);
  for (size_t i = 0; i < requests.size(); ++i) shares[i % stages].push_back(requests[i]);
  std::vector<Engine> engines;
  engines.reserve(stages);
  for (const auto& share : shares)
    if (!share.empty()) engines.emplace_back(pricer, share, options, blocks);
  std::vector<double> stage_free(stages, 0.0), stage_busy(stages, 0.0);
  while (true) {
    Engine* next = nullptr;
    for (Engine& e : engines)
      if (!e.finished() && (!next || e.now() < next->now())) next = &e;
    if (!next) break;
    const std::vector<IterationPricer::Slice> slices = next->plan_next();
    if (slices.empty()) continue;
    const std::vector<double> ms = pricer.stage_ms(slices);
    int64_t rows = 0;
    for (const IterationPricer::Slice& slice : slices) rows += slice.new_tokens;
    double t = next->now();
    for (size_t stage = 0; stage < stages; ++stage) {
      t = std::max(t, stage_free[stage]) + ms[stage] * 1e-3;
      stage_free[stage] = t;
      stage_busy[stage] += ms[stage] * 1e-3;
      if (stage + 1 < stages) t += pricer.send_ms(rows, static_cast<int64_t>(stage)) * 1e-3;
    }
    next->complete(t);
  }
  std::vector<ServeResult> parts;
  for (const Engine& e : engines) parts.push_back(e.summarise());
  ServeResult merged = merge_engines(parts, requests);
  for (double busy : stage_busy) merged.stage_busy.push_back(busy / std::max(merged.duration_s, 1e-12));
  return merged;
}

}  // namespace

int64_t kv_block_budget(const StepSetup& setup, const SchedulerOptions& options, int64_t iteration_tokens) {
  MemoryPerDevice fixed = memory_per_device(setup, 1, 0, iteration_tokens, options.reserve_bytes);
  // A stage holds its layers' weights; its cache share (1/stages of every sequence's, for stages
  // engines) comes to one engine's sequences at the whole model's bytes per token.
  fixed.weights_bytes /= static_cast<double>(std::max<int64_t>(options.pipeline_stages, 1));
  const double free_bytes = setup.device->memory_gb * 1e9 - fixed.total();
  const double block_bytes = kv_bytes_per_token_per_device(setup) * static_cast<double>(options.block_tokens);
  if (setup.device->memory_gb <= 0 || block_bytes <= 0) return 1 << 30;  // no capacity known: unbounded
  return free_bytes > block_bytes ? static_cast<int64_t>(std::min(free_bytes / block_bytes, 1e12)) : 0;
}

ServeResult simulate_serving(const StepSetup& setup, const std::vector<ServeRequest>& requests, const SchedulerOptions& options) {
  check_options(options, setup);
  if (requests.empty() || static_cast<int64_t>(requests.size()) > kMaxServeRequests)
    throw Error(kExitUsage, "serve: between 1 and " + std::to_string(kMaxServeRequests) + " requests");
  int64_t largest_prompt = 0;
  for (const ServeRequest& r : requests) largest_prompt = std::max(largest_prompt, r.prompt);
  const int64_t iteration_tokens = options.kind == SchedulerKind::kChunked ? options.chunk : largest_prompt;
  const int64_t blocks = options.kv_blocks > 0 ? options.kv_blocks : kv_block_budget(setup, options, iteration_tokens);
  for (size_t i = 0; i < requests.size(); ++i) {
    const int64_t need = (requests[i].prompt + requests[i].output + options.block_tokens - 1) / options.block_tokens;
    if (need > blocks)
      throw Error(kExitUsage, "serve: request " + std::to_string(i + 1) + " needs " + std::to_string(need) +
                                  " KV blocks of " + std::to_string(options.block_tokens) + " tokens; the device holds " +
                                  std::to_string(blocks) + " beside the weights (more --tp or --pp, or shorter requests)");
  }
  IterationPricer pricer(setup, options.pipeline_stages);
  if (options.pipeline_stages == 1) return Engine(pricer, requests, options, blocks).run();
  return simulate_pipeline(pricer, requests, options, blocks);
}

}  // namespace modelcost
