#include "sim/planning/sweep_setup.h"

#include "sim/base/error.h"

namespace servesim::planning {

void choose_sweep_axis(const std::vector<double>& rates, const std::vector<double>& concurrencies,
                       SweepOptions& options, sim::SimulationConfig& base) {
  if (rates.empty() && concurrencies.empty()) {
    throw ConfigError(
        "sweep: give the swept axis: --request-rate start:stop:step (or a list) or "
        "--max-concurrency 1,2,4,...");
  }
  if (rates.size() > 1 && concurrencies.size() > 1) {
    throw ConfigError(
        "sweep: --request-rate and --max-concurrency both list several values; sweep one of "
        "them (the other may be a single value, kept fixed)");
  }
  if (concurrencies.size() > 1 || rates.empty()) {
    options.axis = SweepAxis::kMaxConcurrency;
    options.values = concurrencies;
    if (!rates.empty()) base.workload.request_rate = rates.front();
  } else {
    options.axis = SweepAxis::kRequestRate;
    options.values = rates;
    if (!concurrencies.empty()) base.max_concurrency = static_cast<int64_t>(concurrencies.front());
  }
}

std::vector<SweepCurveSpec> sweep_curves(const sim::SimulationConfig& base,
                                         const std::vector<VaryPoint>& points,
                                         const ApplyCurveSettings& apply) {
  std::vector<SweepCurveSpec> curves;
  for (const VaryPoint& vp : points) {
    SweepCurveSpec spec;
    spec.label = vp.label;
    spec.vary = vp.settings;
    spec.config = base;
    apply(spec.config, vp.settings);
    curves.push_back(std::move(spec));
  }
  return curves;
}

}  // namespace servesim::planning
