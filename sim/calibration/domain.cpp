#include "sim/calibration/domain.h"

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::calibration {

nlohmann::ordered_json to_json(const CalibrationDomain& d) {
  nlohmann::ordered_json j;
  j["models"] = d.models;
  j["tensor_parallel_sizes"] = d.tensor_parallel_sizes;
  j["pipeline_parallel_sizes"] = d.pipeline_parallel_sizes;
  j["engine_versions"] = d.engine_versions;
  j["dtypes"] = d.dtypes;
  j["max_request_rate"] = d.max_request_rate;
  j["max_concurrency"] = d.max_concurrency;
  j["has_unbounded_load"] = d.has_unbounded_load;
  if (d.offline_only) j["offline_only"] = true;
  if (!d.deployments.empty()) j["deployments"] = d.deployments;
  if (!d.host_lines.empty()) j["host_lines"] = d.host_lines;
  if (!d.gpus.empty()) j["gpus"] = d.gpus;
  return j;
}

std::string deployment_key(const std::string& model, int tensor_parallel_size,
                           int pipeline_parallel_size, const std::string& dtype) {
  return model + " TP " + std::to_string(tensor_parallel_size) + " PP " +
         std::to_string(pipeline_parallel_size) + " " + dtype;
}

CalibrationDomain domain_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected an object");
  // Each field through the input contract (json_value_fits): a count beyond int, or 1e300 where
  // an integer belongs, is refused rather than converted (a double -> int cast out of range is
  // undefined behaviour).
  CalibrationDomain d;
  d.models = optional_field<std::vector<std::string>>(j, "models", where, {});
  for (const char* key : {"tensor_parallel_sizes", "pipeline_parallel_sizes"}) {
    const auto v = optional_field<nlohmann::json>(j, key, where, nlohmann::json::array());
    if (!v.is_array()) {
      throw ConfigError(where + ": field '" + key +
                        "' has the wrong type; expected a list of integers");
    }
    std::vector<int> sizes;
    for (size_t i = 0; i < v.size(); ++i) {
      sizes.push_back(
          json_value_as<int>(v[i], where + ": field '" + key + "[" + std::to_string(i) + "]'"));
    }
    (std::string(key) == "tensor_parallel_sizes" ? d.tensor_parallel_sizes
                                                 : d.pipeline_parallel_sizes) = sizes;
  }
  d.engine_versions = optional_field<std::vector<std::string>>(j, "engine_versions", where, {});
  d.dtypes = optional_field<std::vector<std::string>>(j, "dtypes", where, {});
  d.max_request_rate = optional_field<double>(j, "max_request_rate", where, 0.0);
  d.max_concurrency = optional_field<int64_t>(j, "max_concurrency", where, 0);
  d.has_unbounded_load = optional_field<bool>(j, "has_unbounded_load", where, false);
  d.offline_only = optional_field<bool>(j, "offline_only", where, false);
  d.deployments = optional_field<std::vector<std::string>>(j, "deployments", where, {});
  d.host_lines = optional_field<std::vector<std::string>>(j, "host_lines", where, {});
  d.gpus = optional_field<std::vector<std::string>>(j, "gpus", where, {});
  return d;
}

}  // namespace servesim::calibration
