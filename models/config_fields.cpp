// The integer fields of a config.json that servesim reads (config_fields.h).
#include "models/config_fields.h"

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {

using nlohmann::json;

namespace {

int64_t positive(int64_t v, const std::string& key, const std::string& where) {
  if (v <= 0) {
    throw ConfigError(where + ": field '" + key + "' must be a positive integer (value " +
                      std::to_string(v) + ")");
  }
  return v;
}

}  // namespace

int64_t require_positive(const json& j, const std::string& key, const std::string& where) {
  return positive(require_field<int64_t>(j, key, where), key, where);
}

int64_t optional_positive(const json& j, const std::string& key, const std::string& where,
                          int64_t fallback) {
  return positive(optional_field<int64_t>(j, key, where, fallback), key, where);
}

int64_t optional_count(const json& j, const std::string& key, const std::string& where,
                       int64_t fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const auto v = require_field<int64_t>(j, key, where);
  if (v < 0) {
    throw ConfigError(where + ": field '" + key + "' must be >= 0 (value " + std::to_string(v) +
                      ")");
  }
  return v;
}

}  // namespace servesim::models
