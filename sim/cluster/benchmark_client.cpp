#include "sim/cluster/benchmark_client.h"

#include <algorithm>

namespace servesim::sim {

BenchmarkClient::BenchmarkClient(workloads::Workload& workload, RequestSink& sink,
                                 int64_t max_concurrency, int64_t warmup_requests,
                                 std::vector<metrics::RequestRecord>* records)
    : workload_(workload),
      sink_(sink),
      max_concurrency_(max_concurrency),
      warmup_requests_(warmup_requests),
      records_(records) {}

void BenchmarkClient::start(engine::Simulator& sim) {
  next_ = workload_.next();
  schedule_next_arrival(sim);
}

void BenchmarkClient::schedule_next_arrival(engine::Simulator& sim) {
  if (next_) sim.schedule_at(std::max(next_->arrival, sim.now()), this, kArrival);
}

void BenchmarkClient::on_event(engine::Simulator& sim, int64_t tag) {
  if (tag >= kReleaseBase) {
    release(sim, tag - kReleaseBase);
    return;
  }
  if (tag == kFollowUp) {
    // One event per follow-up, at its arrival: the heap's top is due now.
    const workloads::RequestSpec spec = follow_ups_.top();
    follow_ups_.pop();
    send_now(sim, spec, /*acquire=*/false);
    return;
  }
  // Deliver every request due now before anything else runs at this instant, so that requests
  // arriving together (e.g. --request-rate inf) reach the engine's queue together.
  while (next_ && next_->arrival <= sim.now()) {
    const workloads::RequestSpec spec = *next_;
    next_ = workload_.next();
    if (max_concurrency_ > 0 && outstanding_ >= max_concurrency_) {
      blocked_.push_back(spec);
    } else {
      send_now(sim, spec);
    }
  }
  schedule_next_arrival(sim);
}

void BenchmarkClient::send_now(engine::Simulator& sim, const workloads::RequestSpec& spec,
                               bool acquire) {
  metrics::RequestRecord& rec = (*records_)[spec.id];
  rec.id = spec.id;
  rec.arrival = sim.now();
  rec.client_queue_time =
      sim.now() - spec.arrival;  // time spent waiting for a --max-concurrency slot
  rec.prompt_tokens = spec.prompt_tokens;
  rec.output_tokens = spec.output_tokens;
  rec.warmup = spec.id < warmup_requests_;
  rec.class_id = spec.class_id;
  if (acquire) ++outstanding_;
  ++sent_;
  peak_outstanding_ = std::max(peak_outstanding_, outstanding_);
  sink_.send(sim, spec);
}

void BenchmarkClient::on_request_done(engine::Simulator& sim, int64_t request_id) {
  if (completion_delay_ > SimTime::zero()) {
    sim.schedule_after(completion_delay_, this, kReleaseBase + request_id);
  } else {
    release(sim, request_id);
  }
}

void BenchmarkClient::release(engine::Simulator& sim, int64_t request_id) {
  ++done_;
  const SimTime sent = (*records_)[static_cast<size_t>(request_id)].arrival;
  if (std::optional<workloads::RequestSpec> next = workload_.on_done(request_id, sent, sim.now())) {
    // A conversation's next turn: it keeps the conversation's slot.
    const SimTime at = std::max(next->arrival, sim.now());
    follow_ups_.push(std::move(*next));
    sim.schedule_at(at, this, kFollowUp);
    return;
  }
  --outstanding_;
  if (!blocked_.empty() && (max_concurrency_ == 0 || outstanding_ < max_concurrency_)) {
    const workloads::RequestSpec spec = blocked_.front();
    blocked_.pop_front();
    send_now(sim, spec);
  }
}

}  // namespace servesim::sim
