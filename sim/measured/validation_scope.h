// What `servesim validate` scores, and against which calibration. Validate fits nothing: these
// only choose.
#ifndef SERVESIM_SIM_MEASURED_VALIDATION_SCOPE_H_
#define SERVESIM_SIM_MEASURED_VALIDATION_SCOPE_H_

#include <string>
#include <vector>

#include "sim/cluster/simulation.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"

namespace servesim::measured {

// The runs scored (one flag per run, in order) and the scope line that says why ("" = all runs).
struct ScoredRuns {
  std::vector<bool> scored;
  std::string scope;
};

// --holdout FRACTION: the deterministic held-out share (holdout_scored, validation.h), the runs
// `calibrate --holdout` does not fit on.
ScoredRuns scored_by_holdout(const std::vector<MeasuredRun>& runs, double fraction);

// --score-on GLOB: the runs whose absolute path or id matches the fnmatch pattern.
ScoredRuns scored_by_glob(const std::vector<MeasuredRun>& runs, const std::string& glob);

// The calibration of a validation, with `configs` (the scored runs') set to use it:
//   "none"  datasheet + catalog defaults (every config's calibration "none");
//   a FILE  that profile (load_calibration_file), replacing each config's cost model;
//   ""      each run's GPU keeps the profile shipped for it (hardware/calibration/<gpu>.json),
//           and the result lists those profiles and the runs they were fitted on.
// Throws ConfigError for a profile file that does not load.
Calibration scoring_calibration(const std::string& calibration_file,
                                std::vector<sim::SimulationConfig>& configs);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_VALIDATION_SCOPE_H_
