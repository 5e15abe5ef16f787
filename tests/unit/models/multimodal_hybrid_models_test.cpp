// Gemma-3, Llama-4 and Qwen3-Next read from their config.json: the language model under
// text_config, the vision encoder's weights, Gemma-3's interleaved sliding-window layers,
// Llama-4's interleaved MoE and chunked local attention, Qwen3-Next's Gated DeltaNet layers
// (models/linear_attention.h). Parameter counts against the publishers' figures; KV bytes per token
// against vLLM's formula (docs/models.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/model_name.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "tests/test_paths.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

std::string frontier_config(const std::string& file) {
  return (fs::path(SERVESIM_TEST_DATA_DIR) / "frontier_configs" / file).string();
}

double vocab_matrix(const ModelSpec& m) {
  return static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
}

// vLLM's full-attention KV page per token per rank (FullAttentionSpec: K and V of the rank's KV
// heads, at least one), summed over `layers` layers.
int64_t vllm_full_kv_per_token(const ModelSpec& m, int64_t layers, int tp, int dtype_bytes) {
  const int64_t heads = std::max<int64_t>(1, m.num_kv_heads / tp);
  return layers * 2 * heads * m.head_dim * dtype_bytes;
}

TEST_CASE("Gemma-3 4B and 27B: text_config, 5 sliding of 6 layers, published sizes", "[models]") {
  // Gemma 3 Technical Report (arXiv 2503.19786), Table 1: vision encoder, embedding and
  // non-embedding parameters, published to the million (1% is well above that rounding).
  struct Case {
    std::string file;
    int64_t layers, hidden, heads, kv_heads, head_dim, full_layers;
    double embedding, non_embedding;
  };
  for (const Case& c : {Case{"gemma-3-4b.json", 34, 2560, 8, 4, 256, 5, 675e6, 3209e6},
                        Case{"gemma-3-27b.json", 62, 5376, 32, 16, 128, 10, 1416e6, 25600e6}}) {
    INFO(c.file);
    const ModelSpec m = load_model(frontier_config(c.file));
    CHECK(m.architecture == "Gemma3ForConditionalGeneration");
    CHECK(m.num_layers == c.layers);
    CHECK(m.hidden_size == c.hidden);
    // The 4B file leaves heads, head_dim and vocab to Gemma3TextConfig's defaults.
    CHECK(m.num_heads == c.heads);
    CHECK(m.num_kv_heads == c.kv_heads);
    CHECK(m.head_dim == c.head_dim);
    CHECK(m.vocab_size == 262208);
    CHECK(m.tie_word_embeddings);
    CHECK(m.max_position_embeddings == 131072);
    // Layer i slides unless (i + 1) % 6 == 0: floor(L / 6) full layers.
    CHECK(m.sliding_window == 1024);
    CHECK(m.num_full_attention_layers() == c.full_layers);
    CHECK(m.num_full_attention_layers() == m.num_layers / 6);
    CHECK(m.hidden_norms_per_layer == 4);
    CHECK(m.qk_norm_weights);
    // "Vision Encoder 417M" (the SigLIP tower; the projector adds 1152 × hidden + 1152).
    const double projector = 1152.0 * static_cast<double>(m.hidden_size) + 1152.0;
    CHECK(m.encoder_params - projector == Approx(417e6).epsilon(0.01));
    const double text = m.param_count() - m.encoder_params;
    CHECK(vocab_matrix(m) == Approx(c.embedding).epsilon(0.01));
    CHECK(text - vocab_matrix(m) == Approx(c.non_embedding).epsilon(0.01));
    CHECK(m.param_count() == Approx(417e6 + c.embedding + c.non_embedding).epsilon(0.01));
    // Dense: every text weight is active, the vision encoder is not.
    CHECK(m.active_param_count() == Approx(text).epsilon(1e-12));
    // KV bytes per token per rank at TP 1 and 8, vLLM's per-layer page over all layers (the
    // sliding layers' pages cap at the window in the replica, as vLLM's SlidingWindowManager).
    for (const int tp : {1, 8}) {
      CHECK(m.kv_bytes_per_token_per_rank(2, tp) == vllm_full_kv_per_token(m, c.layers, tp, 2));
    }
  }
  // 27B: 62 layers × 2 × 16 KV heads × 128 × 2 bytes = 507,904 bytes per token at TP 1.
  CHECK(load_model(frontier_config("gemma-3-27b.json")).kv_bytes_per_token_per_rank(2, 1) ==
        507904);
}

