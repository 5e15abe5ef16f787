// The frontier models of models/catalog (DeepSeek-V3/R1, Kimi-K2, Qwen3-MoE, GLM-4.5-Air,
// gpt-oss-20b) read from their published config.json: parameter counts against the publishers'
// figures, KV bytes per token against vLLM's formula per attention kind, dense/MoE layers,
// checkpoint formats, and the refusals of what is not modelled (docs/models.md).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/deployment.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "tests/test_paths.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

std::string write_temp(const std::string& file_name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_frontier_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / file_name;
  std::ofstream(p) << text;
  return p.string();
}

std::string frontier_config(const std::string& file) {
  return (fs::path(SERVESIM_TEST_DATA_DIR) / "frontier_configs" / file).string();
}

// The parameters a token's forward pass multiplies: active_param_count() less the input
// embedding, a table lookup (the convention of DeepSeek's README_WEIGHTS, "36.6B (including 0.9B
// for the output Head)", of OpenAI's gpt-oss model card and of Kimi-K2's report).
double activated_without_lookup(const ModelSpec& m) {
  return m.active_param_count() - static_cast<double>(m.vocab_size * m.hidden_size);
}

TEST_CASE("DeepSeek-V3/R1: MLA, 3 dense + 58 MoE layers, 671 B / 36.6 B, FP8 blocks", "[models]") {
  for (const std::string name : {"deepseek-v3", "deepseek-r1"}) {
    INFO(name);
    const ModelSpec m = load_model(name);
    CHECK(m.architecture == "DeepseekV3ForCausalLM");
    REQUIRE(m.is_mla());
    CHECK(m.mla.q_lora_rank == 1536);
    CHECK(m.mla.latent_width() == 576);
    CHECK(m.num_experts == 256);
    CHECK(m.experts_per_token == 8);
    CHECK(m.num_dense_layers == 3);
    CHECK(m.num_moe_layers() == 58);
    CHECK(m.shared_expert_intermediate_size == 2048);  // 1 shared expert x 2048
    CHECK_FALSE(m.shared_expert_gate);
    CHECK(m.num_mtp_layers == 1);
    CHECK(m.checkpoint_quantization == "fp8");
    // Published: "671B total parameters with 37B activated"; README_WEIGHTS: "Activation
    // parameters: 36.6B (including 0.9B for the output Head)".
    CHECK(m.param_count() == Approx(671e9).epsilon(0.01));
    CHECK(activated_without_lookup(m) == Approx(36.6e9).epsilon(0.01));
    // vLLM's MLA cache: 61 layers x (512 + 64) x 2 bytes, the same on every TP rank.
    CHECK(m.kv_bytes_per_token(2) == 61 * 576 * 2);
    CHECK(m.kv_bytes_per_token_per_rank(2, 1) == 70272);
    CHECK(m.kv_bytes_per_token_per_rank(2, 8) == 70272);
    CHECK(m.kv_bytes_per_token_per_rank(1, 8) == 35136);  // fp8 KV cache
  }
}

TEST_CASE("Kimi-K2: DeepSeek-V3's architecture with 64 heads and 384 experts", "[models]") {
  const ModelSpec m = load_model("kimi-k2");
  REQUIRE(m.is_mla());
  CHECK(m.num_heads == 64);
  CHECK(m.num_experts == 384);
  CHECK(m.num_dense_layers == 1);
  CHECK(m.num_mtp_layers == 0);
  CHECK(m.checkpoint_quantization == "fp8");
  // Published: "32 billion activated parameters and 1 trillion total parameters" — both rounded:
  // the config gives 1.026 T (the rounding of "1 trillion" is 2.6 %) and 31.7 B activated.
  CHECK(m.param_count() == Approx(1.026e12).epsilon(0.001));
  CHECK(activated_without_lookup(m) == Approx(32e9).epsilon(0.01));
  CHECK(m.kv_bytes_per_token_per_rank(2, 8) == 61 * 576 * 2);
}

