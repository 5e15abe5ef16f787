// apply_config_json and parse_flag_value (declared in run_config.h): a --config file's keys and
// the command line's strings read into a SimulationConfig through the field table.
#include "sim/app/run_config.h"

#include <sstream>

#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/base/number_text.h"

namespace servesim::app {
namespace {

using nlohmann::json;
using sim::SimulationConfig;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(s);
  while (std::getline(ss, item, ',')) {
    // Also accept spaces as separators, as vLLM's flags take "ttft,tpot" or "ttft tpot".
    std::stringstream words(item);
    std::string w;
    while (words >> w) out.push_back(w);
  }
  return out;
}

const char* kind_word(FieldKind k) {
  switch (k) {
    case FieldKind::kString:
      return "a string";
    case FieldKind::kInt:
      return "an integer";
    case FieldKind::kPositiveInt:
      return "an integer >= 1";
    case FieldKind::kDouble:
      return "a number";
    case FieldKind::kBool:
      return "true or false";
    case FieldKind::kRate:
      return "a number of requests/s or \"inf\"";
    case FieldKind::kStringList:
      return "a list";
  }
  return "a value";
}

bool type_ok(FieldKind kind, const json& v) {
  switch (kind) {
    case FieldKind::kString:
      return v.is_string();
    case FieldKind::kInt:
      return v.is_number_integer();
    case FieldKind::kPositiveInt:
      return v.is_number_integer() && v.get<int64_t>() >= 1;
    case FieldKind::kDouble:
      return v.is_number();
    case FieldKind::kBool:
      return v.is_boolean();
    case FieldKind::kRate:
      return v.is_number() || (v.is_string() && v.get<std::string>() == "inf");
    case FieldKind::kStringList:
      return v.is_array();
  }
  return false;
}

}  // namespace

namespace {

void apply_fields(SimulationConfig& config, const json& j, const std::string& where,
                  bool unset_allowed) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object of run settings");
  for (const auto& item : j.items()) {
    // Named copies, not structured bindings: a lambda below captures them, which clang before 16
    // rejects for bindings (the sanitizer build uses clang 14).
    const std::string key = item.key();
    const json& value = item.value();
    const ConfigField* match = nullptr;
    for (const ConfigField& f : config_fields()) {
      if (f.key == key) match = &f;
    }
    if (match == nullptr) {
      throw ConfigError(where + ": unknown key '" + key +
                        "' (keys are the flag names with underscores, e.g. max_num_seqs)");
    }
    auto bad = [&](const std::string& expected) {
      if (where == "command line") {
        return ConfigError(flag_of(key) + ": " + value.dump() + " is invalid; expected " +
                           expected);
      }
      return ConfigError(where + ": key '" + key + "' has value " + value.dump() + "; expected " +
                         expected);
    };
    // An unset flag as the echo writes it (ConfigField::unset) reads back as unset.
    const bool unset = unset_allowed && match->unset && (value.is_null() || value == *match->unset);
    if (!unset && !type_ok(match->kind, value)) throw bad(kind_word(match->kind));
    try {
      match->set(config, unset ? json(nullptr) : value);
    } catch (const BadValue& e) {
      throw bad(e.expected);
    }
  }
}

}  // namespace

void apply_config_json(SimulationConfig& config, const json& j, const std::string& where) {
  apply_fields(config, j, where, /*unset_allowed=*/false);
}

void apply_config_file_json(SimulationConfig& config, const json& j, const std::string& where) {
  apply_fields(config, j, where, /*unset_allowed=*/true);
}

json parse_flag_value(const ConfigField& field, const std::string& text) {
  const std::string flag = flag_of(field.key);
  auto bad = [&](const std::string& what) {
    return ConfigError(flag + ": '" + text + "' is invalid; expected " + what);
  };
  switch (field.kind) {
    case FieldKind::kString:
      return text;
    case FieldKind::kBool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw bad("true or false");
    case FieldKind::kInt:
    case FieldKind::kPositiveInt: {
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        throw bad("an integer");
      }
      if (used != text.size()) throw bad("an integer");
      if (field.kind == FieldKind::kPositiveInt && v < 1) throw bad("an integer >= 1");
      return v;
    }
    case FieldKind::kDouble:
    case FieldKind::kRate: {
      if (field.kind == FieldKind::kRate && (text == "inf" || text == "Inf")) return "inf";
      const std::optional<double> v = parse_finite_double(text);
      if (!v) {
        throw bad(field.kind == FieldKind::kRate ? "a number of requests/s or inf" : "a number");
      }
      return *v;
    }
    case FieldKind::kStringList:
      return split_list(text);
  }
  return text;
}

}  // namespace servesim::app