TEST_CASE("Llama-4 Scout and Maverick: interleaved MoE with a shared expert, chunked attention",
          "[models]") {
  // The abridged aiconfigurator copies (tests/data/frontier_configs/*.PARTIAL.json): every key
  // that shapes the text model is there; no_rope_layers and moe_layers take Llama4TextConfig's
  // defaults, as in the published files. Published: Scout "17B active, 16 experts, 109B total",
  // Maverick "17B active, 128 experts, 400B total" (Meta's announcement). The totals hold to 1%;
  // "17B" is rounded to whole billions, so the active count is checked to that rounding.
  struct Case {
    std::string file;
    int64_t experts, moe_layers;
    double total;
  };
  for (const Case& c : {Case{"llama-4-scout.PARTIAL.json", 16, 48, 109e9},
                        Case{"llama-4-maverick.PARTIAL.json", 128, 24, 400e9}}) {
    INFO(c.file);
    const ModelSpec m = load_model(frontier_config(c.file));
    CHECK(m.architecture == "Llama4ForConditionalGeneration");
    CHECK(m.num_experts == c.experts);
    CHECK(m.experts_per_token == 1);
    CHECK(m.num_moe_layers() == c.moe_layers);
    CHECK(m.moe_intermediate_size == 8192);
    CHECK(m.shared_expert_intermediate_size == 8192);  // one shared expert, ungated
    CHECK_FALSE(m.shared_expert_gate);
    CHECK(m.intermediate_size == 16384);  // intermediate_size_mlp: the dense layers
    CHECK_FALSE(m.qk_norm_weights);       // Llama-4's QK norm is an L2 norm without weights
    // Every 4th layer is NoPE (global); the other 36 attend within 8192-token chunks.
    CHECK(m.attention_chunk_size == 8192);
    CHECK(m.num_chunked_layers == 36);
    CHECK(m.num_sliding_layers == 0);  // vLLM keeps them as full attention in the KV cache
    CHECK(m.param_count() == Approx(c.total).epsilon(0.01));
    CHECK(std::abs(m.active_param_count() - 17e9) < 0.5e9);
    // KV: vLLM disables the hybrid KV-cache manager for chunked local attention by default, so
    // every layer holds a full-attention page: 48 × 2 × ceil(8 / TP) × 128 × 2 bytes.
    CHECK(m.kv_bytes_per_token_per_rank(2, 1) == 196608);
    CHECK(m.kv_bytes_per_token_per_rank(2, 8) == 24576);
    CHECK(m.kv_bytes_per_token_per_rank(2, 16) == 24576);  // 8 KV heads: replicated beyond TP 8
    for (const int tp : {1, 2, 4, 8}) {
      CHECK(m.kv_bytes_per_token_per_rank(2, tp) == vllm_full_kv_per_token(m, 48, tp, 2));
    }
  }
  // Closed form of Scout's text model: 48 × (attention + 2 norms + 16 experts + shared + router)
  // + 2 vocabulary matrices + final norm.
  const ModelSpec s = load_model(frontier_config("llama-4-scout.PARTIAL.json"));
  const double h = 5120, attn = 2 * h * 40 * 128 + 2 * h * 8 * 128;
  const double layer = attn + 2 * h + 17 * 3 * h * 8192 + h * 16;
  CHECK(s.param_count() - s.encoder_params ==
        Approx(48 * layer + 2 * 202048 * h + h).epsilon(1e-12));
}

