// ModelSpec loading from HuggingFace config.json fields, and the parameter / KV arithmetic of
// REFERENCE.md §4.
#include "models/model_spec.h"

#include <algorithm>
#include <cmath>
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

// torch_dtype (or "dtype", its name in transformers >= 4.56): the checkpoint's dtype.
std::string checkpoint_dtype_of(const json& j, const std::string& where) {
  std::string key = "torch_dtype";
  if (!j.contains(key) || j[key].is_null()) key = "dtype";
  const auto dtype = optional_field<std::string>(j, key, where, "bfloat16");
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "float32") return dtype;
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

bool is_gemma3(const std::string& arch) {
  return arch == "Gemma3ForCausalLM" || arch == "Gemma3ForConditionalGeneration";
}
bool is_llama4(const std::string& arch) {
  return arch == "Llama4ForCausalLM" || arch == "Llama4ForConditionalGeneration";
}
bool is_qwen3_next(const std::string& arch) { return arch == "Qwen3NextForCausalLM"; }

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

// Sets each absent (or null) key of `j` to its configuration class's default: the keys a
// published config.json leaves out because transformers fills them in.
void fill_defaults(json& j, const std::vector<std::pair<std::string, json>>& defaults) {
  for (const auto& [key, value] : defaults) {
    if (!j.contains(key) || j[key].is_null()) j[key] = value;
  }
}

// Gemma3TextConfig's defaults (transformers models/gemma3/configuration_gemma3.py): the
// published Gemma-3 4B config.json gives only hidden_size, intermediate_size and
// num_hidden_layers of its text model.
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

// Gemma-3's sliding layers: layer_types when given, else sliding_window_pattern P (layer i
// slides unless (i + 1) % P == 0: five of every six), as Gemma3TextConfig derives layer_types
// and vLLM's gemma3.py picks the sliding layers.
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

// Llama-4's text model (vLLM llama4.py): num_local_experts routed experts and one shared expert,
// both intermediate_size wide, on the layers with (layer + 1) % interleave_moe_layer_step == 0;
// the other layers are dense, intermediate_size_mlp wide. The RoPE layers (no_rope_layers[i] == 1;
// by default all but every no_rope_layer_interval-th, Llama4TextConfig) use chunked local
// attention.
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

// Qwen3-Next (vLLM qwen3_next.py): Gated DeltaNet layers (layer_types "linear_attention", or all
// but every full_attention_interval-th layer), gated full attention with q/k norms on the rest.
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

// The vision encoder a ...ForConditionalGeneration checkpoint carries, from vision_config.
// Gemma-3 (vLLM gemma3_mm.py: SiglipVisionModel without head, Gemma3MultiModalProjector):
// per layer q/k/v/o and fc1/fc2 with biases and two LayerNorms; a patch convolution with bias,
// (image/patch)² position embeddings, a post LayerNorm; the projector's [vision, text] matrix and
// its RMSNorm. Llama-4 (vLLM mllama4.py): the same layers, a bias-free unfold patch projection,
// a class embedding, (image/patch)² + 1 position embeddings, pre and post LayerNorms, the
// pixel-shuffle adapter (intermediate_size → projector_input_dim → projector_output_dim, no bias)
// and the projector [vision_output_dim, text hidden].
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

// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): kv_lora_rank and its companions.
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

// A non-negative integer field, `fallback` when absent or null.
int64_t optional_count(const json& j, const std::string& key, const std::string& where,
                       int64_t fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const auto v = require_field<int64_t>(j, key, where);
  if (v < 0) {
    throw ConfigError(where + ": field '" + key + "' must be >= 0 (value " + std::to_string(v) +
                      ")");
  }
  return v;
}

// Which layers of an MoE model are dense, as vLLM's model files decide it:
// DeepSeek-V2/V3 (deepseek_v2.py): MoE when layer >= first_k_dense_replace and layer %
// moe_layer_freq == 0; GLM-4.5 (glm4_moe.py): MoE when layer >= first_k_dense_replace;
// Qwen2/3-MoE (qwen3_moe.py): MoE when the layer is not in mlp_only_layers and (layer + 1) %
// decoder_sparse_step == 0.
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

// Bits per weight of an integer checkpoint: `bits` plus a 16-bit scale and (asymmetric) a
// `bits`-wide zero point per group of `group` weights (group <= 0: per output channel, whose
// scales are negligible per weight).
double int_weight_bits(int bits, int group, bool asymmetric) {
  if (group <= 0) return bits;
  return bits + (16.0 + (asymmetric ? bits : 0)) / group;
}