TEST_CASE("Qwen3-MoE: every layer sparse, no shared expert, GQA KV", "[models]") {
  const ModelSpec big = load_model("qwen3-235b-a22b");
  CHECK_FALSE(big.is_mla());
  CHECK(big.num_dense_layers == 0);
  CHECK(big.num_experts == 128);
  CHECK(big.shared_expert_intermediate_size == 0);
  // Model card: "235B in total and 22B activated; Non-Embedding 234B". Qwen counts both
  // embedding matrices as activated and truncates: 22.19 B -> "22B".
  CHECK(big.param_count() == Approx(235e9).epsilon(0.01));
  CHECK(big.param_count() - big.embedding_param_count() == Approx(234e9).epsilon(0.01));
  CHECK(big.active_param_count() == Approx(22e9).epsilon(0.01));
  // 94 layers x 2 x 4 KV heads x 128 x 2 bytes; at TP 8 each rank keeps one (replicated) head.
  CHECK(big.kv_bytes_per_token_per_rank(2, 1) == 94 * 2 * 4 * 128 * 2);
  CHECK(big.kv_bytes_per_token_per_rank(2, 8) == 94 * 2 * 1 * 128 * 2);

  const ModelSpec small = load_model("qwen3-30b-a3b");
  // "30.5B in total and 3.3B activated; Non-Embedding 29.9B" (3.353 B truncated to 3.3).
  CHECK(small.param_count() == Approx(30.5e9).epsilon(0.01));
  CHECK(small.param_count() - small.embedding_param_count() == Approx(29.9e9).epsilon(0.01));
  CHECK(small.active_param_count() >= 3.3e9);
  CHECK(small.active_param_count() < 3.4e9);
}

TEST_CASE("GLM-4.5-Air: 1 dense + 45 MoE layers, 106 B / 12 B", "[models]") {
  const ModelSpec m = load_model("glm-4.5-air");
  CHECK(m.architecture == "Glm4MoeForCausalLM");
  CHECK(m.num_dense_layers == 1);
  CHECK(m.num_experts == 128);
  CHECK(m.shared_expert_intermediate_size == 1408);
  CHECK(m.qkv_bias);
  CHECK(m.num_mtp_layers == 1);
  // "106 billion total parameters and 12 billion active parameters" (without the MTP layer;
  // the active figure leaves out both embedding matrices: 12.18 B).
  CHECK(m.param_count() == Approx(106e9).epsilon(0.01));
  CHECK(m.active_param_count() - m.embedding_param_count() == Approx(12e9).epsilon(0.02));
  CHECK(m.kv_bytes_per_token_per_rank(2, 1) == 46 * 2 * 8 * 128 * 2);
}

TEST_CASE("gpt-oss-20b: 21 B / 3.6 B, MXFP4 experts", "[models]") {
  const ModelSpec m = load_model("gpt-oss-20b");
  CHECK(m.checkpoint_quantization == "mxfp4");
  CHECK(m.num_experts == 32);
  CHECK(m.num_sliding_layers == 12);
  // Model card: "21B parameters with 3.6B active parameters".
  CHECK(m.param_count() == Approx(21e9).epsilon(0.01));
  CHECK(activated_without_lookup(m) == Approx(3.6e9).epsilon(0.01));
  CHECK(activated_without_lookup(load_model("gpt-oss-120b")) == Approx(5.1e9).epsilon(0.01));
}

