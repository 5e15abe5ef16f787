// One row of `servesim matrix`: a workload run twice on one prepared deployment, all requests at
// once (its saturation throughput: request_rate inf, a trace's arrivals collapsed), then Poisson
// arrivals (a trace: its recorded shape, rescaled) at load_fraction × that throughput for the
// latencies. A saturating row reports its all-at-once run instead of the second.
#ifndef SERVESIM_SIM_PLANNING_MATRIX_ROW_H_
#define SERVESIM_SIM_PLANNING_MATRIX_ROW_H_

#include <nlohmann/json.hpp>

#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/simulation.h"

namespace servesim::planning {

struct MatrixRowRun {
  double saturation_rps = 0;     // request throughput of the all-at-once run
  double request_rate = 0;       // the reported run's rate (saturation_rps when saturating)
  sim::SimulationResult result;  // the reported run
  nlohmann::json summary;        // its servesim_summary
  // At this row's load and workload: the basis can differ between rows (a profile's fitted load
  // range).
  calibration::PredictionBasis basis;
};

// `config` is the row's (its workload set); `load_fraction` in (0, 1].
MatrixRowRun run_matrix_row(const sim::SimulationConfig& config,
                            const sim::PreparedDeployment& prepared, bool saturate,
                            double load_fraction);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_MATRIX_ROW_H_
