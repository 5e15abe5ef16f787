// Reading JSON input files with errors that name the file and the field.
#ifndef SERVESIM_SIM_BASE_JSON_FILE_H_
#define SERVESIM_SIM_BASE_JSON_FILE_H_

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/base/input_files.h"

namespace servesim {

// Parses JSON text; `where` names its source in errors. Refuses what nlohmann would silently
// accept or throw later: malformed text, numbers out of double range (1e400), and an object that
// repeats a key (the JSON spec leaves it undefined; nlohmann keeps the last, which hides typos).
inline nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  // Duplicate keys are found in the same pass as the parse, through the parser's callback (a
  // second pass with the SAX interface lexed every number twice: half the load time of the
  // kernel tables, docs/performance.md).
  std::vector<std::vector<std::string>> keys;  // one key list per open object
  std::string found;                           // the first repeated key, in document order
  const nlohmann::json::parser_callback_t track =
      [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
          keys.emplace_back();
        } else if (event == Event::key) {
          const std::string& k = parsed.get_ref<const std::string&>();
          auto& ks = keys.back();
          if (std::find(ks.begin(), ks.end(), k) != ks.end()) {
            if (found.empty()) found = k;
          } else {
            ks.push_back(k);
          }
        } else if (event == Event::object_end) {
          keys.pop_back();
        }
        return true;
      };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, track);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(where + ": malformed JSON: " + e.what());
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number that does not fit a double.
    throw ConfigError(where + ": invalid JSON: " + e.what() +
                      " (expected numbers within the range of a double)");
  }
  if (!found.empty()) {
    throw ConfigError(where + ": key '" + found +
                      "' appears twice in one object; expected each key once");
  }
  return j;
}

// Parses the JSON file at `path`. Throws ConfigError naming the file when it is missing, not a
// regular file, larger than `max_bytes` (settings files by default; sim/base/input_files.h), or
// malformed (see parse_json_text). The file is registered as an input of the running command.
inline nlohmann::json read_json_file(const std::filesystem::path& path,
                                     uint64_t max_bytes = kMaxSettingsFileBytes) {
  check_input_file(path.string(), "", max_bytes);
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), path.string());
}

// The input contract for one JSON value read as T: integers must be JSON integers (or floats with
// an integral value, as some HF configs write 4096.0) within T's range; floating values finite
// numbers; strings strings; booleans booleans. Stores the value in `out` and returns true, or
// returns false with `expected` set to what was expected ("an integer in [1, 2147483647]").
template <typename T>
bool json_value_fits(const nlohmann::json& v, T& out, std::string& expected) {
  if constexpr (std::is_same_v<T, bool>) {
    expected = "true or false";
    if (!v.is_boolean()) return false;
    out = v.get<bool>();
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    using L = std::numeric_limits<T>;
    expected = "an integer in [" + std::to_string(L::min()) + ", " + std::to_string(L::max()) + "]";
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > static_cast<uint64_t>(L::max())) return false;
      out = static_cast<T>(v.get<uint64_t>());
      return true;
    }
    if (v.is_number_integer()) {
      const int64_t x = v.get<int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (x < 0) return false;
      } else {
        if (x < static_cast<int64_t>(L::min()) || x > static_cast<int64_t>(L::max())) return false;
      }
      out = static_cast<T>(x);
      return true;
    }
    if (v.is_number_float()) {
      const double d = v.get<double>();
      // 2^63 is not representable as int64_t: the bound is strict.
      if (!(d == std::floor(d)) || !(d >= static_cast<double>(L::min())) ||
          !(d < static_cast<double>(L::max()))) {
        return false;
      }
      out = static_cast<T>(d);
      return true;
    }
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    expected = "a finite number";
    if (!v.is_number() || !std::isfinite(v.get<double>())) return false;
    out = v.get<T>();
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    expected = "a string";
    if (!v.is_string()) return false;
    out = v.get<std::string>();
    return true;
  } else {
    expected = "a value of another type";
    try {
      out = v.get<T>();
    } catch (const nlohmann::json::exception&) {
      return false;
    }
    return true;
  }
}

// json_value_fits or ConfigError "<what> has the wrong type or range (value <v>); expected <...>";
// `what` names the value
// ("f.json: field 'hidden_size'").
template <typename T>
T json_value_as(const nlohmann::json& v, const std::string& what) {
  T out{};
  std::string expected;
  if (!json_value_fits(v, out, expected)) {
    throw ConfigError(what + " has the wrong type or range (value " +
                      v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                      "); expected " + expected);
  }
  return out;
}

// Reads field `key` of object `j` as T (json_value_as). Throws ConfigError "<where>: field
// '<key>' ..." when the field is missing or has the wrong type or range.
template <typename T>
T require_field(const nlohmann::json& j, const std::string& key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    throw ConfigError(where + ": missing required field '" + key + "'");
  }
  return json_value_as<T>(*it, where + ": field '" + key + "'");
}

// Like require_field, but returns `fallback` when the field is absent or null.
template <typename T>
T optional_field(const nlohmann::json& j, const std::string& key, const std::string& where,
                 T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return json_value_as<T>(*it, where + ": field '" + key + "'");
}

// The directory that holds models/catalog and hardware/catalog: $SERVESIM_DATA_DIR if set, else
// the source tree the binary was built from (defined in data_dir.cpp, the one object that carries
// the build-time path, so every other object is identical across checkouts and ccache can share
// it).
std::filesystem::path data_dir();

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
