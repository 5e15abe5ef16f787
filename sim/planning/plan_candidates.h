// The candidates `servesim plan` evaluates: every GPU × TP size × --vary point, in that order
// (GPU slowest). With P/D ratios (pd_search.h) each (GPU, TP, point) gives the aggregated
// candidate, then one P/D unit per ratio; the --vary knobs of the P/D pools apply to the P/D
// candidates only, so an aggregated candidate is listed once per its other settings.
// Each candidate's label names what differs: "h100-sxm TP2 max-num-seqs=64", or for a P/D unit
// "1P h100-sxm TP2 : 2D h100-sxm TP4 ...", then PP, DP and EP where set.
#ifndef SERVESIM_SIM_PLANNING_PLAN_CANDIDATES_H_
#define SERVESIM_SIM_PLANNING_PLAN_CANDIDATES_H_

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/pd_search.h"
#include "sim/planning/plan.h"
#include "sim/planning/vary.h"

namespace servesim::planning {

// Applies a --vary point's settings to a config (sim/app/vary_settings.h: the run-field table
// lives above this library); throws ConfigError naming --vary.
using ApplyVarySettings = std::function<void(sim::SimulationConfig&, const nlohmann::json&)>;

std::vector<PlanCandidate> plan_candidates(const sim::SimulationConfig& base,
                                           const std::vector<std::string>& gpus,
                                           const std::vector<int>& tps,
                                           const std::vector<VaryPoint>& points,
                                           const std::vector<PdRatio>& ratios,
                                           const ApplyVarySettings& apply);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_CANDIDATES_H_
