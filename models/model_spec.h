// ModelSpec: a decoder-only transformer's architecture, read from HuggingFace config.json fields.
//
// Dense Llama-style (SwiGLU) models, MoE models (Mixtral, Qwen2/3-MoE, gpt-oss, DeepSeek-V2/V3,
// Kimi-K2, GLM-4.5, Llama-4, Qwen3-Next), multi-head latent attention (DeepSeek, Kimi), Gemma-3's
// interleaved sliding-window layers, Qwen3-Next's Gated DeltaNet layers, and the language model
// of multimodal configs (Gemma-3, Llama-4: text_config) with their vision encoder's weights.
// Architectures and fields that change the model and are not modelled are refused by name
// (docs/models.md). Parameter counts and KV bytes per token follow REFERENCE.md §4 and vLLM's
// model files.
#ifndef SERVESIM_MODELS_MODEL_SPEC_H_
#define SERVESIM_MODELS_MODEL_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_name.h"

namespace servesim::models {

// Bytes per weight of OCP Microscaling MXFP4 (OCP MX spec v1.0 §5.3): blocks of 32 E2M1 values
// (4 bits each) sharing one E8M0 scale (8 bits) = (32·4 + 8) / 32 = 4.25 bits = 0.53125 bytes.
inline constexpr double kMxfp4BytesPerWeight = (32.0 * 4.0 + 8.0) / 32.0 / 8.0;

struct ModelSpec {
  std::string name;  // catalog name or the config file's path
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // dense MLP width (per expert for Mixtral)
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // = num_heads when absent (MHA)
  int64_t head_dim = 0;      // = hidden/heads when absent
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;
  int64_t max_position_embeddings = 0;  // the default --max-model-len
  // Bytes per weight and activation element as vLLM serves them: 2 for a bfloat16 or float16
  // checkpoint, and 2 for a float32 one too (--dtype auto downcasts it; apply_dtype).
  int dtype_bytes = 2;
  std::string checkpoint_dtype = "bfloat16";  // config.json torch_dtype (or dtype), as written
  // The checkpoint's own weight format, from config.json quantization_config: "" (all weights in
  // torch_dtype), "mxfp4" (gpt-oss: the MoE experts in MXFP4, every other weight in torch_dtype;
  // see kMxfp4BytesPerWeight) or "fp8" (quant_method fp8, e.g. DeepSeek's 128×128 block-scaled
  // e4m3; modelopt or compressed-tensors FP8), or "w4a16" / "w8a16" (AWQ, GPTQ and
  // compressed-tensors integer weights with 16-bit activations: vLLM's Marlin kernels dequantize
  // in the GEMM), stored at checkpoint_weight_bits per weight (the integer plus its group's
  // scale and zero point). Other formats are refused by name.
  std::string checkpoint_quantization;
  double checkpoint_weight_bits = 0;  // w4a16 / w8a16 only
  // quantization_config's quant_method for w4a16 / w8a16 ("awq", "gptq", "compressed-tensors"),
  // which names the --quantization values that keep the checkpoint's Marlin kernels.
  std::string checkpoint_quant_method;

  // The `architectures[0]` of config.json ("" when the file has none: read as a Llama-style
  // dense or Mixtral/Qwen-style MoE model).
  std::string architecture;

  // Multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2: kv_lora_rank in config.json). vLLM
  // caches one latent vector of kv_lora_rank + qk_rope_head_dim elements per token and layer,
  // the same on every TP rank (vllm/model_executor/layers/mla.py; MLAAttentionSpec in
  // vllm/v1/kv_cache_interface.py). With MLA, num_kv_heads = num_heads and head_dim =
  // qk_nope_head_dim + qk_rope_head_dim (the query/key width of the decompressed prefill).
  struct Mla {
    int64_t q_lora_rank = 0;  // 0: no query compression (DeepSeek-V2-Lite)
    int64_t kv_lora_rank = 0;
    int64_t qk_nope_head_dim = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
    int64_t latent_width() const { return kv_lora_rank + qk_rope_head_dim; }
  };
  Mla mla;
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // Attention parameters of one layer held by one TP rank (heads split, MLA's down projections
  // and KV heads below TP replicated), biases included.
  double attention_params_per_rank(int tp) const;

  // MoE (0 experts = dense).
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;  // per routed expert (Qwen-MoE); = intermediate for Mixtral
  int64_t shared_expert_intermediate_size = 0;  // all shared experts together (n_shared × width)
  bool shared_expert_gate =
      false;  // Qwen2/Qwen3-Next: a sigmoid gate [hidden, 1] on the shared expert
  // Layers of an MoE model whose MLP is dense (intermediate_size wide): DeepSeek/GLM's
  // first_k_dense_replace and moe_layer_freq, Qwen-MoE's decoder_sparse_step and mlp_only_layers.
  int64_t num_dense_layers = 0;
  int64_t num_moe_layers() const { return is_moe() ? num_layers - num_dense_layers : 0; }
  // DeepSeek's multi-token-prediction modules (num_nextn_predict_layers): not counted in
  // num_layers or the parameters; vLLM loads them only as a speculative-decoding drafter.
  int64_t num_mtp_layers = 0;
  // Parameters of one layer's MLP on one TP rank: the dense MLP, or (moe) the routed experts
  // (all of them, or `experts` of them), router, shared experts and gate.
  double dense_mlp_params() const;
  double moe_mlp_params(int64_t experts) const;
  // Sliding-window attention (gpt-oss, Gemma-2/3 style): `num_sliding_layers` of the num_layers
  // layers attend to the last `sliding_window` tokens only (a query at position p sees keys
  // p − W + 1 … p, as vLLM's kernels and its SlidingWindowManager count them). Read from
  // config.json's layer_types ("sliding_attention" entries) with its sliding_window; without
  // layer_types, a "mistral" config's sliding_window applies to every layer, as in vLLM
  // (Mistral-7B-v0.1: 4,096), and other configs have no sliding layers whatever their
  // sliding_window says (Qwen2/3 set use_sliding_window false; docs/cost_model.md §3.3.1).
  // 0 / 0 = full attention everywhere.
  int64_t sliding_window = 0;
  int64_t num_sliding_layers = 0;
  int64_t num_full_attention_layers() const { return num_layers - num_sliding_layers; }
  // The window of the sliding-window layers; 0 when the model has none.
  int64_t attention_window() const { return num_sliding_layers > 0 ? sliding_window : 0; }

