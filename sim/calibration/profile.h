// A calibration profile: fitted values of the cost model's free terms for one GPU, as a small
// JSON file that every command accepts with --calibration FILE.
//
// A term that is absent keeps the GPU catalog's default (the "uncalibrated" model). Each fitted
// value carries its standard error; the profile records what it was fitted on (so that validate
// can refuse to score silently on the fit set), the fit's residuals and the domain of its serving
// runs (domain.h). The profile never edits the GPU spec: the cost model applies it on top
// (models::apply_calibration).
#ifndef SERVESIM_SIM_CALIBRATION_PROFILE_H_
#define SERVESIM_SIM_CALIBRATION_PROFILE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/kernel_profile.h"
#include "sim/calibration/calibration_terms.h"
#include "sim/calibration/domain.h"

namespace servesim::calibration {

// The format of the profile files this servesim reads and writes ("format_version"). A profile
// without the field (written before it existed) is version 1. calibration_from_json refuses
// another version, naming the file and the field.
inline constexpr int kCalibrationFormatVersion = 1;

struct Calibration {
  // The GPU it was fitted on: its name, and with gpu_identity its figures (servesim calibrate
  // records them; a profile without them means the catalog GPU of that name). Applied to another
  // GPU it is "transferred" (prediction_basis.h); to a GPU of the same name with other figures it
  // is refused (check_profile_gpu).
  std::string gpu;
  std::optional<hardware::GpuIdentity> gpu_identity;
  std::string description;  // free text: what, when, how
  // The fitted terms, in the file under "parameters" (calibration_terms.h).
  CalibrationTerms terms;
  std::vector<std::string> fit_set;  // sources (files or tables) the values were fitted on
  nlohmann::json residuals;          // per sample or per run: measured, predicted, error
  nlohmann::json fit_info;           // method, iterations, cost, data counts
  // Measured kernel tables (servesim calibrate --kernels; hardware/kernel_profile.h); null when
  // the profile has none. When present they time the linear ops (and prefill attention) in place
  // of the roofline and of the GEMM parameters above (docs/calibration.md, "Kernel tables").
  std::shared_ptr<const hardware::KernelProfile> kernels;
  CalibrationDomain domain;  // the serving runs' deployments (empty: none recorded)

  bool empty() const { return terms.empty(); }  // no fitted term (kernels aside)
};

// JSON round trip through the term table: to_json writes the set terms in table order, and
// calibration_from_json(to_json(c)) == c. from_json throws ConfigError naming `where` and the
// field on bad input (an unknown term, named with the known ones; a value outside its range, wrong
// type; another format_version; no
// "parameters" object, or an empty one without "kernels": a profile that would change nothing).
nlohmann::ordered_json to_json(const Calibration& c);
Calibration calibration_from_json(const nlohmann::json& j, const std::string& where);
Calibration load_calibration(const std::string& path);

// Refuses (ConfigError naming `where`) a profile fitted on a GPU that has `gpu`'s name but other
// figures (hardware::refuse_same_name_other_figures): its fitted efficiencies, overheads and
// kernel tables describe another chip. A profile of another name is the caller's to label as
// transferred.
void check_profile_gpu(const Calibration& c, const hardware::GpuSpec& gpu,
                       const std::string& where);

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

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_PROFILE_H_
