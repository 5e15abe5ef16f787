// The run description as data: every field of SimulationConfig has one name, used with dashes
// as a CLI flag (--max-num-seqs) and with underscores as a key of a --config JSON file
// (max_num_seqs). One table drives both, so they cannot drift apart.
#ifndef SERVESIM_SIM_APP_RUN_CONFIG_H_
#define SERVESIM_SIM_APP_RUN_CONFIG_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster/simulation.h"

namespace servesim::app {

// kPositiveInt: an integer >= 1 (the field's 0 means "vLLM's default" and cannot be asked for).
enum class FieldKind { kString, kInt, kPositiveInt, kDouble, kBool, kRate, kStringList };

// What a field's `set` throws for a JSON value of the right type outside the field's contract
// (json_value_fits, sim/base/json_file.h): apply_config_json adds where, which key and the value.
struct BadValue {
  std::string expected;  // "an integer >= 1", ...
};

struct ConfigField {
  std::string key;  // underscore name, e.g. "max_num_seqs"
  FieldKind kind;
  std::string help;         // one line, with unit and default
  std::string short_alias;  // e.g. "-tp" (optional)
  std::function<void(sim::SimulationConfig&, const nlohmann::json&)> set;
  std::function<nlohmann::json(const sim::SimulationConfig&)> get;
  // For a flag vLLM resolves itself (optional_engine_field): what the echo writes when it is
  // unset (null, or 0 for the counts). A config file value equal to it, or null, leaves the flag
  // unset, so an echoed config (plan, sweep, compare) reads back as the run it describes.
  std::optional<nlohmann::json> unset = std::nullopt;
};

// All run fields, in the order --help lists them.
const std::vector<ConfigField>& config_fields();

// apply_config_json and parse_flag_value are run_config_input.cpp's.
// Applies the JSON object `j` onto `config`. Unknown keys and values of the wrong type throw
// ConfigError naming `where` (the file or "command line"), the key, the value and what was
// expected.
void apply_config_json(sim::SimulationConfig& config, const nlohmann::json& j,
                       const std::string& where);
// The same for the object of a JSON --config file at `where`, which may also hold what an echo
// (config_to_json) writes for an unset flag (ConfigField::unset): such a value, or null, leaves
// that flag unset. Flags, --vary values and vllm serve's YAML files take apply_config_json,
// which refuses them.
void apply_config_file_json(sim::SimulationConfig& config, const nlohmann::json& j,
                            const std::string& where);

// Converts a command-line string to the JSON value a field expects ("inf" for rates, "a,b" for
// lists, "true"/"false" for bools). Throws ConfigError naming the flag.
nlohmann::json parse_flag_value(const ConfigField& field, const std::string& text);

// Every field's value, for echoing the config.
nlohmann::json config_to_json(const sim::SimulationConfig& config);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_RUN_CONFIG_H_