TEST_CASE("MLA closed forms on a small config", "[models]") {
  // 2 layers, hidden 64, 4 heads, q_lora 32, kv_lora 16, nope 8, rope 4, v 8, no experts.
  const std::string p = write_temp("mla.json", R"({"architectures": ["DeepseekV2ForCausalLM"],
      "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
      "max_position_embeddings": 512, "q_lora_rank": 32, "kv_lora_rank": 16,
      "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8})");
  const ModelSpec m = load_model(p);
  REQUIRE(m.is_mla());
  CHECK(m.head_dim == 12);
  // q_a 64x32 + norm 32 + q_b 32x(4x12) + kv_a 64x20 + norm 16 + kv_b 16x(4x16) + o (4x8)x64.
  const double attn = 64 * 32 + 32 + 32 * 48 + 64 * 20 + 16 + 16 * 64 + 32 * 64;
  CHECK(m.attention_params_per_rank(1) == attn);
  // At TP 2 the down projections stay whole, the up projections and o halve.
  CHECK(m.attention_params_per_rank(2) ==
        64 * 32 + 32 + 32 * 24 + 64 * 20 + 16 + 16 * 32 + 16 * 64);
  CHECK(m.param_count() == 2 * (attn + 3 * 64 * 128 + 2 * 64) + 2 * 100 * 64 + 64);
  CHECK(m.kv_bytes_per_token_per_rank(2, 1) == 2 * 20 * 2);
  CHECK(m.kv_bytes_per_token_per_rank(2, 4) == 2 * 20 * 2);
  // Without q_lora_rank (DeepSeek-V2-Lite): q_proj [64, 4 x 12] instead of q_a + q_b.
  const std::string lite = write_temp("mla_lite.json", R"({"hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100, "max_position_embeddings": 512, "q_lora_rank": null,
      "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8})");
  CHECK(load_model(lite).attention_params_per_rank(1) ==
        64 * 48 + 64 * 20 + 16 + 16 * 64 + 32 * 64);
}

TEST_CASE("dense layers of MoE models as vLLM's model files pick them", "[models]") {
  const std::string base = R"(, "num_hidden_layers": 8, "n_routed_experts": 4,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32)";
  auto dense_layers = [&](const std::string& extra) {
    const std::string cfg = R"({"hidden_size": 64, "intermediate_size": 256,
        "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 512)" +
                            base + extra + "}";
    return load_model(write_temp("moe_layers.json", cfg)).num_dense_layers;
  };
  CHECK(dense_layers("") == 0);
  CHECK(dense_layers(R"(, "first_k_dense_replace": 3)") == 3);
  // moe_layer_freq 2: layers 0, 2, 4, 6 are MoE (>= first_k_dense_replace 1: 2, 4, 6).
  CHECK(dense_layers(R"(, "first_k_dense_replace": 1, "moe_layer_freq": 2)") == 5);
  // Qwen-MoE: (layer + 1) % decoder_sparse_step == 0 and not in mlp_only_layers.
  CHECK(dense_layers(R"(, "decoder_sparse_step": 2)") == 4);
  CHECK(dense_layers(R"(, "mlp_only_layers": [0, 7])") == 2);
  CHECK_THROWS_WITH(dense_layers(R"(, "first_k_dense_replace": 8)"),
                    Contains("every layer is dense"));
}

