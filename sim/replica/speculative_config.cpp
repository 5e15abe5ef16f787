#include "sim/replica/speculative_config.h"

#include <algorithm>
#include <set>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::sim {
namespace {

// vLLM's MTPModelTypes other than "mtp": deprecated method names that vLLM maps to mtp.
const std::set<std::string>& mtp_aliases() {
  static const std::set<std::string> k = {
      "deepseek_mtp",        "mimo_mtp",       "glm4_moe_mtp",
      "ernie_mtp",           "qwen3_next_mtp", "longcat_flash_mtp",
      "pangu_ultra_moe_mtp", "qwen3_5_mtp",    "step3p5_mtp"};
  return k;
}

// vLLM's methods servesim does not model, with why.
std::string unmodelled_method(const std::string& m) {
  if (m == "medusa" || m == "mlp_speculator") {
    return "its heads' cost and acceptance are not modelled (eagle, eagle3, mtp, draft_model and "
           "ngram are)";
  }
  if (m == "suffix" || m == "ngram_gpu" || m == "dflash" || m == "dspark" ||
      m == "extract_hidden_states" || m == "custom_class") {
    return "not modelled (eagle, eagle3, mtp, draft_model and ngram are)";
  }
  return "";
}

// vLLM keys that change serving in ways servesim does not model.
const std::set<std::string>& unmodelled_keys() {
  static const std::set<std::string> k = {"quantization",
                                          "max_model_len",
                                          "enforce_eager",
                                          "disable_padded_drafter_batch",
                                          "disable_eagle_block_drop",
                                          "use_local_argmax_reduction",
                                          "use_heterogeneous_vocab",
                                          "parallel_drafting",
                                          "speculative_token_tree",
                                          "num_speculative_tokens_per_batch_size",
                                          "disable_by_batch_size",
                                          "rejection_sample_method",
                                          "synthetic_acceptance_rates",
                                          "synthetic_acceptance_length",
                                          "draft_sample_method",
                                          "moe_backend",
                                          "attention_backend",
                                          "kv_cache_dtype",
                                          "tensor_parallel_size",
                                          "suffix_decoding_max_tree_depth",
                                          "suffix_decoding_max_cached_requests",
                                          "suffix_decoding_max_spec_factor",
                                          "suffix_decoding_min_token_prob",
                                          "draft_load_config",
                                          "enable_adaptive_verification",
                                          "dspark_draft_topk",
                                          "index_share_for_mtp_iteration",
                                          "disable_logprobs",
                                          "disable_log_stats"};
  return k;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

SpecDecode parse_speculative_config(const nlohmann::json& config, const std::string& where) {
  nlohmann::json j = config;
  if (config.is_string()) j = parse_json_text(config.get<std::string>(), where);
  if (!j.is_object()) {
    throw ConfigError(where +
                      ": expected a JSON object such as {\"method\": \"eagle3\", "
                      "\"model\": \"...\", \"num_speculative_tokens\": 3, "
                      "\"acceptance_length\": 2.5}");
  }
  SpecDecode s;
  const auto key = [&](const std::string& k) { return where + ": key '" + k + "'"; };
  bool has_rates = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = it.value();
    if (k == "method") {
      if (!v.is_null()) s.method = json_value_as<std::string>(v, key(k));
    } else if (k == "num_speculative_tokens") {
      if (!v.is_null()) s.num_speculative_tokens = json_value_as<int>(v, key(k));
      if (s.num_speculative_tokens < 1 && !v.is_null()) {
        throw ConfigError(key(k) + " is " + v.dump() + "; expected an integer >= 1");
      }
    } else if (k == "model") {
      if (!v.is_null()) s.model = json_value_as<std::string>(v, key(k));
    } else if (k == "draft_tensor_parallel_size") {
      if (!v.is_null()) s.draft_tensor_parallel_size = json_value_as<int>(v, key(k));
      if (s.draft_tensor_parallel_size < 1 && !v.is_null()) {
        throw ConfigError(key(k) + " is " + v.dump() + "; expected an integer >= 1");
      }
    } else if (k == "prompt_lookup_min" || k == "prompt_lookup_max") {
      const int x = v.is_null() ? 0 : json_value_as<int>(v, key(k));
      if (!v.is_null() && x < 1) {
        throw ConfigError(key(k) + " is " + v.dump() + "; expected an integer >= 1");
      }
      (k == "prompt_lookup_min" ? s.prompt_lookup_min : s.prompt_lookup_max) = x;
    } else if (k == "revision" || k == "code_revision") {
      // Which checkpoint revision is loaded: nothing simulated depends on it.
    } else if (k == "acceptance_rates") {
      if (!v.is_array() || v.empty()) {
        throw ConfigError(key(k) + " is " + v.dump() +
                          "; expected a list of per-position conditional acceptance rates in "
                          "[0, 1], one per speculative token");
      }
      for (const nlohmann::json& r : v) {
        const double a = json_value_as<double>(r, key(k));
        if (!(a >= 0.0 && a <= 1.0)) {
          throw ConfigError(key(k) + " holds " + r.dump() + "; expected rates in [0, 1]");
        }
        s.acceptance_rates.push_back(a);
      }
      has_rates = true;
    } else if (k == "acceptance_length") {
      s.acceptance_length = json_value_as<double>(v, key(k));
      if (!(s.acceptance_length >= 1.0)) {
        throw ConfigError(key(k) + " is " + v.dump() +
                          "; expected a mean acceptance length >= 1 (1 + accepted drafts per "
                          "verify step)");
      }
    } else if (k == "acceptance_seed") {
      s.acceptance_seed = json_value_as<uint64_t>(v, key(k));
    } else if (unmodelled_keys().count(k) != 0) {
      throw ConfigError(key(k) +
                        ": vLLM's, but servesim does not model what it changes; remove it");
    } else {
      throw ConfigError(key(k) +
                        ": unknown; expected method, num_speculative_tokens, model, "
                        "draft_tensor_parallel_size, prompt_lookup_min, prompt_lookup_max "
                        "(vLLM's) or acceptance_rates, acceptance_length, acceptance_seed "
                        "(servesim's)");
    }
  }
  // Method resolution as SpeculativeConfig.__post_init__.
  if (s.method.empty()) {
    if (s.model.empty()) {
      throw ConfigError(where +
                        ": neither method nor model is given; expected a method (ngram, "
                        "eagle, eagle3, mtp, draft_model) or a draft model");
    }
    if (s.model == "ngram" || s.model == "[ngram]") {
      s.method = "ngram";
    } else if (lower(s.model).find("eagle-") != std::string::npos) {
      s.method = "eagle";
    } else if (lower(s.model).find("eagle3") != std::string::npos) {
      s.method = "eagle3";
    } else {
      s.method = "draft_model";
    }
  }
  if (s.method == "[ngram]") s.method = "ngram";
  if (mtp_aliases().count(s.method) != 0) s.method = "mtp";
  if (const std::string why = unmodelled_method(s.method); !why.empty()) {
    throw ConfigError(key("method") + " is '" + s.method + "': " + why);
  }
  if (s.method != "ngram" && s.method != "eagle" && s.method != "eagle3" && s.method != "mtp" &&
      s.method != "draft_model") {
    throw ConfigError(key("method") + " is '" + s.method +
                      "'; expected ngram, eagle, eagle3, mtp or draft_model");
  }
  if (s.method == "ngram") {
    if (s.model == "[ngram]") s.model = "ngram";
    if (s.prompt_lookup_min == 0 && s.prompt_lookup_max == 0) {
      s.prompt_lookup_min = s.prompt_lookup_max = 5;
    } else if (s.prompt_lookup_min == 0) {
      s.prompt_lookup_min = s.prompt_lookup_max;
    } else if (s.prompt_lookup_max == 0) {
      s.prompt_lookup_max = s.prompt_lookup_min;
    }
    if (s.prompt_lookup_min > s.prompt_lookup_max) {
      throw ConfigError(where + ": prompt_lookup_min=" + std::to_string(s.prompt_lookup_min) +
                        " must be <= prompt_lookup_max=" + std::to_string(s.prompt_lookup_max));
    }
  } else {
    s.prompt_lookup_min = s.prompt_lookup_max = 0;  // vLLM zeroes them for other methods
  }
  if ((s.method == "eagle" || s.method == "eagle3" || s.method == "draft_model") &&
      s.model.empty()) {
    throw ConfigError(key("model") + " is missing; method " + s.method +
                      " needs the draft model or EAGLE head");
  }
  if (s.num_speculative_tokens == 0 && s.method != "mtp") {
    throw ConfigError(key("num_speculative_tokens") + " is missing; expected an integer >= 1");
  }
  if (has_rates == (s.acceptance_length > 0)) {
    throw ConfigError(where +
                      ": give exactly one of acceptance_rates (per-position conditional rates) "
                      "or acceptance_length (vLLM's mean acceptance length): servesim-only keys, "
                      "since the acceptance depends on the model pair and the data and none is "
                      "measured in servesim's data (docs/deployment-modes.md)");
  }
  s.acceptance_source = has_rates ? "acceptance_rates" : "acceptance_length";
  return s;
}

nlohmann::json speculative_config_json(const SpecDecode& spec) {
  nlohmann::json j = nlohmann::json::object();
  j["method"] = spec.method;
  if (spec.num_speculative_tokens > 0) j["num_speculative_tokens"] = spec.num_speculative_tokens;
  if (!spec.model.empty()) j["model"] = spec.model;
  if (spec.draft_tensor_parallel_size > 0) {
    j["draft_tensor_parallel_size"] = spec.draft_tensor_parallel_size;
  }
  if (spec.method == "ngram") {
    j["prompt_lookup_min"] = spec.prompt_lookup_min;
    j["prompt_lookup_max"] = spec.prompt_lookup_max;
  }
  if (spec.acceptance_length > 0) {
    j["acceptance_length"] = spec.acceptance_length;
  } else {
    j["acceptance_rates"] = spec.acceptance_rates;
  }
  if (spec.acceptance_seed != 0) j["acceptance_seed"] = spec.acceptance_seed;
  return j;
}

SpecDecode resolve_spec_decode(const SpecDecode& spec, const models::ModelSpec& target) {
  SpecDecode s = spec;
  if (!s.enabled() && s.method.empty()) return s;
  const std::string where = "--speculative-config";
  if (s.method == "mtp") {
    if (target.num_mtp_layers <= 0) {
      throw ConfigError(where +
                        ": method mtp needs a model with multi-token-prediction layers "
                        "(num_nextn_predict_layers); " +
                        target.name + " has none");
    }
    if (s.num_speculative_tokens == 0) {
      s.num_speculative_tokens = static_cast<int>(target.num_mtp_layers);
    } else if (s.num_speculative_tokens > target.num_mtp_layers &&
               s.num_speculative_tokens % target.num_mtp_layers != 0) {
      throw ConfigError(where + ": num_speculative_tokens:" +
                        std::to_string(s.num_speculative_tokens) + " must be divisible by " +
                        "n_predict=" + std::to_string(target.num_mtp_layers) + " (vLLM's check)");
    }
  }
  const int k = s.num_speculative_tokens;
  if (s.acceptance_length > 0) {
    if (s.acceptance_length > k + 1) {
      throw ConfigError(where + ": acceptance_length " +
                        nlohmann::json(s.acceptance_length).dump() +
                        " exceeds num_speculative_tokens + 1 = " + std::to_string(k + 1));
    }
    s.acceptance_rates = rates_for_acceptance_length(s.acceptance_length, k);
  } else if (static_cast<int>(s.acceptance_rates.size()) != k) {
    throw ConfigError(where + ": acceptance_rates has " +
                      std::to_string(s.acceptance_rates.size()) +
                      " entries; expected one per speculative token (" + std::to_string(k) + ")");
  }
  return s;
}

}  // namespace servesim::sim
