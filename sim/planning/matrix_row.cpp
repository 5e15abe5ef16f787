#include "sim/planning/matrix_row.h"

#include <limits>

namespace servesim::planning {

MatrixRowRun run_matrix_row(const sim::SimulationConfig& config,
                            const sim::PreparedDeployment& prepared, bool saturate,
                            double load_fraction) {
  sim::SimulationConfig c = config;
  sim::SimulationConfig sat = c;
  sat.workload.request_rate = std::numeric_limits<double>::infinity();
  if (sat.workload.dataset_name == "trace") sat.workload.trace_time_scale = 0;
  MatrixRowRun row;
  const sim::SimulationResult s = sim::run_simulation(sat, prepared);
  row.saturation_rps = s.metrics.request_throughput;
  row.request_rate = row.saturation_rps;
  if (saturate) {
    row.result = s;
  } else {
    c.workload.request_rate = load_fraction * row.saturation_rps;
    row.result = sim::run_simulation(c, prepared);
    row.request_rate = c.workload.request_rate;
  }
  row.summary = sim::servesim_summary(c, prepared, row.result);
  const sim::SimulationConfig& at = saturate ? sat : c;
  row.basis = sim::prediction_basis(prepared, sim::prediction_query(at, prepared));
  return row;
}

}  // namespace servesim::planning
