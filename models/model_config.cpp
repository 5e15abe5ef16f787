// Reading a Hugging Face config.json into a ModelSpec (model_spec.h: load_model,
// load_architecture): the architectures and fields servesim models, the common fields, and the
// family readers (model_families.h) and checkpoint format (checkpoint_format.h) in their order.
#include "models/model_spec.h"

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/checkpoint_format.h"
#include "models/config_fields.h"
#include "models/model_families.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {
namespace {

using nlohmann::json;

// The architectures servesim models (config.json "architectures"[0]); docs/models.md.
const std::vector<std::string>& modelled_architectures() {
  static const std::vector<std::string> names = {"LlamaForCausalLM",
                                                 "MistralForCausalLM",
                                                 "MixtralForCausalLM",
                                                 "Qwen2ForCausalLM",
                                                 "Qwen3ForCausalLM",
                                                 "Qwen2MoeForCausalLM",
                                                 "Qwen3MoeForCausalLM",
                                                 "GptOssForCausalLM",
                                                 "DeepseekV2ForCausalLM",
                                                 "DeepseekV3ForCausalLM",
                                                 "Glm4MoeForCausalLM",
                                                 "Gemma3ForCausalLM",
                                                 "Gemma3ForConditionalGeneration",
                                                 "Llama4ForCausalLM",
                                                 "Llama4ForConditionalGeneration",
                                                 "Qwen3NextForCausalLM"};
  return names;
}

// Fields that change the architecture in ways servesim does not model, with what they are. A
// config carrying one is refused whatever its architectures say (never a silent dense model),
// unless its family is the one that models the field (`modelled_by`).
struct UnmodelledField {
  std::string field;
  std::string what;
  bool (*modelled_by)(const std::string& arch);
};
const std::vector<UnmodelledField>& unmodelled_fields() {
  static const std::vector<UnmodelledField> fields = {
      {"text_config", "a multimodal model whose language model sits under text_config", nullptr},
      {"full_attention_interval", "hybrid linear-attention layers (Qwen3-Next's Gated DeltaNet)",
       is_qwen3_next},
      {"linear_num_value_heads", "hybrid linear-attention layers (Qwen3-Next's Gated DeltaNet)",
       is_qwen3_next},
      {"attention_chunk_size", "chunked local attention (Llama-4)", is_llama4},
      {"interleave_moe_layer_step", "MoE on every n-th layer with a shared expert (Llama-4)",
       is_llama4},
      {"sliding_window_pattern", "an interleaved sliding-window pattern (Gemma-2/3)", is_gemma3},
      {"block_sparse_moe", "block-sparse MoE layers", nullptr}};
  return fields;
}

// config.json's architectures[0], "" when absent.
std::string architecture_of(const json& j, const std::string& where) {
  if (!j.contains("architectures") || j["architectures"].is_null()) return "";
  const json& a = j["architectures"];
  if (!a.is_array() || a.empty() || !a[0].is_string()) {
    throw ConfigError(where + ": field 'architectures' must be an array of strings");
  }
  return a[0].get<std::string>();
}

// Refuses an architecture or a field that servesim does not model (docs/models.md).
void refuse_unmodelled(const json& j, const std::string& where, ModelSpec& m) {
  m.architecture = architecture_of(j, where);
  const auto& known = modelled_architectures();
  if (!m.architecture.empty() &&
      std::find(known.begin(), known.end(), m.architecture) == known.end()) {
    throw ConfigError(where + ": architecture '" + m.architecture +
                      "' is not modelled; servesim models " + join_names(known) +
                      " (docs/models.md), and does not approximate another family by one of them");
  }
  for (const auto& f : unmodelled_fields()) {
    if (f.modelled_by != nullptr && f.modelled_by(m.architecture)) continue;
    if (j.contains(f.field) && !j[f.field].is_null()) {
      throw ConfigError(where + ": field '" + f.field + "' (" + f.what +
                        ") is not modelled; servesim models " + join_names(known) +
                        " (docs/models.md)");
    }
  }
}

ModelSpec parse_text_model(const json& config, const std::string& name, const std::string& where) {
  json j = config;
  ModelSpec m;
  m.name = name;
  refuse_unmodelled(j, where, m);
  if (is_gemma3(m.architecture)) fill_gemma3_defaults(j);
  m.hidden_size = require_positive(j, "hidden_size", where);
  m.intermediate_size = require_positive(j, "intermediate_size", where);
  m.num_layers = require_positive(j, "num_hidden_layers", where);
  m.num_heads = require_positive(j, "num_attention_heads", where);
  m.num_kv_heads = optional_positive(j, "num_key_value_heads", where, m.num_heads);
  if (!j.contains("head_dim") || j["head_dim"].is_null()) {
    if (m.hidden_size % m.num_heads != 0) {
      throw ConfigError(where + ": hidden_size " + std::to_string(m.hidden_size) +
                        " is not divisible by num_attention_heads " + std::to_string(m.num_heads) +
                        " and no head_dim is given");
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
  m.checkpoint_dtype = checkpoint_dtype_of(j, where);
  apply_dtype(m, "auto");
  m.checkpoint_quantization = checkpoint_format(j, where, m);
  parse_mla(j, where, m);

  // QKV bias: explicit attention_bias, or Qwen2-family models, which always carry it.
  const auto model_type = optional_field<std::string>(j, "model_type", where, "");
  m.qkv_bias = optional_field<bool>(j, "attention_bias", where, false) || model_type == "qwen2" ||
               model_type == "qwen2_moe";

  // MoE. Mixtral: num_local_experts, experts as wide as intermediate_size.
  // Qwen-MoE: num_experts, moe_intermediate_size, optional shared expert.
  if (j.contains("num_local_experts") && !j["num_local_experts"].is_null()) {
    m.num_experts = require_positive(j, "num_local_experts", where);
    m.moe_intermediate_size = m.intermediate_size;
  } else if (j.contains("num_experts") && !j["num_experts"].is_null()) {
    m.num_experts = require_positive(j, "num_experts", where);
    m.moe_intermediate_size = require_positive(j, "moe_intermediate_size", where);
    m.shared_expert_intermediate_size =
        optional_count(j, "shared_expert_intermediate_size", where, 0);
    m.shared_expert_gate = m.shared_expert_intermediate_size > 0;  // Qwen2-MoE's sigmoid gate
  } else if (j.contains("n_routed_experts") && !j["n_routed_experts"].is_null()) {
    // DeepSeek-V2/V3, Kimi-K2, GLM-4.5: n_routed_experts of moe_intermediate_size; the
    // n_shared_experts run as one MLP n_shared × moe_intermediate_size wide (vLLM
    // DeepseekV2MoE.shared_experts), ungated. Grouped top-k routing (n_group, topk_group) only
    // restricts which experts a token may pick; its cost is the router's.
    m.num_experts = require_positive(j, "n_routed_experts", where);
    m.moe_intermediate_size = require_positive(j, "moe_intermediate_size", where);
    m.shared_expert_intermediate_size =
        optional_count(j, "n_shared_experts", where, 0) * m.moe_intermediate_size;
    m.num_mtp_layers = optional_count(j, "num_nextn_predict_layers", where, 0);
  }
  if (is_llama4(m.architecture)) parse_llama4(j, where, m);
  if (is_gemma3(m.architecture)) parse_gemma3_layers(j, where, m);
  if (is_qwen3_next(m.architecture)) {
    parse_qwen3_next(j, where, m);
  } else {
    parse_sliding_layers(j, where, m);
  }
  if (m.num_experts > 0) {
    m.num_dense_layers = count_dense_layers(j, where, m);
    m.experts_per_token = require_positive(j, "num_experts_per_tok", where);
    if (m.experts_per_token > m.num_experts) {
      throw ConfigError(where + ": num_experts_per_tok " + std::to_string(m.experts_per_token) +
                        " exceeds the number of experts " + std::to_string(m.num_experts));
    }
  }
  return m;
}

// A config.json: a language model, or a multimodal one (Gemma-3, Llama-4) whose language model
// sits under text_config, read with the checkpoint-wide torch_dtype and quantization_config and
// the vision encoder's weights.
ModelSpec parse_model(const json& j, const std::string& name, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object (an HF config.json)");
  const std::string arch = architecture_of(j, where);
  if (arch != "Gemma3ForConditionalGeneration" && arch != "Llama4ForConditionalGeneration") {
    return parse_text_model(j, name, where);
  }
  if (!j.contains("text_config") || !j["text_config"].is_object()) {
    throw ConfigError(where + ": field 'text_config' must be an object (the language model of " +
                      arch + ")");
  }
  json text = j["text_config"];
  for (const char* key : {"torch_dtype", "dtype", "quantization_config"}) {
    if ((!text.contains(key) || text[key].is_null()) && j.contains(key)) text[key] = j[key];
  }
  text["architectures"] = json::array({arch});
  ModelSpec m = parse_text_model(text, name, where + " (text_config)");
  m.encoder_params = encoder_params(j, arch, m.hidden_size, where);
  return m;
}

}  // namespace

ModelSpec load_model(const ModelSource& source) {
  return parse_model(read_json_file(source.config_path), source.name(), source.config_path);
}

ModelSpec load_architecture(const std::string& config_path) {
  return parse_model(read_json_file(config_path), config_path, config_path);
}

ModelSpec load_model(const std::string& name_or_path) {
  return load_model(resolve_model(name_or_path));
}

std::vector<std::string> model_catalog_names() { return catalog_names_in(model_catalog_dir()); }

}  // namespace servesim::models
