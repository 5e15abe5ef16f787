// --config FILE.yaml / FILE.yml: a YAML file of run settings, read as vLLM's `--config` reads one
// (FlexibleArgumentParser.load_config_file, vllm/utils/argparse_utils.py): a mapping of flag
// names without the leading dashes to values, each value turned into the flag's text.
//
// Contract of read_yaml_config(path): returns the same JSON object a --config JSON file holds
// (keys with underscores, values typed as the field expects), so that every consumer of
// read_config_file treats both formats alike and refuses what the JSON path refuses. What vLLM
// does, and what is refused (ConfigError naming the file and the key as written):
//  - keys: `max-num-seqs` and `max_num_seqs` are the same key (vLLM's parser accepts both);
//    `no-X: true` is `X: false` for an on/off setting X (`no-enable-prefix-caching: true`).
//    A key that is not a run setting is refused, with the nearest setting's name.
//  - true: the bare flag. false: vLLM drops the key, so the flag keeps its default; false is
//    taken where the default is false, and refused where the default is true (vLLM would leave
//    the setting on; write `no-X: true`).
//  - a list: the flag's values (a list setting only: --percentile-metrics, --goodput, ...).
//  - a mapping: its JSON text, as vLLM passes --speculative-config '{...}'.
//  - other scalars: their text, parsed as the flag's (so `request-rate: inf` works, `1_000` and
//    `0x10` are refused rather than read as YAML 1.1 integers); null and an empty file refused.
#ifndef SERVESIM_SIM_APP_YAML_CONFIG_H_
#define SERVESIM_SIM_APP_YAML_CONFIG_H_

#include <string>

#include <nlohmann/json.hpp>

namespace servesim::app {

// True when `path` names a YAML file (.yaml or .yml, as vLLM requires of its --config).
bool is_yaml_config_path(const std::string& path);

// Reads the YAML file at `path` (already checked as an input) as run settings; throws ConfigError.
nlohmann::json read_yaml_config(const std::string& path);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_YAML_CONFIG_H_
