// ModelSpec loading from HuggingFace config.json fields, and the parameter / KV arithmetic of
// REFERENCE.md §4.
#include "models/model_spec.h"

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {
namespace {

using nlohmann::json;

// A required positive integer field.
int64_t require_positive(const json& j, const std::string& key, const std::string& where) {
  const auto v = require_field<int64_t>(j, key, where);
  if (v <= 0) {
    throw ConfigError(where + ": field '" + key + "' must be a positive integer (value " +
                      std::to_string(v) + ")");
  }
  return v;
}

// An optional integer field that, when present, must be positive.
int64_t optional_positive(const json& j, const std::string& key, const std::string& where,
                          int64_t fallback) {
  const auto v = optional_field<int64_t>(j, key, where, fallback);
  if (v <= 0) {
    throw ConfigError(where + ": field '" + key + "' must be a positive integer (value " +
                      std::to_string(v) + ")");
  }
  return v;
}

// torch_dtype (or "dtype", its name in transformers >= 4.56) -> bytes per weight element.
int dtype_bytes_of(const json& j, const std::string& where) {
  std::string key = "torch_dtype";
  if (!j.contains(key) || j[key].is_null()) key = "dtype";
  const auto dtype = optional_field<std::string>(j, key, where, "bfloat16");
  if (dtype == "bfloat16" || dtype == "float16") return 2;
  if (dtype == "float32") return 4;
  throw ConfigError(where + ": field '" + key + "' has unsupported value '" + dtype +
                    "' (expected bfloat16, float16 or float32)");
}

// layer_types (transformers >= 4.53: one "full_attention" / "sliding_attention" per layer, as
// gpt-oss and Gemma-3 configs carry) with sliding_window. vLLM builds a SlidingWindowSpec for each
// "sliding_attention" layer and a FullAttentionSpec for the others (vllm/v1/kv_cache_interface.py).
// Without layer_types, a "mistral" config's sliding_window (Mistral-7B-v0.1: 4096) is vLLM's
// model-level window: ModelConfig passes it to CacheConfig.sliding_window (unless
// use_sliding_window is false or --disable-sliding-window) and every Attention layer without a
// per-layer window falls back to it (vllm/attention/layer.py). Other model types without
// layer_types keep full attention here (docs/cost_model.md §3.3.1 says why).
void parse_sliding_layers(const json& j, const std::string& where, ModelSpec& m) {
  if (!j.contains("layer_types") || j["layer_types"].is_null()) {
    const bool mistral = j.contains("model_type") && j["model_type"].is_string() &&
                         j["model_type"].get<std::string>() == "mistral";
    const bool window = j.contains("sliding_window") && !j["sliding_window"].is_null();
    const bool off = j.contains("use_sliding_window") && j["use_sliding_window"].is_boolean() &&
                     !j["use_sliding_window"].get<bool>();
    if (mistral && window && !off) {
      m.sliding_window = require_positive(j, "sliding_window", where);
      m.num_sliding_layers = m.num_layers;
    }
    return;
  }
  const json& types = j["layer_types"];
  if (!types.is_array() || static_cast<int64_t>(types.size()) != m.num_layers) {
    throw ConfigError(where + ": field 'layer_types' must be an array of num_hidden_layers (" +
                      std::to_string(m.num_layers) + ") strings");
  }
  int64_t sliding = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
    if (t == "sliding_attention") {
      ++sliding;
    } else if (t != "full_attention") {
      throw ConfigError(where + ": field 'layer_types[" + std::to_string(i) + "]' has value " +
                        types[i].dump() +
                        " (expected \"full_attention\" or \"sliding_attention\")");
    }
  }
  if (sliding == 0) return;
  m.sliding_window = require_positive(j, "sliding_window", where);
  m.num_sliding_layers = sliding;
}

ModelSpec parse_model(const json& j, const std::string& name, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object (an HF config.json)");
  ModelSpec m;
  m.name = name;
  m.hidden_size = require_positive(j, "hidden_size", where);
  m.intermediate_size = require_positive(j, "intermediate_size", where);
  m.num_layers = require_positive(j, "num_hidden_layers", where);
  m.num_heads = require_positive(j, "num_attention_heads", where);
  m.num_kv_heads = optional_positive(j, "num_key_value_heads", where, m.num_heads);
  if (!j.contains("head_dim") || j["head_dim"].is_null()) {
    if (m.hidden_size % m.num_heads != 0) {
      throw ConfigError(where + ": hidden_size " + std::to_string(m.hidden_size) +
                        " is not divisible by num_attention_heads " +
                        std::to_string(m.num_heads) + " and no head_dim is given");
    }
  }
  m.head_dim = optional_positive(j, "head_dim", where, m.hidden_size / m.num_heads);
  if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
    throw ConfigError(where + ": num_key_value_heads " + std::to_string(m.num_kv_heads) +
                      " must divide num_attention_heads " + std::to_string(m.num_heads));
  }
  m.vocab_size = require_positive(j, "vocab_size", where);
  // HF's PretrainedConfig defaults this to true, but every Llama/Mistral/Qwen config class
  // defaults it to false; the decoder-only families we load all follow the latter.
  m.tie_word_embeddings = optional_field<bool>(j, "tie_word_embeddings", where, false);
  m.max_position_embeddings = require_positive(j, "max_position_embeddings", where);
  // vLLM's max_model_len (and servesim's token counts) are 32-bit.
  if (m.max_position_embeddings > 2147483647) {
    throw ConfigError(where + ": field 'max_position_embeddings' has value " +
                      std::to_string(m.max_position_embeddings) +
                      "; expected an integer in [1, 2147483647]");
  }
  m.dtype_bytes = dtype_bytes_of(j, where);
  // quantization_config.quant_method "mxfp4" (openai/gpt-oss-120b and -20b config.json): vLLM's
  // Mxfp4Config quantizes only the FusedMoE layers (get_quant_method returns
  // UnquantizedLinearMethod for linear layers; modules_to_not_convert lists self_attn, the router,
  // embed_tokens and lm_head), so attention, router, embeddings and LM head stay in torch_dtype.
  if (j.contains("quantization_config") && j["quantization_config"].is_object()) {
    const auto& q = j["quantization_config"];
    if (q.contains("quant_method") && q["quant_method"].is_string() &&
        q["quant_method"].get<std::string>() == "mxfp4") {
      m.checkpoint_quantization = "mxfp4";
    }
  }

  // QKV bias: explicit attention_bias, or Qwen2-family models, which always carry it.
  const auto model_type = optional_field<std::string>(j, "model_type", where, "");
  m.qkv_bias = optional_field<bool>(j, "attention_bias", where, false) ||
               model_type == "qwen2" || model_type == "qwen2_moe";

  // MoE. Mixtral: num_local_experts, experts as wide as intermediate_size.
  // Qwen-MoE: num_experts, moe_intermediate_size, optional shared expert.
  if (j.contains("num_local_experts") && !j["num_local_experts"].is_null()) {
    m.num_experts = require_positive(j, "num_local_experts", where);
    m.moe_intermediate_size = m.intermediate_size;
  } else if (j.contains("num_experts") && !j["num_experts"].is_null()) {
    m.num_experts = require_positive(j, "num_experts", where);
    m.moe_intermediate_size = require_positive(j, "moe_intermediate_size", where);
    const auto shared =
        optional_field<int64_t>(j, "shared_expert_intermediate_size", where, 0);
    if (shared < 0) {
      throw ConfigError(where + ": field 'shared_expert_intermediate_size' must be >= 0");
    }
    m.shared_expert_intermediate_size = shared;
  }
  parse_sliding_layers(j, where, m);
  if (m.num_experts > 0) {
    m.experts_per_token = require_positive(j, "num_experts_per_tok", where);
    if (m.experts_per_token > m.num_experts) {
      throw ConfigError(where + ": num_experts_per_tok " + std::to_string(m.experts_per_token) +
                        " exceeds the number of experts " + std::to_string(m.num_experts));
    }
  }
  return m;
}

