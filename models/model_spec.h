// ModelSpec: a decoder-only transformer's architecture, read from HuggingFace config.json fields.
//
// Dense Llama-style (SwiGLU) and MoE (Mixtral, Qwen-MoE) models. Parameter counts and KV bytes
// per token follow REFERENCE.md §4.
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
  int dtype_bytes = 2;                  // torch_dtype bf16/fp16 -> 2, float32 -> 4
  // The checkpoint's own weight format, from config.json quantization_config.quant_method: "" (all
  // weights in torch_dtype) or "mxfp4" (gpt-oss: the MoE experts in MXFP4, every other weight in
  // torch_dtype; see kMxfp4BytesPerWeight). Other quant_methods are not read: give --quantization.
  std::string checkpoint_quantization;

  // MoE (0 experts = dense).
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;     // per routed expert (Qwen-MoE); = intermediate for Mixtral
  int64_t shared_expert_intermediate_size = 0;
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

  bool is_moe() const { return num_experts > 0; }
  // Total parameters (all experts). REFERENCE.md §4 formula.
  double param_count() const;
  // Parameters touched per token (top-k experts only).
  double active_param_count() const;
  // Parameters of the embedding + LM head (kept in 16-bit under fp8 weight quantization).
  double embedding_param_count() const;
  // KV cache bytes per token for the whole model (all layers, all KV heads).
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

std::vector<std::string> model_catalog_names();

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MODEL_SPEC_H_