TEST_CASE("Qwen3-Next-80B-A3B: counted with its Gated DeltaNet layers", "[models]") {
  const ModelSpec m = load_model(frontier_config("qwen3-next-80b-a3b.json"));
  CHECK(m.linear.num_layers == 36);  // 3 of every 4 (full_attention_interval 4)
  CHECK(m.num_experts == 512);
  CHECK(m.experts_per_token == 10);
  CHECK(m.num_moe_layers() == 48);
  CHECK(m.shared_expert_gate);
  CHECK(m.attention_output_gate);
  // One Gated DeltaNet layer (h 2048; 16 key heads × 128, 32 value heads × 128, kernel 4):
  // in_proj_qkvz 2048 × 12288, in_proj_ba 2048 × 64, conv1d 8192 × 4, dt_bias + A_log 64,
  // norm 128, out_proj 4096 × 2048.
  CHECK(m.linear.params_per_layer(2048) ==
        2048.0 * 12288 + 2048.0 * 64 + 8192.0 * 4 + 64 + 128 + 4096.0 * 2048);
  // Model card: "80B in total and 3B activated; Non-Embedding 79B". Totals to 1%; "3B" is
  // rounded to whole billions and counts no embedding (servesim: 3.25 B), checked to that.
  CHECK(m.param_count() == Approx(80e9).epsilon(0.01));
  CHECK(m.param_count() - 2 * vocab_matrix(m) == Approx(79e9).epsilon(0.01));
  CHECK(std::abs(m.active_param_count() - 2 * vocab_matrix(m) - 3e9) < 0.5e9);
}

TEST_CASE("qwen3-next-80b-a3b in the catalog: the published config, 79.7 B / 3.87 B", "[models]") {
  // The catalog entry is the test file plus its _source and _hf_ids keys: the same model. Its
  // totals as docs/models.md states them (to the 0.05 B and 0.005 B shown): 79.7 B in all,
  // 3.87 B active (3.25 B of them outside the two vocabulary matrices).
  const ModelSpec c = load_model("qwen3-next-80b-a3b");
  const ModelSpec t = load_model(frontier_config("qwen3-next-80b-a3b.json"));
  CHECK(c.param_count() == t.param_count());
  CHECK(c.active_param_count() == t.active_param_count());
  CHECK(c.linear.num_layers == 36);
  CHECK_THAT(c.param_count(), Catch::Matchers::WithinAbs(79.7e9, 0.05e9));
  CHECK_THAT(c.active_param_count(), Catch::Matchers::WithinAbs(3.87e9, 0.005e9));
  CHECK_THAT(c.active_param_count() - 2 * vocab_matrix(c),
             Catch::Matchers::WithinAbs(3.25e9, 0.005e9));
}

TEST_CASE("llama-4-scout and llama-4-maverick in the catalog: the abridged configs by HF id",
          "[models]") {
  // Each catalog entry is its test file plus _source and _hf_ids: the same model, named by the
  // Hugging Face id as `vllm serve` takes it (the -Instruct repositories; a base model is not
  // assumed to share its config).
  struct Case {
    std::string name, file, hf_id;
  };
  for (const Case& c : {Case{"llama-4-scout", "llama-4-scout.PARTIAL.json",
                             "meta-llama/Llama-4-Scout-17B-16E-Instruct"},
                        Case{"llama-4-maverick", "llama-4-maverick.PARTIAL.json",
                             "meta-llama/Llama-4-Maverick-17B-128E-Instruct"}}) {
    INFO(c.name);
    CHECK(resolve_model(c.hf_id).catalog_name == c.name);
    const ModelSpec cat = load_model(c.name);
    const ModelSpec t = load_model(frontier_config(c.file));
    CHECK(cat.param_count() == t.param_count());
    CHECK(cat.active_param_count() == t.active_param_count());
    CHECK(cat.kv_bytes_per_token_per_rank(2, 8) == t.kv_bytes_per_token_per_rank(2, 8));
    CHECK(cat.max_position_embeddings == t.max_position_embeddings);
  }
}

TEST_CASE("multimodal configs need their text and vision parts", "[models]") {
  const std::string dir = (fs::temp_directory_path() / "servesim_mm_test").string();
  fs::create_directories(dir);
  const std::string no_vision = dir + "/no_vision.json";
  {
    std::ofstream(no_vision)
        << R"({"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {}})";
  }
  CHECK_THROWS_WITH(load_model(no_vision), Contains("field 'vision_config' must be an object"));
  const std::string no_text = dir + "/no_text.json";
  { std::ofstream(no_text) << R"({"architectures": ["Llama4ForConditionalGeneration"]})"; }
  CHECK_THROWS_WITH(load_model(no_text), Contains("field 'text_config' must be an object"));
}

}  // namespace
}  // namespace servesim::models