// Parameters of one decoder layer with `experts` routed experts counted (REFERENCE.md §4):
// attention projections (+ QKV bias), the MLP or experts (+ shared expert and its gate), the
// router, and the two RMSNorm weights.
double layer_params(const ModelSpec& m, int64_t experts) {
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.num_heads * m.head_dim);
  const double kv = static_cast<double>(m.num_kv_heads * m.head_dim);
  double p = h * q + 2 * h * kv + q * h;
  if (m.qkv_bias) p += q + 2 * kv;
  if (m.is_moe()) {
    p += 3 * h * static_cast<double>(m.moe_intermediate_size) * static_cast<double>(experts);
    p += h * static_cast<double>(m.num_experts);  // router
    if (m.shared_expert_intermediate_size > 0) {
      p += 3 * h * static_cast<double>(m.shared_expert_intermediate_size) + h;  // + its gate
    }
  } else {
    p += 3 * h * static_cast<double>(m.intermediate_size);
  }
  return p + 2 * h;
}

}  // namespace

double ModelSpec::embedding_param_count() const {
  return static_cast<double>(vocab_size) * static_cast<double>(hidden_size) *
         (tie_word_embeddings ? 1.0 : 2.0);
}

double ModelSpec::param_count() const {
  const int64_t experts = is_moe() ? num_experts : 0;
  return static_cast<double>(num_layers) * layer_params(*this, experts) +
         embedding_param_count() + static_cast<double>(hidden_size);  // + final norm
}

double ModelSpec::active_param_count() const {
  if (!is_moe()) return param_count();
  return static_cast<double>(num_layers) * layer_params(*this, experts_per_token) +
         embedding_param_count() + static_cast<double>(hidden_size);
}

int64_t ModelSpec::kv_bytes_per_token(int kv_dtype_bytes) const {
  return 2 * num_layers * num_kv_heads * head_dim * kv_dtype_bytes;
}

int64_t ModelSpec::kv_bytes_per_token_per_rank(int kv_dtype_bytes, int tp) const {
  if (tp < 1) {
    throw ConfigError("tensor-parallel size must be >= 1 (got " + std::to_string(tp) + ")");
  }
  // ceil(n_kv / tp), at least 1: with tp > n_kv each KV head is replicated on tp / n_kv ranks.
  const int64_t heads_per_rank = std::max<int64_t>(1, (num_kv_heads + tp - 1) / tp);
  return 2 * num_layers * heads_per_rank * head_dim * kv_dtype_bytes;
}

ModelSpec load_model(const ModelSource& source) {
  return parse_model(read_json_file(source.config_path), source.name(), source.config_path);
}

ModelSpec load_model(const std::string& name_or_path) {
  return load_model(resolve_model(name_or_path));
}

std::vector<std::string> model_catalog_names() { return catalog_names_in(model_catalog_dir()); }

}  // namespace servesim::models
