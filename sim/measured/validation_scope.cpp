#include "sim/measured/validation_scope.h"

#include <fnmatch.h>

#include <filesystem>
#include <set>

#include "hardware/gpu_spec.h"
#include "sim/base/error.h"
#include "sim/calibration/profile.h"
#include "sim/measured/validation.h"

namespace servesim::measured {

namespace fs = std::filesystem;

ScoredRuns scored_by_holdout(const std::vector<MeasuredRun>& runs, double fraction) {
  std::vector<std::string> ids;
  for (const auto& r : runs) ids.push_back(r.id);
  return {holdout_scored(ids, fraction),
          "holdout " + std::to_string(fraction) + ": scoring the held-out runs only"};
}

ScoredRuns scored_by_glob(const std::vector<MeasuredRun>& runs, const std::string& glob) {
  ScoredRuns s{std::vector<bool>(runs.size(), true), "--score-on " + glob};
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string abs = fs::weakly_canonical(fs::absolute(runs[i].path)).string();
    s.scored[i] = fnmatch(glob.c_str(), abs.c_str(), 0) == 0 ||
                  fnmatch(glob.c_str(), runs[i].id.c_str(), 0) == 0;
  }
  return s;
}

Calibration scoring_calibration(const std::string& calibration_file,
                                std::vector<sim::SimulationConfig>& configs) {
  Calibration calibration;
  if (calibration_file == "none") {
    for (auto& c : configs) c.calibration = "none";
    return calibration;
  }
  if (!calibration_file.empty()) {
    calibration = load_calibration_file(calibration_file);
    for (auto& c : configs) c.calibration = "none";  // the profile above replaces the cost model
    return calibration;
  }
  std::set<std::string> shipped;
  for (const auto& c : configs) {
    try {
      if (auto p = calibration::default_calibration_path(hardware::load_gpu(c.gpu).name,
                                                         sim::host_line(c.engine))) {
        shipped.insert(*p);
      }
    } catch (const ConfigError&) {
      // reported per run by validate_runs
    }
  }
  for (const std::string& p : shipped) {
    calibration.source +=
        (calibration.source.empty() ? "" : ", ") + fs::path(p).filename().string();
    for (const auto& id : calibration::load_calibration(p).fit_set) {
      calibration.fitted_on.push_back(id);
    }
  }
  if (!calibration.source.empty()) {
    calibration.source =
        "the profiles shipped for the GPUs (hardware/calibration/" + calibration.source + ")";
    calibration.shipped_per_gpu = true;
  }
  return calibration;
}

}  // namespace servesim::measured
