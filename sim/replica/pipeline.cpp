#include "sim/replica/pipeline.h"

#include <algorithm>
#include <string>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

int64_t ceil_ns(double s) { return s > 0 ? SimTime::from_seconds_ceil(s).ns() : 0; }

}  // namespace

PipelineStages::PipelineStages(const models::CostModel& cost, int pp)
    : cost_(cost),
      roofline_(dynamic_cast<const models::RooflineCostModel*>(&cost)),
      free_at_ns_(static_cast<size_t>(std::max(pp, 1)), 0),
      busy_ns_(static_cast<size_t>(std::max(pp, 1)), 0) {
  if (pp < 1) throw ConfigError("pipeline: pipeline-parallel-size must be >= 1");
}

models::PipelineStepTimes PipelineStages::split(const models::BatchShape& shape) const {
  if (roofline_ != nullptr && roofline_->placement().pipeline_parallel_size == size()) {
    return roofline_->estimate_pipeline(shape);
  }
  const models::StepCost c = cost_.estimate(shape);
  models::PipelineStepTimes t;
  t.overhead_s = c.overhead_s;
  t.stage_s.assign(static_cast<size_t>(size()), (c.total_s - c.overhead_s) / size());
  t.hop_s.assign(static_cast<size_t>(size() - 1), 0.0);
  return t;
}

SimTime PipelineStages::run(SimTime now, const models::BatchShape& shape) {
  SERVESIM_CHECK(!shape.empty(), "pipeline: empty step");
  const models::PipelineStepTimes t = split(shape);
  const int64_t start = now.ns();
  // Host: the driver schedules and prepares the virtual engines' steps one at a time.
  const int64_t host_start = std::max(start, host_free_ns_);
  host_free_ns_ = host_start + ceil_ns(t.overhead_s);
  // Stage 0 computes as soon as it is free; every hand-off is a rendezvous of both stages.
  int64_t begin = std::max(host_free_ns_, free_at_ns_[0]);
  int64_t busy_from = begin;  // when the current stage started holding this micro-batch
  for (size_t s = 0;; ++s) {
    const int64_t computed = begin + ceil_ns(t.stage_s[s]);
    if (s + 1 == free_at_ns_.size()) {
      free_at_ns_[s] = computed;
      busy_ns_[s] += computed - busy_from;
      begin = computed;
      break;
    }
    const int64_t hop_start = std::max(computed, free_at_ns_[s + 1]);
    const int64_t hop_end = hop_start + ceil_ns(t.hop_s[s]);
    // Stage s waits for its peer, then sends; it is free once the send is done.
    free_at_ns_[s] = hop_end;
    busy_ns_[s] += hop_end - busy_from - (hop_start - computed);
    busy_from = hop_start;
    begin = hop_end;
  }
  const int64_t end = std::max(begin, start + 1);
  in_flight_ns_ += std::max<int64_t>(0, end - std::max(start, covered_until_ns_));
  covered_until_ns_ = std::max(covered_until_ns_, end);
  return SimTime::from_ns(end);
}

}  // namespace servesim::sim
