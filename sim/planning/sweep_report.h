// The sweep's outputs, from a SweepResult (sweep.h): the sweep file (JSON), its CSV form and the
// readable table.
//
// Contract: pure functions of the result and options; no wall-clock values, so the files are
// identical for any job, rank or shard count.
#ifndef SERVESIM_SIM_PLANNING_SWEEP_REPORT_H_
#define SERVESIM_SIM_PLANNING_SWEEP_REPORT_H_

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/planning/sweep.h"

namespace servesim::planning {

// The sweep file: {"servesim_sweep", axis, values, knee/saturation settings, config (the echo
// given by the caller), vary, columns, interrupted, curves: [{label, vary, error, deployment
// (with its calibration and kernel_source), knee, saturation_value, max_sustained_value,
// plateau_value, skipped_values, points: [{<axis>, saturated, knee, prediction_basis,
// prediction_basis_reason, <columns>...}]}]}. Deterministic: no wall-clock values.
nlohmann::ordered_json sweep_to_json(const SweepResult& result, const SweepOptions& options,
                                     const nlohmann::json& config_echo,
                                     const nlohmann::json& vary_echo);

// One row per point: curve, each vary key (sorted), <axis>, saturated, knee, prediction_basis,
// then the columns.
// Numbers in shortest round-trip form, empty cells for null.
std::string sweep_to_csv(const SweepResult& result);

// The readable table: one block per curve, knee and saturated points marked, then a summary line
// and the prediction basis (per range of values where it changes with the load) per curve.
void print_sweep_table(std::ostream& out, const SweepResult& result, const SweepOptions& options);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_REPORT_H_
