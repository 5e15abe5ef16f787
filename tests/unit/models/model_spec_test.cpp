#include "models/model_spec.h"

#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/base/error.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

constexpr double kKiB = 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Writes `text` to a fresh file in a per-process temp folder and returns its path.
std::string write_temp(const std::string& file_name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_model_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / file_name;
  std::ofstream(p) << text;
  return p.string();
}

// A small Llama-shaped config; `extra` is spliced into the object.
std::string tiny_config(const std::string& extra = "") {
  return R"({"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2,
             "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 512)" +
         extra + "}";
}

TEST_CASE("every catalog model loads", "[models]") {
  const auto names = model_catalog_names();
  // The 13 models of the brief, qwen3-32b (the realdata LLMServingSim run), the two InferenceX
  // models (gpt-oss-120b, the FP8 Llama-3.1-70B checkpoint) and the frontier models
  // (frontier_models_test.cpp, multimodal_hybrid_models_test.cpp), in sorted order.
  REQUIRE(names ==
          std::vector<std::string>{
              "codellama-34b",    "deepseek-r1",       "deepseek-v3",  "gemma-3-27b",
              "gemma-3-4b",       "glm-4.5-air",       "gpt-oss-120b", "gpt-oss-20b",
              "kimi-k2",          "llama-2-13b",       "llama-2-70b",  "llama-2-7b",
              "llama-3.1-70b",    "llama-3.1-70b-fp8", "llama-3.1-8b", "llama-3.3-70b",
              "llama-4-maverick", "llama-4-scout",     "mistral-7b",   "mixtral-8x22b",
              "mixtral-8x7b",     "qwen2.5-72b",       "qwen2.5-7b",   "qwen3-14b",
              "qwen3-235b-a22b",  "qwen3-30b-a3b",     "qwen3-32b",    "qwen3-next-80b-a3b"});
  for (const auto& n : names) {
    INFO(n);
    const ModelSpec m = load_model(n);
    CHECK(m.name == n);
    CHECK(m.num_heads % m.num_kv_heads == 0);
    CHECK(m.param_count() > 1e9);
    CHECK(m.active_param_count() <= m.param_count());
  }
}

TEST_CASE("gpt-oss-120b: 116.8 B parameters as OpenAI's model card states", "[models]") {
  // Model card: 116.8 B total (36 layers, 128 experts of 3 x 2880 x 2880, top-4). Our count
  // includes attention, experts, router, norms and the untied embedding + LM head.
  const ModelSpec m = load_model("gpt-oss-120b");
  CHECK(m.num_experts == 128);
  CHECK(m.experts_per_token == 4);
  CHECK(m.param_count() == Approx(116.8e9).margin(0.05e9));
  // The FP8 Llama checkpoint has the base model's shape.
  CHECK(load_model("llama-3.1-70b-fp8").param_count() == load_model("llama-3.1-70b").param_count());
}

TEST_CASE("parameter counts match REFERENCE.md §4", "[models]") {
  // REFERENCE.md §4 rounds to 3 significant digits, so the exact count lies within half a unit of
  // the last digit: +-0.005 B for X.XX B, +-0.05 B for XX.X B.
  CHECK_THAT(load_model("llama-3.1-8b").param_count(), WithinAbs(8.03e9, 0.005e9));
  CHECK_THAT(load_model("llama-3.1-70b").param_count(), WithinAbs(70.6e9, 0.05e9));
  CHECK_THAT(load_model("llama-2-7b").param_count(), WithinAbs(6.74e9, 0.005e9));
  CHECK_THAT(load_model("mistral-7b").param_count(), WithinAbs(7.24e9, 0.005e9));
  CHECK_THAT(load_model("qwen2.5-7b").param_count(), WithinAbs(7.62e9, 0.005e9));
  CHECK_THAT(load_model("qwen2.5-72b").param_count(), WithinAbs(72.7e9, 0.05e9));
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  CHECK_THAT(mixtral.param_count(), WithinAbs(46.7e9, 0.05e9));
  CHECK_THAT(mixtral.active_param_count(), WithinAbs(12.9e9, 0.05e9));
}

