// The fields of config.json that belong to one architecture family or feature (model_families.h).
#include "models/model_families.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/config_fields.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"

namespace servesim::models {
namespace {

using nlohmann::json;

// Sets each absent (or null) key of `j` to its configuration class's default: the keys a
// published config.json leaves out because transformers fills them in.
void fill_defaults(json& j, const std::vector<std::pair<std::string, json>>& defaults) {
  for (const auto& [key, value] : defaults) {
    if (!j.contains(key) || j[key].is_null()) j[key] = value;
  }
}

}  // namespace

bool is_gemma3(const std::string& arch) {
  return arch == "Gemma3ForCausalLM" || arch == "Gemma3ForConditionalGeneration";
}
bool is_llama4(const std::string& arch) {
  return arch == "Llama4ForCausalLM" || arch == "Llama4ForConditionalGeneration";
}
bool is_qwen3_next(const std::string& arch) { return arch == "Qwen3NextForCausalLM"; }

void fill_gemma3_defaults(json& t) {
  fill_defaults(t, {{"vocab_size", 262208},
                    {"hidden_size", 2304},
                    {"intermediate_size", 9216},
                    {"num_hidden_layers", 26},
                    {"num_attention_heads", 8},
                    {"num_key_value_heads", 4},
                    {"head_dim", 256},
                    {"max_position_embeddings", 131072},
                    {"tie_word_embeddings", true},
                    {"sliding_window", 4096},
                    {"sliding_window_pattern", 6}});
}

void parse_gemma3_layers(const json& t, const std::string& where, ModelSpec& m) {
  m.hidden_norms_per_layer = 4;  // input, post-attention, pre- and post-feedforward
  m.qk_norm_weights = true;
  if (t.contains("layer_types") && !t["layer_types"].is_null()) return;  // parse_sliding_layers
  const int64_t pattern = require_positive(t, "sliding_window_pattern", where);
  int64_t sliding = 0;
  for (int64_t l = 0; l < m.num_layers; ++l) sliding += (l + 1) % pattern != 0 ? 1 : 0;
  if (sliding > 0) m.sliding_window = require_positive(t, "sliding_window", where);
  m.num_sliding_layers = sliding;
}

void parse_llama4(const json& t, const std::string& where, ModelSpec& m) {
  m.moe_intermediate_size = m.intermediate_size;
  m.shared_expert_intermediate_size = m.intermediate_size;
  m.intermediate_size = optional_positive(t, "intermediate_size_mlp", where, 16384);
  const int64_t step = optional_positive(t, "interleave_moe_layer_step", where, 1);
  if (t.contains("moe_layers") && !t["moe_layers"].is_null()) {
    const auto layers = require_field<std::vector<int64_t>>(t, "moe_layers", where);
    std::vector<int64_t> expected;
    for (int64_t l = step - 1; l < m.num_layers; l += step) expected.push_back(l);
    if (layers != expected) {
      throw ConfigError(where +
                        ": field 'moe_layers' differs from every interleave_moe_layer_step-th "
                        "layer; servesim models vLLM's llama4.py, which places the MoE layers "
                        "by interleave_moe_layer_step");
    }
  }
  m.attention_chunk_size = optional_positive(t, "attention_chunk_size", where, 8192);
  std::vector<int64_t> rope;
  if (t.contains("no_rope_layers") && t["no_rope_layers"].is_array() &&
      !t["no_rope_layers"].empty()) {
    rope = require_field<std::vector<int64_t>>(t, "no_rope_layers", where);
    if (static_cast<int64_t>(rope.size()) != m.num_layers) {
      throw ConfigError(where + ": field 'no_rope_layers' must hold num_hidden_layers (" +
                        std::to_string(m.num_layers) + ") entries");
    }
  } else {
    const int64_t interval = optional_positive(t, "no_rope_layer_interval", where, 4);
    for (int64_t l = 0; l < m.num_layers; ++l) rope.push_back((l + 1) % interval != 0 ? 1 : 0);
  }
  m.num_chunked_layers = std::count(rope.begin(), rope.end(), 1);
}

void parse_qwen3_next(const json& t, const std::string& where, ModelSpec& m) {
  ModelSpec::LinearAttention& a = m.linear;
  if (t.contains("layer_types") && t["layer_types"].is_array()) {
    for (const auto& type : t["layer_types"]) a.num_layers += type == "linear_attention" ? 1 : 0;
  } else {
    const int64_t interval = require_positive(t, "full_attention_interval", where);
    for (int64_t l = 0; l < m.num_layers; ++l) a.num_layers += (l + 1) % interval != 0 ? 1 : 0;
  }
  a.num_key_heads = require_positive(t, "linear_num_key_heads", where);
  a.key_head_dim = require_positive(t, "linear_key_head_dim", where);
  a.num_value_heads = require_positive(t, "linear_num_value_heads", where);
  a.value_head_dim = require_positive(t, "linear_value_head_dim", where);
  a.conv_kernel = require_positive(t, "linear_conv_kernel_dim", where);
  m.attention_output_gate = true;
  m.qk_norm_weights = true;
}

double encoder_params(const json& j, const std::string& arch, int64_t text_hidden,
                      const std::string& where) {
  if (!j.contains("vision_config") || !j["vision_config"].is_object()) {
    throw ConfigError(where + ": field 'vision_config' must be an object (the vision encoder of " +
                      arch + ")");
  }
  const json& v = j["vision_config"];
  const std::string w = where + " (vision_config)";
  const double h = static_cast<double>(require_positive(v, "hidden_size", w));
  const double inter = static_cast<double>(require_positive(v, "intermediate_size", w));
  const double layers = static_cast<double>(require_positive(v, "num_hidden_layers", w));
  const double patch = static_cast<double>(require_positive(v, "patch_size", w));
  const double image = static_cast<double>(require_positive(v, "image_size", w));
  const double channels = static_cast<double>(optional_positive(v, "num_channels", w, 3));
  const double grid = std::floor(image / patch) * std::floor(image / patch);
  const double layer = 4 * (h * h + h) + 2 * h * inter + inter + h + 4 * h;
  const double text = static_cast<double>(text_hidden);
  if (is_gemma3(arch)) {
    return layers * layer + (channels * patch * patch * h + h) + grid * h + 2 * h + h * text + h;
  }
  const double in = static_cast<double>(require_positive(v, "projector_input_dim", w));
  const double out = static_cast<double>(require_positive(v, "projector_output_dim", w));
  const double vision_out = static_cast<double>(require_positive(v, "vision_output_dim", w));
  return layers * layer + channels * patch * patch * h + h + (grid + 1) * h + 4 * h + inter * in +
         in * out + vision_out * text;
}

void parse_mla(const json& j, const std::string& where, ModelSpec& m) {
  if (!j.contains("kv_lora_rank") || j["kv_lora_rank"].is_null()) return;
  ModelSpec::Mla& a = m.mla;
  a.kv_lora_rank = require_positive(j, "kv_lora_rank", where);
  a.q_lora_rank = j.contains("q_lora_rank") && !j["q_lora_rank"].is_null()
                      ? require_positive(j, "q_lora_rank", where)
                      : 0;
  a.qk_nope_head_dim = require_positive(j, "qk_nope_head_dim", where);
  a.qk_rope_head_dim = require_positive(j, "qk_rope_head_dim", where);
  a.v_head_dim = require_positive(j, "v_head_dim", where);
  m.num_kv_heads = m.num_heads;  // decompressed K/V: one per query head
  m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
}

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

int64_t count_dense_layers(const json& j, const std::string& where, const ModelSpec& m) {
  const int64_t first_dense = optional_count(j, "first_k_dense_replace", where, 0);
  const int64_t freq = optional_positive(j, "moe_layer_freq", where, 1);
  // Llama-4's interleave_moe_layer_step places its MoE layers as decoder_sparse_step does.
  const int64_t step = optional_positive(
      j, "decoder_sparse_step", where, optional_positive(j, "interleave_moe_layer_step", where, 1));
  std::vector<int64_t> mlp_only;
  if (j.contains("mlp_only_layers") && !j["mlp_only_layers"].is_null()) {
    mlp_only = require_field<std::vector<int64_t>>(j, "mlp_only_layers", where);
  }
  int64_t dense = 0;
  for (int64_t l = 0; l < m.num_layers; ++l) {
    const bool only = std::find(mlp_only.begin(), mlp_only.end(), l) != mlp_only.end();
    const bool moe = l >= first_dense && l % freq == 0 && !only && (l + 1) % step == 0;
    if (!moe) ++dense;
  }
  if (dense == m.num_layers) {
    throw ConfigError(where +
                      ": every layer is dense by first_k_dense_replace / moe_layer_freq / "
                      "decoder_sparse_step / mlp_only_layers, yet the model declares experts");
  }
  return dense;
}

}  // namespace servesim::models
