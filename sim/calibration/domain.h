// The domain of a calibration profile: the deployments and loads of the serving runs its terms
// were fitted on (a prediction inside it is "calibrated", see prediction_basis.h), and its JSON.
#ifndef SERVESIM_SIM_CALIBRATION_DOMAIN_H_
#define SERVESIM_SIM_CALIBRATION_DOMAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::calibration {

// Where a profile's serving terms were fitted: the deployments and loads of its measured runs.
// A prediction inside it is "calibrated"; outside it (another model, TP degree, vLLM version,
// weight format, or a load above the fitted range), or on another GPU than the profile's, it is
// "transferred"; with no profile it is "datasheet-only". Empty lists mean "not recorded" (a profile
// fitted on kernel tables only, or written before domains existed): nothing is checked for them.
struct CalibrationDomain {
  std::vector<std::string> models;  // catalog model names
  std::vector<int> tensor_parallel_sizes;
  std::vector<int> pipeline_parallel_sizes;
  std::vector<std::string> engine_versions;  // vLLM versions; "unrecorded" when a run lacks one
  std::vector<std::string> dtypes;           // weight formats: "bf16", "fp8"
  double max_request_rate = 0;  // req/s, highest finite rate of an open-loop fitted run (0 = none)
  int64_t max_concurrency = 0;  // highest client concurrency of a closed-loop fitted run (0 = none)
  bool has_unbounded_load = false;  // a fitted run sent everything at once (rate inf, no cap)
  // Every fitted run was offline (vLLM's LLM class, a static batch): no client or API-server cost
  // was seen, so an online server lies outside the domain. Written to JSON only when true.
  bool offline_only = false;
  // The fitted deployments, one deployment_key each, sorted: a query whose model, TP, PP and
  // weights each appear in the lists above may still be a combination no fitted run had (a model
  // fitted at TP 4 only, asked at TP 2 because another model ran at TP 2). Profiles written
  // before 2026-11-26 lack it and are checked field by field. Written to JSON when non-empty.
  std::vector<std::string> deployments;
  // The host lines of the fitted runs ("0.11 async", "0.6 V0": measured::host_line_of), sorted:
  // host terms belong to the engine release path, so a prediction for another line is
  // transferred. Profiles written before 2026-11-26 lack it. Written to JSON when non-empty.
  std::vector<std::string> host_lines;
  // The GPUs (catalog names) the fitted serving runs ran on, sorted. A profile whose serving
  // terms came from another GPU's runs — with calibrate --base from another GPU's profile (the
  // A100-80GB's, from the A100-40GB's runs), or a leave-one-group-out joint fit over other GPUs —
  // keeps this list, so its predictions say the host terms were transferred. Profiles written
  // before 2026-11-26 lack it (unchecked). Written to JSON when non-empty.
  std::vector<std::string> gpus;

  bool empty() const { return models.empty(); }
};

// "model TP t PP p dtype", e.g. "llama-2-7b TP 2 PP 1 bf16": one fitted deployment of a domain.
std::string deployment_key(const std::string& model, int tensor_parallel_size,
                           int pipeline_parallel_size, const std::string& dtype);

nlohmann::ordered_json to_json(const CalibrationDomain& d);
// Throws ConfigError naming `where` and the field on bad input.
CalibrationDomain domain_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_DOMAIN_H_