TEST_CASE("parameter counts: exact values", "[models]") {
  // Llama-3.1-8B: 32 * (4096*4096*2 + 2*4096*1024 + 3*4096*14336 + 2*4096)
  //               + 2*128256*4096 + 4096 = 8,030,261,248 (the count HF lists for the checkpoint).
  CHECK(load_model("llama-3.1-8b").param_count() == 8030261248.0);
  // Qwen2.5-7B adds the QKV bias (3584 + 2*512 per layer): 7,615,616,512.
  CHECK(load_model("qwen2.5-7b").param_count() == 7615616512.0);
  // Embedding + LM head, untied: 2 * V * h.
  CHECK(load_model("llama-3.1-8b").embedding_param_count() == 2.0 * 128256 * 4096);
}

TEST_CASE("weight bytes agree with a measured vLLM load", "[models]") {
  // realdata inferencesim_eval_vllm0110/*/vllm.log: "Model loading took 62.8571 GiB" for
  // CodeLlama-34B bf16. param_count * 2 B = 62.853 GiB; the 4 MiB gap is vLLM's rope cache.
  CHECK_THAT(load_model("codellama-34b").param_count() * 2 / kGiB, WithinRel(62.8571, 1e-4));
}

TEST_CASE("MoE totals and actives", "[models]") {
  // Mixtral-8x22B: Mistral publishes 141 B total / 39 B active; the formula gives 140.6 / 39.2.
  const ModelSpec m = load_model("mixtral-8x22b");
  REQUIRE(m.is_moe());
  CHECK(m.num_experts == 8);
  CHECK(m.experts_per_token == 2);
  CHECK(m.moe_intermediate_size == m.intermediate_size);
  CHECK_THAT(m.param_count(), WithinRel(141e9, 0.01));
  CHECK_THAT(m.active_param_count(), WithinRel(39e9, 0.01));

  SECTION("Qwen-MoE fields (Qwen1.5-MoE-A2.7B shape)") {
    // 24 layers * (4*2048^2 attn + 6144 qkv bias + 60*3*2048*1408 experts + 2048*60 router
    // + 3*2048*5632 shared expert + 2048 shared gate + 2*2048 norms) + 2*151936*2048 + 2048
    // = 14.32 B total (published 14.3 B); 4 routed experts active: 2.69 B (published 2.7 B).
    const std::string p = write_temp("qwen_moe.json", R"({
        "model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
        "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
        "vocab_size": 151936, "max_position_embeddings": 8192, "num_experts": 60,
        "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "torch_dtype": "bfloat16"})");
    const ModelSpec q = load_model(p);
    CHECK(q.qkv_bias);
    CHECK(q.num_experts == 60);
    CHECK(q.shared_expert_intermediate_size == 5632);
    CHECK_THAT(q.param_count(), WithinAbs(14.3e9, 0.05e9));
    CHECK_THAT(q.active_param_count(), WithinAbs(2.7e9, 0.05e9));
  }
}

TEST_CASE("KV bytes per token match REFERENCE.md §4", "[models]") {
  // 2 * L * n_kv * d * 2 B.
  CHECK(load_model("llama-3.1-8b").kv_bytes_per_token(2) == 128 * kKiB);   // 2*32*8*128*2
  CHECK(load_model("llama-3.1-70b").kv_bytes_per_token(2) == 320 * kKiB);  // 2*80*8*128*2
  CHECK(load_model("llama-2-7b").kv_bytes_per_token(2) == 512 * kKiB);     // 2*32*32*128*2
  CHECK(load_model("mistral-7b").kv_bytes_per_token(2) == 128 * kKiB);
  CHECK(load_model("qwen2.5-7b").kv_bytes_per_token(2) == 56 * kKiB);  // 2*28*4*128*2
  CHECK(load_model("qwen2.5-72b").kv_bytes_per_token(2) == 320 * kKiB);
  CHECK(load_model("mixtral-8x7b").kv_bytes_per_token(2) == 128 * kKiB);
  // fp8 KV halves it.
  CHECK(load_model("llama-3.1-8b").kv_bytes_per_token(1) == 64 * kKiB);
}