// The integer weight-only formats vLLM serves with Marlin kernels (w4a16 / w8a16): AWQ
// (AWQConfig: bits, group_size, zero_point), GPTQ (GPTQConfig: bits, group_size, sym) and
// compressed-tensors groups with integer weights and no quantized activations
// (CompressedTensorsWNA16). Sets m's format and bits; false when `q` is none of them.
bool read_int_weights(const json& q, const std::string& method, const std::string& where,
                      ModelSpec& m) {
  int bits = 0, group = 0;
  bool asym = false;
  if (method == "awq" || method == "gptq") {
    bits = q.value("bits", q.value("w_bit", 0));
    group = q.value("group_size", q.value("q_group_size", 128));
    asym = method == "awq" ? q.value("zero_point", true) : !q.value("sym", true);
  } else if (method == "compressed-tensors" && q.contains("config_groups") &&
             q["config_groups"].is_object() && !q["config_groups"].empty()) {
    for (const auto& [name, g] : q["config_groups"].items()) {
      if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object()) return false;
      const json& w = g["weights"];
      const bool act = g.contains("input_activations") && !g["input_activations"].is_null();
      if (act || w.value("type", std::string()) != "int") return false;
      const int b = w.value("num_bits", 0);
      if (bits != 0 && b != bits) return false;
      bits = b;
      group = w.contains("group_size") && w["group_size"].is_number_integer()
                  ? w["group_size"].get<int>()
                  : 0;
      asym = !w.value("symmetric", true);
    }
  } else {
    return false;
  }
  if (bits != 4 && bits != 8) {
    throw ConfigError(where + ": quantization_config (quant_method '" + method + "') has " +
                      std::to_string(bits) +
                      "-bit weights; servesim models 4- and 8-bit integer "
                      "weights");
  }
  m.checkpoint_quantization = bits == 4 ? "w4a16" : "w8a16";
  m.checkpoint_weight_bits = int_weight_bits(bits, group, asym);
  m.checkpoint_quant_method = method;
  return true;
}

// quantization_config -> the checkpoint's weight format, by vLLM's quantization methods.
std::string checkpoint_format(const json& j, const std::string& where, ModelSpec& m) {
  if (!j.contains("quantization_config") || !j["quantization_config"].is_object()) return "";
  const json& q = j["quantization_config"];
  const auto method = optional_field<std::string>(q, "quant_method", where, "");
  // mxfp4 (openai/gpt-oss config.json): vLLM's Mxfp4Config quantizes only the FusedMoE layers
  // (modules_to_not_convert lists self_attn, the router, embed_tokens and lm_head).
  if (method == "mxfp4") return "mxfp4";
  // fp8 (DeepSeek-V3/R1: e4m3, weight_block_size [128, 128], dynamic activations; vLLM's
  // Fp8Config), modelopt FP8 (quant_algo "FP8"), compressed-tensors float 8-bit weights.
  if (method == "fp8") return "fp8";
  if (method == "modelopt" && optional_field<std::string>(q, "quant_algo", where, "") == "FP8") {
    return "fp8";
  }
  if (method == "compressed-tensors" && q.contains("config_groups") &&
      q["config_groups"].is_object() && !q["config_groups"].empty()) {
    bool all_fp8 = true;
    for (const auto& [group, g] : q["config_groups"].items()) {
      const json w = g.is_object() && g.contains("weights") ? g["weights"] : json();
      all_fp8 = all_fp8 && w.is_object() && w.value("num_bits", 0) == 8 &&
                w.value("type", std::string()) == "float";
    }
    if (all_fp8) return "fp8";
  }
  if (read_int_weights(q, method, where, m)) return m.checkpoint_quantization;
  throw ConfigError(where + ": quantization_config (quant_method '" + method +
                    "') is not modelled; servesim reads fp8 (block or per-tensor), modelopt FP8, "
                    "compressed-tensors FP8, 4/8-bit integer weights (AWQ, GPTQ, "
                    "compressed-tensors W4A16/W8A16) and mxfp4 checkpoints (give the unquantized "
                    "config.json with --quantization to model another format's weight bytes)");
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

// Parameters of every decoder layer with `experts` routed experts counted per MoE layer
// (REFERENCE.md §4): attention, the dense or MoE MLP, the norms.
double decoder_params(const ModelSpec& m, int64_t experts) {
  const double layers = static_cast<double>(m.num_layers);
  const double moe_layers = static_cast<double>(m.num_moe_layers());
  const double linear = static_cast<double>(m.linear.num_layers);
  return (layers - linear) * m.attention_params_per_rank(1) +
         linear * m.linear.params_per_layer(m.hidden_size) + layers * m.norm_params_per_layer() +
         (layers - moe_layers) * m.dense_mlp_params() + moe_layers * m.moe_mlp_params(experts);
}

}  // namespace

double ModelSpec::norm_params_per_layer() const {
  return static_cast<double>(hidden_norms_per_layer * hidden_size) +
         (qk_norm_weights ? 2.0 * static_cast<double>(head_dim) : 0.0);
}

