// Reading JSON input files with errors that name the file and the field.
#ifndef SERVESIM_SIM_BASE_JSON_FILE_H_
#define SERVESIM_SIM_BASE_JSON_FILE_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"

namespace servesim {

// Parses the JSON file at `path`. Throws ConfigError naming the file when it is missing or malformed.
inline nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(path.string() + ": malformed JSON: " + e.what());
  }
}

// Reads field `key` of object `j` as T. Throws ConfigError "<where>: field '<key>' ..." when the
// field is missing or has the wrong type.
template <typename T>
T require_field(const nlohmann::json& j, const std::string& key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    throw ConfigError(where + ": missing required field '" + key + "'");
  }
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError(where + ": field '" + key + "' has the wrong type (value " + it->dump() + ")");
  }
}

// Like require_field, but returns `fallback` when the field is absent or null.
template <typename T>
T optional_field(const nlohmann::json& j, const std::string& key, const std::string& where,
                 T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError(where + ": field '" + key + "' has the wrong type (value " + it->dump() + ")");
  }
}

// The directory that holds models/catalog and hardware/catalog: $SERVESIM_DATA_DIR if set, else
// the source tree the binary was built from.
inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("SERVESIM_DATA_DIR"); env && *env) return env;
  return SERVESIM_DATA_DIR;
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_JSON_FILE_H_