TEST_CASE("KV bytes per token per tensor-parallel rank", "[models]") {
  const ModelSpec llama8 = load_model("llama-3.1-8b");  // 8 KV heads
  SECTION("heads split while tp <= n_kv") {
    CHECK(llama8.kv_bytes_per_token_per_rank(2, 1) == 128 * kKiB);
    CHECK(llama8.kv_bytes_per_token_per_rank(2, 2) == 64 * kKiB);
    CHECK(llama8.kv_bytes_per_token_per_rank(2, 8) == 16 * kKiB);  // 1 head per rank: N-1 side
  }
  SECTION("one head per rank, replicated, once tp > n_kv") {
    CHECK(llama8.kv_bytes_per_token_per_rank(2, 16) == 16 * kKiB);  // not 8 KiB
  }
  SECTION("Qwen2.5-7B: 4 KV heads") {
    const ModelSpec q = load_model("qwen2.5-7b");
    CHECK(q.kv_bytes_per_token_per_rank(2, 2) == 28 * kKiB);
    CHECK(q.kv_bytes_per_token_per_rank(2, 4) == 14 * kKiB);
    CHECK(q.kv_bytes_per_token_per_rank(2, 8) == 14 * kKiB);
    CHECK(q.kv_bytes_per_token_per_rank(1, 8) == 7 * kKiB);
  }
  SECTION("MHA model: Llama-2-7B, 32 KV heads") {
    const ModelSpec l2 = load_model("llama-2-7b");
    CHECK(l2.kv_bytes_per_token_per_rank(2, 8) == 64 * kKiB);
    CHECK(l2.kv_bytes_per_token_per_rank(2, 16) == 32 * kKiB);
  }
  SECTION("tp must be positive") {
    CHECK_THROWS_AS(llama8.kv_bytes_per_token_per_rank(2, 0), ConfigError);
  }
}

TEST_CASE("HF defaults and field conventions", "[models]") {
  SECTION("absent num_key_value_heads and head_dim") {
    const ModelSpec m = load_model(write_temp("tiny.json", tiny_config()));
    CHECK(m.num_kv_heads == 4);  // = heads (MHA)
    CHECK(m.head_dim == 16);     // = 64 / 4
    CHECK(m.dtype_bytes == 2);
    CHECK_FALSE(m.qkv_bias);
    CHECK_FALSE(m.tie_word_embeddings);
    CHECK_FALSE(m.is_moe());
  }
  SECTION("explicit head_dim (Qwen3) is used as given") {
    const ModelSpec q = load_model("qwen3-14b");
    CHECK(q.head_dim == 128);
    CHECK(q.max_position_embeddings == 40960);
  }
  SECTION("tied embeddings count V*h once") {
    const ModelSpec m =
        load_model(write_temp("tied.json", tiny_config(R"(, "tie_word_embeddings": true)")));
    CHECK(m.embedding_param_count() == 100.0 * 64);
  }
  SECTION("dtype: a float32 checkpoint is served in 16 bits unless --dtype float32") {
    // vllm/config/model.py _get_and_verify_dtype: "auto" downcasts float32 to the platform's
    // first supported dtype (bfloat16 from Ampere on, else float16): 2 bytes either way.
    ModelSpec f32 =
        load_model(write_temp("f32.json", tiny_config(R"(, "torch_dtype": "float32")")));
    CHECK(f32.checkpoint_dtype == "float32");
    CHECK(f32.dtype_bytes == 2);
    apply_dtype(f32, "float32");
    CHECK(f32.dtype_bytes == 4);
    apply_dtype(f32, "float16");
    CHECK(f32.dtype_bytes == 2);
    apply_dtype(f32, "float");
    CHECK(f32.dtype_bytes == 4);
    apply_dtype(f32, "auto");
    CHECK(f32.dtype_bytes == 2);
    CHECK_THROWS_WITH(apply_dtype(f32, "int8"), Contains("--dtype") && Contains("'int8'"));
    CHECK(load_model(write_temp("f16.json", tiny_config(R"(, "torch_dtype": "float16")")))
              .dtype_bytes == 2);
    const ModelSpec dt = load_model(write_temp("dt.json", tiny_config(R"(, "dtype": "float32")")));
    CHECK(dt.checkpoint_dtype == "float32");
    CHECK(dt.dtype_bytes == 2);
    CHECK_THROWS_WITH(load_model(write_temp("i8.json", tiny_config(R"(, "torch_dtype": "int8")"))),
                      Contains("torch_dtype") && Contains("int8"));
  }
  SECTION("qkv bias from attention_bias or model_type qwen2") {
    CHECK(load_model(write_temp("ab.json", tiny_config(R"(, "attention_bias": true)"))).qkv_bias);
    CHECK(load_model("qwen2.5-72b").qkv_bias);
    CHECK_FALSE(load_model("llama-3.3-70b").qkv_bias);
  }
}

