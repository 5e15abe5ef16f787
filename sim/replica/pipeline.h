// PipelineStages: the GPUs of one pipeline-parallel replica as a shared, first-come-first-served
// timeline, and the closed form of its steady state (docs/cost_model.md §7).
//
// vLLM V0 runs a replica with pipeline_parallel_size = PP as PP "virtual engines": PP schedulers,
// each with 1/PP of the KV blocks (core/scheduler.py: num_gpu_blocks //= pipeline_parallel_size)
// and its own token and sequence budgets; a new request goes to the one with the fewest unfinished
// requests (engine/llm_engine.py _add_processed_request: costs.index(min(costs))); the async
// engine loop keeps one step of every virtual engine in flight (engine/async_llm_engine.py
// run_engine_loop), and each stage runs the steps in the order they were issued (one asyncio lock
// per stage in the executors' _driver_execute_model_async). The simulator does the same: a
// replica is PP Replica objects (Replica::set_virtual_engines) sharing one PipelineStages.
//
// One step of one virtual engine (a micro-batch) here:
//   host:   start_h = max(now, host free); the CPU overhead o runs to start_h + o (the driver
//           schedules the virtual engines one after the other).
//   stage s computes for τ_s = estimate_pipeline(shape).stage_s[s], starting when the micro-batch
//           has arrived and the stage is free; the hand-off to s + 1 (hop_s) is a rendezvous: it
//           starts when stage s has computed and stage s + 1 is free, and occupies both stages.
//   The step ends when the last stage has computed (the sampled tokens are out).
// With PP = 1 a replica never uses this class (its step is estimate().total_s, unchanged).
//
// Steady state (models::pipeline_round_s): m identical micro-batches, each issuing its next step as
// soon as its previous one ends, repeat every
//   round = max(o + Σ_s τ_s + Σ_s hop_s,  m · max(o, max_s (hop_{s−1} + τ_s + hop_s)))
// (one micro-batch's own loop vs. the busiest resource serving all m). Each request advances one
// token per round; the bubble of stage s is 1 − m·occupancy_s / round. One request alone (m = 1)
// sees the full Σ of the stages, and the other stages idle: bubble (PP−1)/PP for equal stages.
//
// Determinism: times are integer nanoseconds (each part rounded up), reservations are processed in
// simulation-event order.
#ifndef SERVESIM_SIM_REPLICA_PIPELINE_H_
#define SERVESIM_SIM_REPLICA_PIPELINE_H_

#include <cstdint>
#include <vector>

#include "models/batch_shape.h"
#include "models/cost_model.h"
#include "models/roofline_cost_model.h"
#include "sim/base/time.h"

namespace servesim::sim {

class PipelineStages {
 public:
  // `cost` times the steps: with a RooflineCostModel they are split by estimate_pipeline(); any
  // other CostModel's total (minus its overhead) is split evenly over the stages, with no hand-off
  // time. REQUIRES: pp >= 1; `cost` outlives this object.
  PipelineStages(const models::CostModel& cost, int pp);

  int size() const { return static_cast<int>(free_at_ns_.size()); }
  // Reserves host and stages for one micro-batch scheduled at `now`; returns when it leaves the
  // last stage (> now). An empty shape is not allowed.
  SimTime run(SimTime now, const models::BatchShape& shape);
  // The split of one step that run() uses.
  models::PipelineStepTimes split(const models::BatchShape& shape) const;

  // Time stage `stage` was busy (compute + hand-offs), and time at least one micro-batch was in
  // flight (from its schedule to its end), both in ns, over all run() calls so far.
  int64_t stage_busy_ns(int stage) const { return busy_ns_.at(static_cast<size_t>(stage)); }
  int64_t in_flight_ns() const { return in_flight_ns_; }

 private:
  const models::CostModel& cost_;
  const models::RooflineCostModel* roofline_;  // null when cost_ is not one
  int64_t host_free_ns_ = 0;
  std::vector<int64_t> free_at_ns_;  // per stage: when it finishes what it has been given
  std::vector<int64_t> busy_ns_;
  int64_t in_flight_ns_ = 0;
  int64_t covered_until_ns_ = 0;  // end of the union of in-flight intervals so far
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_PIPELINE_H_
