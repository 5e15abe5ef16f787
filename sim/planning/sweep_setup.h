// From `servesim sweep`'s flags to the study's input (sweep.h): which axis is swept, and one
// curve per --vary point.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_SETUP_H_
#define SERVESIM_SIM_PLANNING_SWEEP_SETUP_H_

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/simulation.h"
#include "sim/planning/sweep.h"
#include "sim/planning/vary.h"

namespace servesim::planning {

// The swept axis from the --request-rate and --max-concurrency values (either may be empty; at
// most one lists several): several concurrencies, or no rate, sweep the concurrency cap (a single
// rate is kept fixed in `base`); otherwise the rate is swept (a single cap kept fixed in `base`).
// Sets options.axis and options.values. Throws ConfigError when neither is given or both list
// several values.
void choose_sweep_axis(const std::vector<double>& rates, const std::vector<double>& concurrencies,
                       SweepOptions& options, sim::SimulationConfig& base);

// Applies a --vary point's settings to a config (sim/app/vary_settings.h: the run-field table
// lives above this library); throws ConfigError naming --vary.
using ApplyCurveSettings = std::function<void(sim::SimulationConfig&, const nlohmann::json&)>;

// One curve per point (vary_product order): `base` with the point's settings applied, labelled by
// the point.
std::vector<SweepCurveSpec> sweep_curves(const sim::SimulationConfig& base,
                                         const std::vector<VaryPoint>& points,
                                         const ApplyCurveSettings& apply);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_SETUP_H_
