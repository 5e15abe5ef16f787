// The config.json fields of one architecture family or feature, read into a ModelSpec whose
// common fields (hidden size, layers, heads, experts) are already set (model_config.cpp calls
// them in its order). Each follows the family's vLLM model file; a malformed field throws
// ConfigError naming the file (`where`) and the field.
#ifndef SERVESIM_MODELS_MODEL_FAMILIES_H_
#define SERVESIM_MODELS_MODEL_FAMILIES_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/model_spec.h"

namespace servesim::models {

bool is_gemma3(const std::string& arch);
bool is_llama4(const std::string& arch);
bool is_qwen3_next(const std::string& arch);

// Gemma3TextConfig's defaults (transformers models/gemma3/configuration_gemma3.py) for the keys
// absent or null in `t`: the published Gemma-3 4B config.json gives only hidden_size,
// intermediate_size and num_hidden_layers of its text model.
void fill_gemma3_defaults(nlohmann::json& t);

// Gemma-3's norms and sliding layers: layer_types when given (parse_sliding_layers reads them),
// else sliding_window_pattern P (layer i slides unless (i + 1) % P == 0: five of every six), as
// Gemma3TextConfig derives layer_types and vLLM's gemma3.py picks the sliding layers.
void parse_gemma3_layers(const nlohmann::json& t, const std::string& where, ModelSpec& m);

// Llama-4's text model (vLLM llama4.py): num_local_experts routed experts and one shared expert,
// both intermediate_size wide, on the layers with (layer + 1) % interleave_moe_layer_step == 0;
// the other layers are dense, intermediate_size_mlp wide. The RoPE layers (no_rope_layers[i] ==
// 1; by default all but every no_rope_layer_interval-th, Llama4TextConfig) use chunked local
// attention.
void parse_llama4(const nlohmann::json& t, const std::string& where, ModelSpec& m);

// Qwen3-Next (vLLM qwen3_next.py): Gated DeltaNet layers (layer_types "linear_attention", or all
// but every full_attention_interval-th layer), gated full attention with q/k norms on the rest.
void parse_qwen3_next(const nlohmann::json& t, const std::string& where, ModelSpec& m);

// The parameters of the vision encoder a ...ForConditionalGeneration checkpoint carries, from
// vision_config. Gemma-3 (vLLM gemma3_mm.py: SiglipVisionModel without head,
// Gemma3MultiModalProjector): per layer q/k/v/o and fc1/fc2 with biases and two LayerNorms; a
// patch convolution with bias, (image/patch)² position embeddings, a post LayerNorm; the
// projector's [vision, text] matrix and its RMSNorm. Llama-4 (vLLM mllama4.py): the same layers,
// a bias-free unfold patch projection, a class embedding, (image/patch)² + 1 position
// embeddings, pre and post LayerNorms, the pixel-shuffle adapter (intermediate_size →
// projector_input_dim → projector_output_dim, no bias) and the projector [vision_output_dim,
// text hidden].
double encoder_params(const nlohmann::json& j, const std::string& arch, int64_t text_hidden,
                      const std::string& where);

// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): kv_lora_rank and its companions; no
// change without kv_lora_rank.
void parse_mla(const nlohmann::json& j, const std::string& where, ModelSpec& m);

// layer_types (transformers >= 4.53: one "full_attention" / "sliding_attention" per layer, as
// gpt-oss and Gemma-3 configs carry) with sliding_window. vLLM builds a SlidingWindowSpec for each
// "sliding_attention" layer and a FullAttentionSpec for the others (vllm/v1/kv_cache_interface.py).
// Without layer_types, a "mistral" config's sliding_window (Mistral-7B-v0.1: 4096) is vLLM's
// model-level window: ModelConfig passes it to CacheConfig.sliding_window (unless
// use_sliding_window is false or --disable-sliding-window) and every Attention layer without a
// per-layer window falls back to it (vllm/attention/layer.py). Other model types without
// layer_types keep full attention here (docs/cost_model.md §3.3.1 says why).
void parse_sliding_layers(const nlohmann::json& j, const std::string& where, ModelSpec& m);

// Which layers of an MoE model are dense, as vLLM's model files decide it:
// DeepSeek-V2/V3 (deepseek_v2.py): MoE when layer >= first_k_dense_replace and layer %
// moe_layer_freq == 0; GLM-4.5 (glm4_moe.py): MoE when layer >= first_k_dense_replace;
// Qwen2/3-MoE (qwen3_moe.py): MoE when the layer is not in mlp_only_layers and (layer + 1) %
// decoder_sparse_step == 0. Throws when every layer would be dense.
int64_t count_dense_layers(const nlohmann::json& j, const std::string& where, const ModelSpec& m);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MODEL_FAMILIES_H_
