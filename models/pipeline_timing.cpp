#include "models/pipeline_timing.h"

#include <algorithm>
#include <cstddef>

#include "sim/base/error.h"

namespace servesim::models {

std::vector<int64_t> pipeline_stage_layers(int64_t num_layers, int pp) {
  // vllm/distributed/utils.py get_pp_indices:
  //   partitions = [L // pp] * pp; for i in range(2, L % pp + 2): partitions[-i] += 1
  std::vector<int64_t> parts(static_cast<size_t>(std::max(pp, 1)), num_layers / std::max(pp, 1));
  const int64_t rest = num_layers % std::max(pp, 1);
  for (int64_t i = 2; i < rest + 2; ++i) {
    // partitions[-i]; with rest = pp − 1 and i = pp this reaches partitions[0].
    parts[parts.size() - static_cast<size_t>(i)] += 1;
  }
  return parts;
}

namespace {

// Time stage s is held by one micro-batch: the hand-off in, its compute, the hand-off out.
double stage_occupancy_s(const PipelineStepTimes& t, size_t s) {
  double o = t.stage_s[s];
  if (s > 0) o += t.hop_s[s - 1];
  if (s < t.hop_s.size()) o += t.hop_s[s];
  return o;
}

}  // namespace

double pipeline_round_s(const PipelineStepTimes& t, int micro_batches) {
  if (micro_batches < 1) {
    throw ConfigError("cost model: pipeline_round_s: micro_batches must be >= 1");
  }
  double cycle = t.overhead_s;
  double busiest = t.overhead_s;
  for (size_t s = 0; s < t.stage_s.size(); ++s) {
    cycle += t.stage_s[s];
    busiest = std::max(busiest, stage_occupancy_s(t, s));
  }
  for (double h : t.hop_s) cycle += h;
  return std::max(cycle, micro_batches * busiest);
}

double pipeline_bubble_fraction(const PipelineStepTimes& t, int micro_batches, int stage) {
  const double round = pipeline_round_s(t, micro_batches);
  if (round <= 0) return 0;
  return 1.0 - micro_batches * stage_occupancy_s(t, static_cast<size_t>(stage)) / round;
}

}  // namespace servesim::models