  // Weights of one decoder layer beyond attention and MLP: `hidden_norms_per_layer` RMSNorms of
  // hidden_size (2 for Llama-style layers; 4 for Gemma-2/3's pre- and post-attention and
  // feed-forward norms) and, with qk_norm_weights, the per-head q_norm and k_norm of head_dim
  // (Gemma-3, Qwen3-Next's full-attention layers).
  int64_t hidden_norms_per_layer = 2;
  bool qk_norm_weights = false;
  double norm_params_per_layer() const;
  // Qwen3-Next's gated attention (attn_output_gate): q_proj also produces a per-head output
  // gate, 2 × H·head_dim wide.
  bool attention_output_gate = false;

  // Llama-4's chunked local attention: `num_chunked_layers` layers (those with RoPE; every 4th
  // layer is NoPE and global) attend within their attention_chunk_size-token chunk. vLLM's KV
  // cache holds them as full attention by default (the hybrid KV-cache manager is disabled for
  // chunked local attention, vllm/config/vllm.py), and so does servesim; their attention compute
  // is charged as full attention (docs/models.md: exact up to attention_chunk_size tokens of
  // context, an upper bound beyond).
  int64_t attention_chunk_size = 0;
  int64_t num_chunked_layers = 0;

  // Qwen3-Next's Gated DeltaNet linear-attention layers (layer_types "linear_attention", or all
  // but every full_attention_interval-th layer): a constant-size recurrent state per sequence
  // instead of a KV cache (models/linear_attention.h: state, hybrid KV layout, step work).
  struct LinearAttention {
    int64_t num_layers = 0;
    int64_t num_key_heads = 0;
    int64_t key_head_dim = 0;
    int64_t num_value_heads = 0;
    int64_t value_head_dim = 0;
    int64_t conv_kernel = 0;
    // vLLM Qwen3NextGatedDeltaNet: in_proj_qkvz [h, 2·key + 2·value], in_proj_ba [h, 2·nv],
    // conv1d [2·key + value, kernel], dt_bias and A_log [nv], norm [value_head_dim],
    // out_proj [value, h].
    double params_per_layer(int64_t hidden) const;
  };
  LinearAttention linear;

  // The multimodal encoder vLLM loads with a ...ForConditionalGeneration checkpoint (Gemma-3's
  // SigLIP tower and projector, Llama-4's vision model, adapter and projector), from
  // vision_config. Counted in param_count() and the weights, not in active_param_count(): text
  // requests do not run it.
  double encoder_params = 0;

  bool is_moe() const { return num_experts > 0; }
  // Total parameters (all experts). REFERENCE.md §4 formula.
  double param_count() const;
  // Parameters touched per token (top-k experts only).
  double active_param_count() const;
  // Parameters of the embedding + LM head (kept in 16-bit under fp8 weight quantization).
  double embedding_param_count() const;
  // KV cache bytes per token for the whole model (all attention layers, all KV heads; linear-
  // attention layers hold a per-sequence state instead: models/linear_attention.h).
  int64_t kv_bytes_per_token(int kv_dtype_bytes) const;
  // KV bytes per token held by one tensor-parallel rank (KV heads split over TP, replicated when
  // TP > num_kv_heads).
  int64_t kv_bytes_per_token_per_rank(int kv_dtype_bytes, int tp) const;
};

// Loads the model a --model value names: a catalog name, a Hugging Face id the catalog records,
// a config.json or a snapshot folder holding one (resolve_model, models/model_name.h). Throws
// ConfigError naming the file and field on bad input, and the nearest catalog entries for an
// unknown id.
ModelSpec load_model(const std::string& name_or_path);
// The same for an already resolved value. ModelSpec::name is source.name().
ModelSpec load_model(const ModelSource& source);

// Reads a config.json by its path, as load_model does, named by that path (parameter
// arithmetic in tests and tools). Malformed input throws ConfigError as in load_model.
ModelSpec load_architecture(const std::string& config_path);

// vLLM's --dtype: sets m.dtype_bytes to the width vLLM serves the model in (vllm/config/model.py
// _get_and_verify_dtype). "auto": the checkpoint's dtype, except that a float32 checkpoint is
// downcast to the platform's first supported dtype, bfloat16 on Ampere and later (float16 before
// it; vllm/platforms/cuda.py supported_dtypes): 2 bytes either way. "bfloat16", "float16" or
// "half": 2 bytes; "float32" or "float": 4 (an upcast is allowed). Throws ConfigError naming
// --dtype for anything else.
void apply_dtype(ModelSpec& m, const std::string& dtype);

std::vector<std::string> model_catalog_names();

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MODEL_SPEC_H_