TEST_CASE("sliding-window layers come from layer_types", "[models]") {
  SECTION("gpt-oss-120b: 18 of 36 layers slide over 128 tokens") {
    const ModelSpec m = load_model("gpt-oss-120b");
    CHECK(m.sliding_window == 128);
    CHECK(m.num_sliding_layers == 18);
    CHECK(m.num_full_attention_layers() == 18);
  }
  SECTION("without layer_types: a mistral config's window is every layer's, others have none") {
    // Mistral-7B-v0.1 names a 4,096-token window, which vLLM applies to every layer.
    const ModelSpec mistral = load_model("mistral-7b");
    CHECK(mistral.sliding_window == 4096);
    CHECK(mistral.num_sliding_layers == 32);
    CHECK(mistral.num_full_attention_layers() == 0);
    const ModelSpec off = load_model(write_temp(
        "mistral_off.json",
        tiny_config(
            R"(, "model_type": "mistral", "sliding_window": 64, "use_sliding_window": false)")));
    CHECK(off.num_sliding_layers == 0);
    const ModelSpec null_window = load_model(write_temp(
        "mistral_null.json", tiny_config(R"(, "model_type": "mistral", "sliding_window": null)")));
    CHECK(null_window.num_sliding_layers == 0);
    // Qwen2.5 names a window with use_sliding_window false; other types without layer_types.
    const ModelSpec other = load_model(
        write_temp("other.json", tiny_config(R"(, "model_type": "gemma2", "sliding_window": 64)")));
    CHECK(other.num_sliding_layers == 0);
    for (const char* name : {"qwen2.5-7b", "llama-3.1-8b"}) {
      const ModelSpec m = load_model(name);
      CHECK(m.num_sliding_layers == 0);
      CHECK(m.sliding_window == 0);
      CHECK(m.num_full_attention_layers() == m.num_layers);
    }
  }
  SECTION("all full_attention: no window") {
    const ModelSpec m = load_model(write_temp(
        "full.json", tiny_config(R"(, "layer_types": ["full_attention", "full_attention"])")));
    CHECK(m.num_sliding_layers == 0);
  }
  SECTION("errors") {
    CHECK_THROWS_WITH(
        load_model(write_temp("short.json", tiny_config(R"(, "layer_types": ["full_attention"])"))),
        Contains("short.json") && Contains("'layer_types'") && Contains("num_hidden_layers (2)"));
    CHECK_THROWS_WITH(
        load_model(write_temp(
            "odd.json",
            tiny_config(
                R"(, "layer_types": ["full_attention", "chunked_attention"], "sliding_window": 8)"))),
        Contains("'layer_types[1]'") && Contains("chunked_attention"));
    CHECK_THROWS_WITH(
        load_model(
            write_temp("nowin.json",
                       tiny_config(R"(, "layer_types": ["sliding_attention", "full_attention"])"))),
        Contains("nowin.json") && Contains("sliding_window"));
  }
}

TEST_CASE("errors name the file, the field and the known names", "[models]") {
  SECTION("unknown catalog name names the nearest entries") {
    CHECK_THROWS_WITH(load_model("llama-9"), Contains("llama-9: not in the catalog") &&
                                                 Contains("llama-2-7b") && Contains("config.json"));
  }
  SECTION("missing required field") {
    const std::string p =
        write_temp("nohidden.json",
                   R"({"intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
            "vocab_size": 100, "max_position_embeddings": 512})");
    CHECK_THROWS_WITH(load_model(p),
                      Contains(p) && Contains("missing required field 'hidden_size'"));
  }
  SECTION("malformed JSON") {
    const std::string p = write_temp("broken.json", R"({"hidden_size": 64,)");
    CHECK_THROWS_WITH(load_model(p), Contains(p) && Contains("malformed JSON"));
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(load_model("/nonexistent/config.json"),
                      Contains("/nonexistent/config.json") && Contains("cannot open"));
  }
  SECTION("bad values") {
    CHECK_THROWS_WITH(
        load_model(write_temp("neg.json", tiny_config(R"(, "num_key_value_heads": 3)"))),
        Contains("num_key_value_heads"));
    CHECK_THROWS_WITH(load_model(write_temp("wrongtype.json",
                                            R"({"hidden_size": "big", "intermediate_size": 1})")),
                      Contains("'hidden_size' has the wrong type"));
    CHECK_THROWS_WITH(
        load_model(write_temp("moe.json", tiny_config(R"(, "num_local_experts": 8)"))),
        Contains("num_experts_per_tok"));
  }
}

}  // namespace
}  // namespace servesim::models
