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
  if (tag == kRelease) {
    release(sim);
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

void BenchmarkClient::send_now(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  metrics::RequestRecord& rec = (*records_)[spec.id];
  rec.id = spec.id;
  rec.arrival = sim.now();
  rec.client_queue_time = sim.now() - spec.arrival;  // time spent waiting for a --max-concurrency slot
  rec.prompt_tokens = spec.prompt_tokens;
  rec.output_tokens = spec.output_tokens;
  rec.warmup = spec.id < warmup_requests_;
  ++outstanding_;
  ++sent_;
  peak_outstanding_ = std::max(peak_outstanding_, outstanding_);
  sink_.send(sim, spec);
}

void BenchmarkClient::on_request_done(engine::Simulator& sim, int64_t /*request_id*/) {
  if (completion_delay_ > SimTime::zero()) {
    sim.schedule_after(completion_delay_, this, kRelease);
  } else {
    release(sim);
  }
}

void BenchmarkClient::release(engine::Simulator& sim) {
  --outstanding_;
  ++done_;
  if (!blocked_.empty() && (max_concurrency_ == 0 || outstanding_ < max_concurrency_)) {
    const workloads::RequestSpec spec = blocked_.front();
    blocked_.pop_front();
    send_now(sim, spec);
  }
}

}  // namespace servesim::sim