TEST_CASE("checkpoint formats from quantization_config", "[models]") {
  CHECK(load_model("llama-3.1-70b-fp8").checkpoint_quantization == "fp8");  // modelopt FP8
  CHECK(load_model("llama-3.1-70b").checkpoint_quantization.empty());
  auto with_quant = [](const std::string& q) {
    return load_model(write_temp("quant.json",
                                 R"({"hidden_size": 64, "intermediate_size": 256,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
        "max_position_embeddings": 512, "quantization_config": )" +
                                     q + "}"));
  };
  CHECK(with_quant(R"({"quant_method": "fp8", "weight_block_size": [128, 128]})")
            .checkpoint_quantization == "fp8");
  CHECK(with_quant(R"({"quant_method": "compressed-tensors", "config_groups": {"group_0":
        {"weights": {"num_bits": 8, "type": "float"}}}})")
            .checkpoint_quantization == "fp8");
  CHECK_THROWS_WITH(with_quant(R"({"quant_method": "bitsandbytes", "load_in_4bit": true})"),
                    Contains("quantization_config (quant_method 'bitsandbytes') is not modelled"));
  // Integer weights with 16-bit activations: the integer plus a 16-bit scale (and, asymmetric, a
  // zero point of the same width) per group of group_size weights.
  const ModelSpec awq = with_quant(R"({"quant_method": "awq", "bits": 4, "group_size": 128,
        "zero_point": true, "version": "gemm"})");
  CHECK(awq.checkpoint_quantization == "w4a16");
  CHECK(awq.checkpoint_quant_method == "awq");
  CHECK(awq.checkpoint_weight_bits == 4 + (16.0 + 4) / 128);  // 4.15625, exact in binary
  const ModelSpec gptq = with_quant(R"({"quant_method": "gptq", "bits": 4, "group_size": 128,
        "sym": true, "desc_act": false})");
  CHECK(gptq.checkpoint_quantization == "w4a16");
  CHECK(gptq.checkpoint_weight_bits == 4 + 16.0 / 128);
  const ModelSpec gptq8 = with_quant(R"({"quant_method": "gptq", "bits": 8, "group_size": -1,
        "sym": true})");
  CHECK(gptq8.checkpoint_quantization == "w8a16");
  CHECK(gptq8.checkpoint_weight_bits == 8);  // per output channel: the scales are negligible
  const ModelSpec ct = with_quant(R"({"quant_method": "compressed-tensors", "config_groups":
        {"group_0": {"weights": {"num_bits": 4, "type": "int", "symmetric": true,
         "group_size": 128}, "input_activations": null}}})");
  CHECK(ct.checkpoint_quantization == "w4a16");
  CHECK(ct.checkpoint_weight_bits == 4 + 16.0 / 128);
  CHECK_THROWS_WITH(with_quant(R"({"quant_method": "awq", "bits": 3})"), Contains("3-bit weights"));
  // Integer weights AND activations (W8A8 int8) run other kernels: refused by name.
  CHECK_THROWS_WITH(with_quant(R"({"quant_method": "compressed-tensors", "config_groups":
        {"group_0": {"weights": {"num_bits": 8, "type": "int"},
         "input_activations": {"num_bits": 8, "type": "int"}}}})"),
                    Contains("'compressed-tensors'"));

  // The deployment stores and moves the weights at those bits; they compute in bf16.
  Deployment d;
  d.model = awq;
  CHECK(d.weight_bytes_per_param() == 4.15625 / 8);
  CHECK(d.integer_weights());
  CHECK(d.linear_compute_dtype() == "bf16");
}

TEST_CASE("architectures and fields that are not modelled are refused by name", "[models]") {
  CHECK_THROWS_WITH(
      load_model(write_temp("falcon_h1.json", R"({"architectures": ["FalconH1ForCausalLM"]})")),
      Contains("architecture 'FalconH1ForCausalLM' is not modelled") &&
          Contains("DeepseekV3ForCausalLM") && Contains("Qwen3NextForCausalLM") &&
          Contains("docs/models.md"));
  // No architectures: the fields decide.
  const std::string cfg = R"({"hidden_size": 64, "intermediate_size": 256,
      "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100,
      "max_position_embeddings": 512, "full_attention_interval": 4})";
  CHECK_THROWS_WITH(load_model(write_temp("hybrid.json", cfg)),
                    Contains("field 'full_attention_interval' (hybrid linear-attention layers"));
  const std::string mm = R"({"text_config": {"hidden_size": 64}})";
  CHECK_THROWS_WITH(load_model(write_temp("mm.json", mm)), Contains("field 'text_config'"));
  CHECK_THROWS_WITH(
      load_model(write_temp("arch.json", R"({"architectures": ["FalconForCausalLM"]})")),
      Contains("architecture 'FalconForCausalLM' is not modelled"));
  // DeepSeek-V2-Lite's config (abridged copy: bookkeeping keys missing) loads as MLA.
  const ModelSpec lite = load_model(frontier_config("deepseek-v2-lite.PARTIAL.json"));
  CHECK(lite.is_mla());
  CHECK(lite.mla.q_lora_rank == 0);
  // "15.7B total parameters, of which 2.4B are activated for each token" (its README).
  CHECK(lite.param_count() == Approx(15.7e9).epsilon(0.01));
  CHECK(activated_without_lookup(lite) == Approx(2.4e9).epsilon(0.03));
}

}  // namespace
}  // namespace servesim::models
