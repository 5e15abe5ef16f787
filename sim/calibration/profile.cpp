#include "sim/calibration/profile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::calibration {

nlohmann::ordered_json to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  j["servesim_calibration"] = 1;
  j["format_version"] = kCalibrationFormatVersion;
  j["gpu"] = c.gpu;
  if (c.gpu_identity) j["gpu_identity"] = c.gpu_identity->to_json();
  j["description"] = c.description;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const TermField& f : term_fields()) {
    const std::optional<FittedValue>& v = c.terms.*f.member;
    if (v) params[std::string(f.name)] = {{"value", v->value}, {"std_error", v->std_error}};
  }
  j["parameters"] = params;
  j["fit_set"] = c.fit_set;
  if (!c.domain.empty()) j["domain"] = to_json(c.domain);
  j["fit_info"] = c.fit_info.is_null() ? nlohmann::json::object() : c.fit_info;
  j["residuals"] = c.residuals.is_null() ? nlohmann::json::array() : c.residuals;
  if (c.kernels) j["kernels"] = c.kernels->to_json();
  return j;
}

Calibration calibration_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("servesim_calibration")) {
    throw ConfigError(where +
                      ": not a servesim calibration profile (no 'servesim_calibration' key)");
  }
  // The format: "format_version" when written (from 2026-11-27), else the marker's own value;
  // profiles written before carry only "servesim_calibration": 1, and are version 1.
  const std::string key = j.contains("format_version") ? "format_version" : "servesim_calibration";
  const nlohmann::json& version = j.at(key);
  if (!version.is_number_integer() || version.get<int64_t>() != kCalibrationFormatVersion ||
      (key == "format_version" && j.at("servesim_calibration") != 1)) {
    throw ConfigError(where + ": field '" + key + "' has value " +
                      version.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                      "; expected " + std::to_string(kCalibrationFormatVersion) +
                      " (a calibration profile of another format: re-make it with this "
                      "servesim's calibrate)");
  }
  if (!j.contains("parameters") || !j.at("parameters").is_object() ||
      (j.at("parameters").empty() && !j.contains("kernels"))) {
    throw ConfigError(where +
                      ": no fitted 'parameters' (and no 'kernels'); expected a "
                      "calibration profile that sets something (servesim calibrate writes one)");
  }
  Calibration c;
  c.gpu = optional_field<std::string>(j, "gpu", where, "");
  c.description = optional_field<std::string>(j, "description", where, "");
  if (j.contains("gpu_identity") && !j.at("gpu_identity").is_null()) {
    c.gpu_identity = hardware::GpuIdentity::from_json(j.at("gpu_identity"), where);
  }
  {
    const auto& params = j.at("parameters");
    for (const auto& [name, v] : params.items()) {
      const TermField* field = find_term(name);
      if (field == nullptr) {
        throw ConfigError(where + ": unknown parameter '" + name + "' in 'parameters'; expected " +
                          "some of " + known_term_names());
      }
      FittedValue f;
      if (v.is_number()) {
        f.value = v.get<double>();
      } else {
        f.value = require_field<double>(v, "value", where + ": parameters." + name);
        f.std_error = optional_field<double>(v, "std_error", where + ": parameters." + name, 0.0);
      }
      if (!std::isfinite(f.value) || f.value < field->lo || f.value > field->hi) {
        throw ConfigError(where + ": parameters." + name + " = " + std::to_string(f.value) +
                          " is outside [" + std::to_string(field->lo) + ", " +
                          std::to_string(field->hi) + "]");
      }
      c.terms.*field->member = f;
    }
  }
  c.fit_set = optional_field<std::vector<std::string>>(j, "fit_set", where, {});
  if (j.contains("residuals")) c.residuals = j.at("residuals");
  if (j.contains("domain")) c.domain = domain_from_json(j.at("domain"), where + ": domain");
  if (j.contains("fit_info")) c.fit_info = j.at("fit_info");
  if (j.contains("kernels")) {
    c.kernels = std::make_shared<const hardware::KernelProfile>(
        hardware::KernelProfile::from_json(j.at("kernels"), where));
  }
  return c;
}

Calibration load_calibration(const std::string& path) {
  return calibration_from_json(read_json_file(path), path);
}

void check_profile_gpu(const Calibration& c, const hardware::GpuSpec& gpu,
                       const std::string& where) {
  if (auto on = hardware::measured_identity(c.gpu_identity, c.gpu)) {
    hardware::refuse_same_name_other_figures(
        *on, gpu, where, "calibration profile",
        "a profile fitted on this GPU (servesim calibrate --gpu <its JSON>), a GPU JSON of "
        "another name (the profile is then applied as transferred), or --calibration none");
  }
}

std::optional<std::string> default_kernel_table_path(const std::string& gpu_name) {
  const auto p = data_dir() / "hardware" / "kernels" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

std::string host_line_dir(const std::string& host_line) {
  std::string dir = "vllm-" + host_line;
  std::replace(dir.begin(), dir.end(), ' ', '-');
  return dir;
}

std::optional<std::string> default_calibration_path(const std::string& gpu_name,
                                                    const std::string& host_line) {
  if (!host_line.empty()) {
    const auto line_profile =
        data_dir() / "hardware" / "calibration" / host_line_dir(host_line) / (gpu_name + ".json");
    if (std::filesystem::exists(line_profile)) return line_profile.string();
  }
  const auto p = data_dir() / "hardware" / "calibration" / (gpu_name + ".json");
  if (std::filesystem::exists(p)) return p.string();
  return std::nullopt;
}

}  // namespace servesim::calibration
