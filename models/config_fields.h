// The integer fields of a Hugging Face config.json as the model readers take them
// (model_config.cpp, model_families.cpp): a field that is not what the model needs throws
// ConfigError naming the file (`where`), the field and its value.
#ifndef SERVESIM_MODELS_CONFIG_FIELDS_H_
#define SERVESIM_MODELS_CONFIG_FIELDS_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace servesim::models {

// A required positive integer field.
int64_t require_positive(const nlohmann::json& j, const std::string& key, const std::string& where);
// An optional integer field that, when present, must be positive.
int64_t optional_positive(const nlohmann::json& j, const std::string& key, const std::string& where,
                          int64_t fallback);
// A non-negative integer field, `fallback` when absent or null.
int64_t optional_count(const nlohmann::json& j, const std::string& key, const std::string& where,
                       int64_t fallback);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_CONFIG_FIELDS_H_
