// The basis of one prediction: "calibrated" inside a profile's domain, "transferred" outside it
// or on another GPU, "datasheet-only" without a profile.
#ifndef SERVESIM_SIM_CALIBRATION_PREDICTION_BASIS_H_
#define SERVESIM_SIM_CALIBRATION_PREDICTION_BASIS_H_

#include <cstdint>
#include <string>

#include "sim/calibration/profile.h"

namespace servesim::calibration {

// What one prediction rests on (see CalibrationDomain).
struct PredictionBasis {
  std::string label;   // "calibrated" | "transferred" | "datasheet-only"
  std::string reason;  // one line: the profile, and what lies outside its domain
};

// The deployment and load one prediction is for (inputs of classify_prediction).
struct PredictionQuery {
  std::string gpu;    // catalog name
  std::string model;  // catalog name (or path)
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  std::string engine_version;  // "" = not stated (not checked)
  std::string dtype = "bf16";
  double request_rate = 0;  // req/s; inf = all at once; 0 = not stated
  int64_t max_concurrency = 0;
  bool offline = false;  // an offline run (LLM class), not an online server
  // "0.19 async", "0.6 V0" (sim::host_line); "" = not checked. Checked against the domain's
  // host_lines; for a profile without them, and a query without an engine_version, its release
  // line ("0.19") against the release lines of the domain's engine_versions (when all name one).
  std::string host_line;
};

// Labels a prediction made with `profile` (null = no profile: datasheet-only) for `q`.
PredictionBasis classify_prediction(const Calibration* profile, const std::string& profile_source,
                                    const PredictionQuery& q);

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_PREDICTION_BASIS_H_
