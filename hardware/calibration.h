// Calibration: fitted values of the cost model's free parameters for one GPU, as a small JSON
// profile that every command accepts with --calibration FILE.
//
// A field that is absent keeps the GPU catalog's default (the "uncalibrated" model). Each fitted
// value carries its standard error; the profile records what it was fitted on (so that validate
// can refuse to score silently on the fit set) and the fit's residuals. The profile never edits
// the GPU spec: the cost model applies it on top (models::apply_calibration).
#ifndef SERVESIM_HARDWARE_CALIBRATION_H_
#define SERVESIM_HARDWARE_CALIBRATION_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/kernel_profile.h"

namespace servesim::hardware {

// The format of the profile files this servesim reads and writes ("format_version"). A profile
// without the field (written before it existed) is version 1. calibration_from_json refuses
// another version, naming the file and the field.
inline constexpr int kCalibrationFormatVersion = 1;

struct FittedValue {
  double value = 0;
  double std_error = 0;  // 0 when not estimated
};

// Where a profile's serving terms were fitted: the deployments and loads of its measured runs.
// A prediction inside it is "calibrated"; outside it (another model, TP degree, vLLM version,
// weight format, or a load above the fitted range), or on another GPU than the profile's, it is
// "transferred"; with no profile it is "datasheet-only". Empty lists mean "not recorded" (a profile
// fitted on kernel tables only, or written before domains existed): nothing is checked for them.
struct CalibrationDomain {
  std::vector<std::string> models;          // catalog model names
  std::vector<int> tensor_parallel_sizes;
  std::vector<int> pipeline_parallel_sizes;
  std::vector<std::string> engine_versions;  // vLLM versions; "unrecorded" when a run lacks one
  std::vector<std::string> dtypes;           // weight formats: "bf16", "fp8"
  double max_request_rate = 0;     // req/s, highest finite rate of an open-loop fitted run (0 = none)
  int64_t max_concurrency = 0;     // highest client concurrency of a closed-loop fitted run (0 = none)
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
  double request_rate = 0;     // req/s; inf = all at once; 0 = not stated
  int64_t max_concurrency = 0;
  bool offline = false;        // an offline run (LLM class), not an online server
  // "0.19 async", "0.6 V0" (sim::host_line); "" = not checked. Checked against the domain's
  // host_lines; for a profile without them, and a query without an engine_version, its release
  // line ("0.19") against the release lines of the domain's engine_versions (when all name one).
  std::string host_line;
};

struct Calibration {
  std::string gpu;          // catalog name it applies to (a warning is printed on mismatch)
  std::string description;  // free text: what, when, how
  // Parameter name -> fitted value. Known names (others are rejected on load):
  //   compute_efficiency, memory_efficiency, compute_ramp_tokens, op_latency_s,
  //   step_overhead_s, per_seq_overhead_s, per_prefill_token_overhead_s (serial, per prompt
  //   token computed in the step), tp_broadcast_overhead_s (serial, per step and per TP worker
  //   beyond the first), link_latency_s, link_bandwidth_bytes_per_s,
  //   client_ttft_overhead_s,
  //   host_step_s, host_per_seq_s, host_per_prefill_token_s, host_per_sampled_token_s (host work
  //   of a step with a cause, overlapped under async scheduling: models/roofline_cost_model.h),
  //   frontend_per_request_s, frontend_per_prompt_token_s, frontend_per_output_token_s (the API
  //   server queue: sim/cluster/front_end.h).
  // step_overhead_s / per_seq_overhead_s keep their old meaning (serial, never overlapped), so a
  // profile written before the host terms existed predicts what it predicted then.
  std::map<std::string, FittedValue> parameters;
  std::vector<std::string> fit_set;  // sources (files or tables) the values were fitted on
  nlohmann::json residuals;          // per sample or per run: measured, predicted, error
  nlohmann::json fit_info;           // method, iterations, cost, data counts
  // Measured kernel tables (servesim calibrate --kernels; hardware/kernel_profile.h); null when
  // the profile has none. When present they time the linear ops (and prefill attention) in place
  // of the roofline and of the GEMM parameters above (docs/calibration.md, "Kernel tables").
  std::shared_ptr<const KernelProfile> kernels;
  CalibrationDomain domain;          // the serving runs' deployments (empty: none recorded)

  bool empty() const { return parameters.empty(); }  // no fitted parameters (kernels aside)
  std::optional<double> get(const std::string& name) const;
  // The known parameter names, in a fixed order.
  static const std::vector<std::string>& parameter_names();
};

// JSON round trip. from_json throws ConfigError naming `where` and the field on bad input
// (unknown parameter, value outside its range, wrong type; another format_version; no
// "parameters" object, or an empty one without "kernels": a profile that would change nothing).
nlohmann::ordered_json to_json(const Calibration& c);
Calibration calibration_from_json(const nlohmann::json& j, const std::string& where);
Calibration load_calibration(const std::string& path);

// Labels a prediction made with `profile` (null = no profile: datasheet-only) for `q`.
PredictionBasis classify_prediction(const Calibration* profile, const std::string& profile_source,
                                    const PredictionQuery& q);

nlohmann::ordered_json to_json(const CalibrationDomain& d);
CalibrationDomain domain_from_json(const nlohmann::json& j, const std::string& where);

// The folder of hardware/calibration that holds the profiles of a host line: "0.11 async" ->
// "vllm-0.11-async" (servesim validate --write-line-profiles writes them there).
std::string host_line_dir(const std::string& host_line);

// The profile shipped for a GPU: hardware/calibration/vllm-<line>/<gpu>.json for the engine's host
// line ("0.11 async" -> vllm-0.11-async; host terms fitted on that line, docs/calibration.md) when
// there is one, else hardware/calibration/<gpu>.json; nullopt when neither exists.
std::optional<std::string> default_calibration_path(const std::string& gpu_name,
                                                    const std::string& host_line = "");
// The measured kernel table shipped for a GPU (hardware/kernels/<gpu>.json: a profile with only
// "kernels"), if any.
std::optional<std::string> default_kernel_table_path(const std::string& gpu_name);

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_CALIBRATION_H_
