// --speculative-config: vLLM's speculative-decoding JSON (vllm/config/speculative.py,
// SpeculativeConfig.__post_init__) read into a SpecDecode (sim/replica/spec_decode.h).
//
// Accepted vLLM keys: method, num_speculative_tokens, model, draft_tensor_parallel_size,
// prompt_lookup_min, prompt_lookup_max (revision and code_revision are accepted and change
// nothing simulated). Method aliases as vLLM resolves them: no method with model "ngram" or
// "[ngram]" is ngram, "[ngram]" is ngram, a model whose name holds "eagle-" is eagle and one
// holding "eagle3" eagle3, any other model a draft_model; the MTP model types (deepseek_mtp,
// qwen3_next_mtp, ...) are mtp. Defaults as vLLM's: ngram's prompt_lookup_min/max 5/5 (one given:
// the other equals it); mtp's num_speculative_tokens the model's MTP layers.
// servesim-only keys (vLLM has no such key; they say what vLLM's metrics would measure):
//   acceptance_rates   list of K per-position conditional acceptance rates in [0, 1]
//   acceptance_length  mean acceptance length in [1, K + 1] (vllm:spec_decode_num_accepted_tokens
//                      / num_drafts + 1), turned into a constant per-position rate
//   acceptance_seed    seed of the acceptance draws [0]
// Exactly one of acceptance_rates / acceptance_length is required: no acceptance is measured in
// servesim's data, so none is assumed.
// Every other key is refused by name (ConfigError naming `where`, the key and why): vLLM's own
// keys that change serving in ways not modelled, and keys vLLM does not have.
#ifndef SERVESIM_SIM_REPLICA_SPECULATIVE_CONFIG_H_
#define SERVESIM_SIM_REPLICA_SPECULATIVE_CONFIG_H_

#include <string>

#include <nlohmann/json.hpp>

#include "models/model_spec.h"
#include "sim/replica/spec_decode.h"

namespace servesim::sim {

// `config` is a JSON object, or a string holding one (the command line's form). Checks what
// needs no model; resolve_spec_decode checks the rest. Throws ConfigError.
SpecDecode parse_speculative_config(const nlohmann::json& config, const std::string& where);

// The JSON a SpecDecode reads back from (the keys given, for echoing a run's config).
nlohmann::json speculative_config_json(const SpecDecode& spec);

// The model-dependent defaults and checks: mtp needs MTP layers in `target` (and takes their
// count for an absent num_speculative_tokens); the acceptance list must have K entries.
// Throws ConfigError naming --speculative-config.
SpecDecode resolve_spec_decode(const SpecDecode& spec, const models::ModelSpec& target);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_SPECULATIVE_CONFIG_H_
