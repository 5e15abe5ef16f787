#include "sim/app/yaml_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "sim/app/run_config.h"
#include "sim/base/edit_distance.h"
#include "sim/base/error.h"

namespace servesim::app {

using nlohmann::json;

namespace {

std::string with_underscores(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::string with_dashes(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

const ConfigField* find_field(const std::string& key) {
  for (const ConfigField& f : config_fields()) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

// A plain (unquoted) scalar that YAML 1.1, as PyYAML's safe_load reads it, makes a boolean or null.
bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }
bool is_true(const std::string& s) {
  static const std::set<std::string> t{"true", "True", "TRUE", "yes", "Yes",
                                       "YES",  "on",   "On",   "ON"};
  return t.count(s) > 0;
}
bool is_false(const std::string& s) {
  static const std::set<std::string> f{"false", "False", "FALSE", "no", "No",
                                       "NO",    "off",   "Off",   "OFF"};
  return f.count(s) > 0;
}
bool is_null(const YAML::Node& n) {
  return n.IsNull() || (n.IsScalar() && is_plain(n) &&
                        (n.Scalar() == "~" || n.Scalar() == "null" || n.Scalar() == "Null" ||
                         n.Scalar() == "NULL"));
}

// A YAML mapping as JSON (a value vLLM passes as JSON text, e.g. --speculative-config).
json to_json(const YAML::Node& n) {
  if (is_null(n)) return nullptr;
  if (n.IsMap()) {
    json out = json::object();
    for (const auto& kv : n) out[kv.first.as<std::string>()] = to_json(kv.second);
    return out;
  }
  if (n.IsSequence()) {
    json out = json::array();
    for (const auto& item : n) out.push_back(to_json(item));
    return out;
  }
  const std::string& s = n.Scalar();
  if (!is_plain(n)) return s;
  if (is_true(s)) return true;
  if (is_false(s)) return false;
  try {
    // The JSON reader types numbers as a JSON file would; any other text stays a string.
    json v = json::parse(s);
    if (v.is_number()) return v;
  } catch (const json::exception&) {
  }
  return s;
}

}  // namespace

bool is_yaml_config_path(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string ext = path.substr(dot + 1);
  return ext == "yaml" || ext == "yml";
}

json read_yaml_config(const std::string& path) {
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(path + ": cannot open file");
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": malformed YAML: " + e.what());
  }
  if (!doc.IsMap()) {
    throw ConfigError(path + ": " + (is_null(doc) ? "empty" : "not a mapping") +
                      "; expected a YAML mapping of run settings, one per line "
                      "(max-num-seqs: 256), as vllm serve --config reads");
  }
  std::vector<std::string> names;
  for (const ConfigField& f : config_fields()) names.push_back(with_dashes(f.key));

  json out = json::object();
  std::map<std::string, std::string> written;  // normalised key -> as written: each key once
  for (const auto& kv : doc) {
    if (!kv.first.IsScalar())
      throw ConfigError(path + ": a key is not a name; expected flag names");
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    const std::string where = path + ": key '" + key + "'";
    std::string name = with_underscores(key);
    if (const auto [at, added] = written.emplace(name, key); !added) {
      throw ConfigError(where + " appears twice" +
                        (at->second == key ? ""
                                           : " (as '" + at->second +
                                                 "' too: dashes and underscores name one key)") +
                        "; expected each key once");
    }
    // `no-X: true` turns the on/off setting X off, as the flag --no-X does.
    bool negated = false;
    if (find_field(name) == nullptr && name.rfind("no_", 0) == 0) {
      const ConfigField* f = find_field(name.substr(3));
      if (f != nullptr && f->kind == FieldKind::kBool) {
        name = name.substr(3);
        negated = true;
      }
    }
    const ConfigField* field = find_field(name);
    if (field == nullptr) {
      const std::string near = nearest_name(with_dashes(key), names);
      throw ConfigError(where + " is not a run setting" +
                        (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                        "; expected a flag name of `servesim simulate --help` without its dashes");
    }
    if (out.contains(name)) {
      throw ConfigError(where + " sets " + with_dashes(name) +
                        ", which another key sets too; expected each setting once");
    }
    if (is_null(value)) throw ConfigError(where + " has no value; expected " + key + ": VALUE");
    json v;
    if (value.IsMap()) {
      v = to_json(value).dump();  // vLLM: json.dumps of a nested mapping
    } else if (value.IsSequence()) {
      if (field->kind != FieldKind::kStringList) {
        throw ConfigError(where + " has a list; expected one value (" + with_dashes(name) +
                          " takes a single value)");
      }
      v = json::array();
      for (const auto& item : value) {
        if (!item.IsScalar() || is_null(item)) {
          throw ConfigError(where + " has a list item that is not a single value");
        }
        v.push_back(item.Scalar());
      }
    } else {
      const json typed = to_json(value);
      if (typed.is_boolean()) {
        if (field->kind != FieldKind::kBool) {
          throw ConfigError(where + " is " + typed.dump() + "; expected " + with_dashes(name) +
                            "'s value (vLLM would pass --" + with_dashes(name) + " with none)");
        }
        const bool on = typed.get<bool>() != negated;
        const bool default_on = field->get(sim::SimulationConfig{}) == json(true);
        if (!typed.get<bool>() && (negated ? !default_on : default_on)) {
          // vLLM drops a false key, so the setting would keep its default there.
          throw ConfigError(where + " is false, which vllm serve --config ignores (" +
                            with_dashes(name) + " stays " + (default_on ? "on" : "off") +
                            "); expected " +
                            (default_on ? "no-" + with_dashes(name) : with_dashes(name)) +
                            ": true to turn it " + (default_on ? "off" : "on"));
        }
        v = on;
      } else {
        try {
          v = parse_flag_value(*field, value.Scalar());
        } catch (const ConfigError& e) {
          // "--max-num-seqs: 'x' is invalid; expected ..." -> named by the file and key.
          const std::string msg = e.what();
          const auto colon = msg.find(": ");
          throw ConfigError(where + ": " +
                            (colon == std::string::npos ? msg : msg.substr(colon + 2)));
        }
      }
    }
    out[name] = v;
  }
  return out;
}

}  // namespace servesim::app
