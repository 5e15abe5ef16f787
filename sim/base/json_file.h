// Reading JSON input files with errors that name the file and the field.
#ifndef SERVESIM_SIM_BASE_JSON_FILE_H_
#define SERVESIM_SIM_BASE_JSON_FILE_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// `path` relative to data_dir() when it lies under it (shipped files named from the repository
// root, so outputs do not depend on where the repository lives); else `path` unchanged.
inline std::string relative_to_data_dir(const std::string& path) {
  const std::string root = data_dir().string() + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

// Catalogs (models/catalog, hardware/catalog, ...): a name is a path when it names a file the user
// wrote — it contains a separator or ends in .json; otherwise it is a catalog entry.
inline bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() >= 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

// The entries of a catalog folder: the stems of its *.json files, sorted.
inline std::vector<std::string> catalog_names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "a, b, c" for listing known names in an error message.
inline std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_JSON_FILE_H_
