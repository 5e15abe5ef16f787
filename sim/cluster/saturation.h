// Saturation check of one run: is the offered load more than the deployment can serve?
//
// An open-loop run (finite --request-rate, no --max-concurrency) is saturated when its queue keeps
// growing: then TTFT rises through the run instead of settling. The test compares the mean TTFT
// of the last quarter of measured requests (by send time) with the first quarter: saturated when
// the late mean exceeds twice the early one and by more than one second. Achieved throughput below
// the offered rate is reported alongside but not used alone (a short run's drain tail lowers it
// even when the deployment keeps up).
#ifndef SERVESIM_SIM_CLUSTER_SATURATION_H_
#define SERVESIM_SIM_CLUSTER_SATURATION_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cluster/simulation.h"

namespace servesim::sim {

struct SaturationCheck {
  bool applicable = false;  // open loop (a rate, or a trace's recorded times), >= 8 completions
  bool saturated = false;
  double offered_rps = 0;    // --request-rate; without one, (n - 1) / the measured send-time span
  double achieved_rps = 0;   // completed / duration (vLLM's request_throughput)
  double early_ttft_ms = 0;  // mean TTFT of the first quarter of measured requests
  double late_ttft_ms = 0;   // ... of the last quarter
};

SaturationCheck check_saturation(const SimulationConfig& config, const SimulationResult& result);

// "offered 8 req/s but achieved 5.6 req/s; queue grows: mean TTFT 1.2 s in the first quarter of
// requests, 46 s in the last" (empty when not saturated).
std::string saturation_message(const SaturationCheck& s);

// {"saturated", "offered_rps", "achieved_rps", "early_mean_ttft_ms", "late_mean_ttft_ms"}.
nlohmann::json saturation_to_json(const SaturationCheck& s);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_SATURATION_H_
