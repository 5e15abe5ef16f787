// Model names as vLLM takes them (models/model_name.h has the rules).
#include "models/model_name.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/edit_distance.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The suffixes of fine-tuned variants of a base model id, as Hugging Face repositories name them
// (Llama "-Instruct", Llama-2 "-chat", Gemma "-it").
constexpr const char* kFineTuneSuffixes[] = {"-instruct", "-chat", "-it"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "org/name" -> "name"; "name" -> "name".
std::string name_part(const std::string& id) {
  const size_t slash = id.rfind('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

// `id` with trailing '/' removed (a folder-style spelling of an id).
std::string without_trailing_slashes(std::string id) {
  while (id.size() > 1 && id.back() == '/') id.pop_back();
  return id;
}

// Whether `key` is `base` or `base` + a fine-tune suffix (both lower-case).
bool is_or_fine_tune_of(const std::string& key, const std::string& base) {
  if (key == base) return true;
  for (const char* s : kFineTuneSuffixes) {
    if (key == base + s) return true;
  }
  return false;
}

// `key` without one fine-tune suffix, if it has one.
std::string without_fine_tune_suffix(const std::string& key) {
  for (const char* s : kFineTuneSuffixes) {
    const std::string suffix(s);
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return key.substr(0, key.size() - suffix.size());
    }
  }
  return key;
}

// A Hugging Face repository id's shape: NAME or ORG/NAME of letters, digits, '-', '_' and '.'
// (huggingface_hub's validate_repo_id), not starting with '.' and not a ".json" file name.
bool has_hf_id_shape(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.front() == '/' || s.back() == '/') return false;
  if (std::count(s.begin(), s.end(), '/') > 1) return false;
  if (s.find("..") != std::string::npos || s.find("/.") != std::string::npos) return false;
  if (s.size() >= 5 && lower(s.substr(s.size() - 5)) == ".json") return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

// How far `candidate` is from `key` for suggesting it: the edit distance less the length of the
// common prefix, so that a name which starts as the key does ("qwen3-235b-a22b" for
// "qwen3-235b-a22b-instruct-2507") comes before one of similar length that does not.
long nearness(const std::string& key, const std::string& candidate) {
  size_t prefix = 0;
  while (prefix < key.size() && prefix < candidate.size() && key[prefix] == candidate[prefix]) {
    ++prefix;
  }
  return static_cast<long>(edit_distance(key, candidate)) - static_cast<long>(prefix);
}

// "name (first id)" for listing an entry in a message.
std::string described(const CatalogModelIds& e) {
  return e.hf_ids.empty() ? e.name : e.name + " (" + e.hf_ids.front() + ")";
}

}  // namespace

fs::path model_catalog_dir() { return data_dir() / "models" / "catalog"; }

std::vector<CatalogModelIds> catalog_model_ids() {
  std::vector<CatalogModelIds> out;
  for (const std::string& name : catalog_names_in(model_catalog_dir())) {
    const fs::path file = model_catalog_dir() / (name + ".json");
    const json j = read_json_file(file);
    CatalogModelIds e{name, {}};
    if (j.is_object() && j.contains("_hf_ids")) {
      const json& ids = j["_hf_ids"];
      const std::string where = file.string() + ": field '_hf_ids'";
      if (!ids.is_array()) throw ConfigError(where + " must be an array of \"ORG/NAME\" strings");
      for (const json& id : ids) {
        const std::string s = id.is_string() ? id.get<std::string>() : "";
        if (std::count(s.begin(), s.end(), '/') != 1 || !has_hf_id_shape(s)) {
          throw ConfigError(where + " has entry " + id.dump() +
                            "; expected a Hugging Face id \"ORG/NAME\"");
        }
        e.hf_ids.push_back(s);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> catalog_matches(const std::vector<CatalogModelIds>& catalog,
                                         const std::string& id) {
  const std::string key = lower(without_trailing_slashes(id));
  const bool has_org = key.find('/') != std::string::npos;
  std::vector<std::string> out;
  for (const CatalogModelIds& e : catalog) {
    bool match = !has_org && key == lower(e.name);
    for (const std::string& hf : e.hf_ids) {
      match = match || is_or_fine_tune_of(key, lower(has_org ? hf : name_part(hf)));
    }
    if (match) out.push_back(e.name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> nearest_catalog_models(const std::vector<CatalogModelIds>& catalog,
                                                const std::string& id, size_t count) {
  const std::string key = without_fine_tune_suffix(lower(name_part(without_trailing_slashes(id))));
  std::vector<std::pair<long, const CatalogModelIds*>> ranked;
  for (const CatalogModelIds& e : catalog) {
    long d = nearness(key, lower(e.name));
    for (const std::string& hf : e.hf_ids) d = std::min(d, nearness(key, lower(name_part(hf))));
    ranked.emplace_back(d, &e);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->name < b.second->name;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < std::min(count, ranked.size()); ++i) {
    out.push_back(described(*ranked[i].second));
  }
  return out;
}

ModelSource resolve_model(const std::string& value) {
  if (value.empty()) {
    throw ConfigError(
        "model name is empty; expected a catalog name (servesim list), a Hugging "
        "Face id ORG/NAME, or the path of a config.json or of a folder holding one");
  }
  std::error_code ec;
  const fs::file_status status = fs::status(value, ec);
  if (fs::is_directory(status)) {
    const fs::path config = fs::path(value) / "config.json";
    if (!fs::is_regular_file(config)) {
      throw ConfigError(value +
                        ": a folder without config.json; expected a model snapshot "
                        "folder holding config.json, or the path of a config.json");
    }
    return {value, "", config.string()};
  }
  if (fs::exists(status)) return {value, "", value};
  // A catalog name as its file is named: no need to read the catalog's ids.
  const fs::path entry = model_catalog_dir() / (value + ".json");
  if (value.find('/') == std::string::npos && fs::is_regular_file(entry)) {
    return {value, value, entry.string()};
  }

  const std::vector<CatalogModelIds> catalog = catalog_model_ids();
  const std::vector<std::string> matches = catalog_matches(catalog, value);
  if (matches.size() == 1) {
    return {value, matches.front(), (model_catalog_dir() / (matches.front() + ".json")).string()};
  }
  if (matches.size() > 1) {
    std::vector<std::string> named;
    for (const CatalogModelIds& e : catalog) {
      if (std::find(matches.begin(), matches.end(), e.name) != matches.end()) {
        named.push_back(described(e));
      }
    }
    throw ConfigError(value + ": names several catalog entries: " + join_names(named) +
                      "; pass one of these catalog names");
  }
  if (!has_hf_id_shape(value)) {
    throw ConfigError(value +
                      ": cannot open file; expected a catalog name (servesim list), a "
                      "Hugging Face id ORG/NAME, or the path of a config.json or of a "
                      "folder holding one");
  }
  throw ConfigError(value +
                    ": not in the catalog (models are not downloaded); pass the path of "
                    "its config.json. Nearest catalog entries: " +
                    join_names(nearest_catalog_models(catalog, value)) +
                    " (servesim list shows them all)");
}

std::string catalog_name_for_id(const std::string& id) {
  const std::vector<CatalogModelIds> catalog = catalog_model_ids();
  std::vector<std::string> matches = catalog_matches(catalog, id);
  const std::string trimmed = without_trailing_slashes(id);
  if (matches.empty() && !has_hf_id_shape(trimmed)) {
    matches = catalog_matches(catalog, fs::path(trimmed).filename().string());
  }
  return matches.size() == 1 ? matches.front() : "";
}

std::string vllm_model_argument(const std::string& value) {
  if (value.find('/') != std::string::npos) return value;  // an ORG/NAME id or a path: as given
  const ModelSource source = resolve_model(value);
  if (source.catalog_name.empty()) return value;  // a file or folder in the working directory
  for (const CatalogModelIds& e : catalog_model_ids()) {
    if (e.name == source.catalog_name && !e.hf_ids.empty()) return e.hf_ids.front();
  }
  return value;
}

}  // namespace servesim::models