double ModelSpec::LinearAttention::params_per_layer(int64_t hidden) const {
  const double h = static_cast<double>(hidden);
  const double key = static_cast<double>(num_key_heads * key_head_dim);
  const double value = static_cast<double>(num_value_heads * value_head_dim);
  const double nv = static_cast<double>(num_value_heads);
  return h * (2 * key + 2 * value) + h * 2 * nv + (2 * key + value) * conv_kernel + 2 * nv +
         static_cast<double>(value_head_dim) + value * h;
}

double ModelSpec::embedding_param_count() const {
  return static_cast<double>(vocab_size) * static_cast<double>(hidden_size) *
         (tie_word_embeddings ? 1.0 : 2.0);
}

double ModelSpec::attention_params_per_rank(int tp) const {
  const double h = static_cast<double>(hidden_size);
  const double t = tp;
  if (is_mla()) {
    // vLLM DeepseekV2MLAAttention: q_a_proj [h, q_lora] + q_a_layernorm, kv_a_proj_with_mqa
    // [h, kv_lora + rope] + kv_a_layernorm (replicated on every rank); q_b_proj (or q_proj)
    // [q_lora, H·(nope + rope)], kv_b_proj [kv_lora, H·(nope + v)], o_proj [H·v, h] (split).
    const double heads = static_cast<double>(num_heads) / t;
    const double qk = static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    const double lora = static_cast<double>(mla.kv_lora_rank);
    double p = h * static_cast<double>(mla.latent_width()) + lora;
    if (mla.q_lora_rank > 0) {
      const double ql = static_cast<double>(mla.q_lora_rank);
      p += h * ql + ql + ql * heads * qk;
    } else {
      p += h * heads * qk;
    }
    p += lora * heads * static_cast<double>(mla.qk_nope_head_dim + mla.v_head_dim);
    return p + heads * static_cast<double>(mla.v_head_dim) * h;
  }
  const double q = static_cast<double>(num_heads * head_dim) / t;
  // ceil(n_kv / tp), at least 1: with tp > n_kv each KV head is replicated on tp / n_kv ranks.
  const double kv =
      static_cast<double>(std::max<int64_t>(1, (num_kv_heads + tp - 1) / tp) * head_dim);
  double p = h * q * (attention_output_gate ? 2 : 1) + 2 * h * kv + q * h;
  if (qkv_bias) p += q + 2 * kv;
  return p;
}

double ModelSpec::dense_mlp_params() const {
  return 3.0 * static_cast<double>(hidden_size) * static_cast<double>(intermediate_size);
}

double ModelSpec::moe_mlp_params(int64_t experts) const {
  const double h = static_cast<double>(hidden_size);
  double p = 3 * h * static_cast<double>(moe_intermediate_size) * static_cast<double>(experts);
  p += h * static_cast<double>(num_experts);  // router
  p += 3 * h * static_cast<double>(shared_expert_intermediate_size);
  if (shared_expert_gate) p += h;
  return p;
}

double ModelSpec::param_count() const {
  return decoder_params(*this, num_experts) + embedding_param_count() +
         static_cast<double>(hidden_size) + encoder_params;  // + final norm, vision encoder
}

double ModelSpec::active_param_count() const {
  if (!is_moe()) return param_count() - encoder_params;
  return decoder_params(*this, experts_per_token) + embedding_param_count() +
         static_cast<double>(hidden_size);
}

int64_t ModelSpec::kv_bytes_per_token(int kv_dtype_bytes) const {
  return kv_bytes_per_token_per_rank(kv_dtype_bytes, 1);
}

int64_t ModelSpec::kv_bytes_per_token_per_rank(int kv_dtype_bytes, int tp) const {
  if (tp < 1) {
    throw ConfigError("tensor-parallel size must be >= 1 (got " + std::to_string(tp) + ")");
  }
  // MLA: one latent vector per token and layer, the same on every rank (vLLM MLAAttentionSpec:
  // num_kv_heads 1, head_size kv_lora_rank + qk_rope_head_dim).
  if (is_mla()) return num_layers * mla.latent_width() * kv_dtype_bytes;
  // ceil(n_kv / tp), at least 1: with tp > n_kv each KV head is replicated on tp / n_kv ranks.
  const int64_t heads_per_rank = std::max<int64_t>(1, (num_kv_heads + tp - 1) / tp);
  // Linear-attention layers (Qwen3-Next) keep a per-sequence state, not a per-token KV.
  return 2 * (num_layers - linear.num_layers) * heads_per_rank * head_dim * kv_dtype_bytes;
}

void apply_dtype(ModelSpec& m, const std::string& dtype) {
  if (dtype == "auto" || dtype == "bfloat16" || dtype == "float16" || dtype == "half") {
    m.dtype_bytes = 2;  // "auto": a 16-bit checkpoint as it is, a float32 one downcast
  } else if (dtype == "float32" || dtype == "float") {
    m.dtype_bytes = 4;
  } else {
    throw ConfigError("--dtype: '" + dtype +
                      "' is not supported; expected auto, bfloat16, float16 (half) or float32 "
                      "(float)");
  }
}

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
