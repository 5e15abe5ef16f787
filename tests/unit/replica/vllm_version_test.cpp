// The vLLM version table (sim/replica/vllm_version.h): every row and the defaults it selects.
#include "sim/replica/vllm_version.h"

#include <catch2/catch.hpp>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "sim/replica/engine_request.h"

namespace servesim::sim {
namespace {

hardware::GpuSpec gpu(const std::string& name, double gib) {
  hardware::GpuSpec g;
  g.name = name;
  g.memory_bytes = gib * double(1ull << 30);
  return g;
}

TEST_CASE("version table: rows 0.6 ... 0.19, oldest first, the default is the newest",
          "[replica][version]") {
  const auto& t = vllm_version_table();
  REQUIRE(t.size() == 14);
  REQUIRE(t.front().version == "0.6");
  REQUIRE(t.back().version == kDefaultVllmVersion);
  REQUIRE(EngineConfig{}.vllm_version == kDefaultVllmVersion);
  for (const auto& v : t) {
    INFO(v.version);
    CHECK(!v.sources.empty());
    CHECK(v.gpu_memory_utilization == 0.9);
    // Async scheduling exists from 0.10 and is on by default from 0.14 (PR #27614).
    const int minor = std::stoi(v.version.substr(2));
    CHECK(v.async_scheduling_available == (minor >= 10));
    CHECK(v.async_scheduling_default == (minor >= 14));
    CHECK((v.engine == EngineGeneration::kV0) == (minor <= 7));
    CHECK(v.prefix_caching_default == (minor >= 8));
    // benchmark_serving.py [int(L·r), L] through 0.8; arrivals rescaled from 0.11.
    CHECK(v.legacy_random_lengths == (minor <= 8));
    CHECK(v.rescale_arrivals == (minor >= 11));
    // MLA's latent cache from 0.7.1, its entries aligned to 256 B by V0's CacheEngine until 0.8
    // (PR #14842).
    CHECK(v.mla_cache == (minor >= 7));
    CHECK(v.mla_entry_align_bytes == (minor == 7 ? 256 : 0));
    CHECK(v.mla_absorbed_weights == (minor == 7));
    // Fused-MoE workspace: three caches apart before PR #13625 (0.8); the modular kernel's for
    // unquantized experts from 0.14 (PR #31052).
    CHECK(v.fused_moe_separate_caches == (minor <= 7));
    CHECK(v.fused_moe_modular_workspace == (minor >= 14));
    const models::CudaGraphSizesRule want = minor <= 7    ? models::CudaGraphSizesRule::kV0
                                            : minor <= 9  ? models::CudaGraphSizesRule::kV1Dense512
                                            : minor == 10 ? models::CudaGraphSizesRule::kV1Dense2x
                                                          : models::CudaGraphSizesRule::kV1Sparse;
    CHECK(v.cuda_graphs == want);
  }
}

TEST_CASE("version lookup matches X.Y and X.Y.Z and rejects the rest", "[replica][version]") {
  CHECK(vllm_version("0.8.3").version == "0.8");
  CHECK(vllm_version("v0.11.0").version == "0.11");
  CHECK(vllm_version("0.19").version == "0.19");
  CHECK(vllm_minor_version("0.10.1.1") == "0.10");
  CHECK(vllm_minor_version("latest") == "");
  CHECK(vllm_minor_version("0.8.3 (V0 engine)") == "0.8");  // the llm-k8s PP sidecars
  CHECK(vllm_minor_version("0.19.0+cu128") == "0.19");
  CHECK(vllm_minor_version("0.80") == "0.80");
  CHECK(vllm_minor_version("10.2x") == "");
  CHECK_THROWS_WITH(vllm_version("0.5.4"),
                    Catch::Contains("--vllm-version: '0.5.4'") && Catch::Contains("0.6, 0.7"));
  CHECK_THROWS_AS(vllm_version("0.20"), ConfigError);
  CHECK_THROWS_AS(vllm_version("main"), ConfigError);
}

TEST_CASE("batch defaults by version and GPU", "[replica][version]") {
  const auto h100 = gpu("h100-sxm", 79.6), a100 = gpu("a100-80gb", 79.2), l40s = gpu("l40s", 44.4);
  const auto mi300 = gpu("mi300x", 192);
  // V0: 256 / 2048 everywhere.
  CHECK(batch_defaults(vllm_version("0.6"), h100).max_num_seqs == 256);
  CHECK(batch_defaults(vllm_version("0.6"), h100).max_num_batched_tokens == 2048);
  // 0.8: by device name (h100/h200 only): an MI300X keeps 256 / 2048.
  CHECK(batch_defaults(vllm_version("0.8"), h100).max_num_seqs == 1024);
  CHECK(batch_defaults(vllm_version("0.8"), mi300).max_num_seqs == 256);
  // 0.9+: >= 70 GiB and not an A100.
  for (const char* v : {"0.9", "0.11", "0.19"}) {
    CHECK(batch_defaults(vllm_version(v), h100).max_num_batched_tokens == 8192);
    CHECK(batch_defaults(vllm_version(v), mi300).max_num_seqs == 1024);
    CHECK(batch_defaults(vllm_version(v), a100).max_num_seqs == 256);
    CHECK(batch_defaults(vllm_version(v), l40s).max_num_batched_tokens == 2048);
  }
}

TEST_CASE("resolve_engine_config takes the version's defaults", "[replica][version]") {
  models::ModelSpec m;
  m.max_position_embeddings = 8192;
  EngineRequest c;
  EngineConfig r = resolve_engine_config(c, gpu("h100-sxm", 79.6), m);
  CHECK(r.vllm_version == "0.19");
  CHECK(r.async_scheduling == 1);
  CHECK(r.gpu_memory_utilization == 0.9);
  c.vllm_version = "0.11.0";
  r = resolve_engine_config(c, gpu("h100-sxm", 79.6), m);
  CHECK(r.vllm_version == "0.11");
  CHECK(r.async_scheduling == 0);
  c.async_scheduling = 1;  // --async-scheduling on 0.11: allowed (it exists, off by default)
  CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), m).async_scheduling == 1);
  c.vllm_version = "0.9";
  CHECK_THROWS_WITH(resolve_engine_config(c, gpu("h100-sxm", 79.6), m),
                    Catch::Contains("--async-scheduling") && Catch::Contains("0.10 or newer"));
  c.async_scheduling = 0;  // --no-async-scheduling on 0.14+: off
  c.vllm_version = "0.15";
  CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), m).async_scheduling == 0);
}

TEST_CASE("the hybrid KV layout from 0.9 on, for sliding-window models only",
          "[replica][version]") {
  const models::ModelSpec oss = models::load_model("gpt-oss-120b");
  EngineRequest c;
  EngineConfig r = resolve_engine_config(c, gpu("h100-sxm", 79.6), oss);
  CHECK(r.kv_layers_per_block == 18);
  CHECK(r.kv_sliding_groups == 1);
  CHECK(r.kv_sliding_window == 128);
  for (const char* v : {"0.9", "0.10", "0.11"}) {
    c.vllm_version = v;
    CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), oss).kv_sliding_groups == 1);
  }
  for (const char* v : {"0.6", "0.8"}) {  // before the hybrid manager: every layer in every block
    c.vllm_version = v;
    r = resolve_engine_config(c, gpu("h100-sxm", 79.6), oss);
    CHECK(r.kv_sliding_groups == 0);
    CHECK(r.kv_layers_per_block == 0);
  }
  // Gemma-3 style, 1 full : 5 sliding: blocks of 1 layer, 5 sliding groups.
  models::ModelSpec g = oss;
  g.num_layers = 6;
  g.num_sliding_layers = 5;
  c.vllm_version = "0.19";
  r = resolve_engine_config(c, gpu("h100-sxm", 79.6), g);
  CHECK(r.kv_layers_per_block == 1);
  CHECK(r.kv_sliding_groups == 5);
  // More full than sliding layers (not modelled) and no sliding layers: the plain layout.
  g.num_sliding_layers = 2;
  CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), g).kv_sliding_groups == 0);
  CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), models::load_model("llama-3.1-8b"))
            .kv_sliding_groups == 0);
}

TEST_CASE("the attention window is the model's, whatever the KV layout", "[replica][version]") {
  // Expectations: gpt-oss-120b's 128-token window with the hybrid layout (0.19), without it
  // (0.8, and --disable-hybrid-kv-cache-manager), where kv_sliding_window is 0; a model without
  // sliding layers has none, even with a sliding_window value of its own (Qwen-style configs).
  const models::ModelSpec oss = models::load_model("gpt-oss-120b");
  EngineRequest c;
  CHECK(resolve_engine_config(c, gpu("h100-sxm", 79.6), oss).attention_window == 128);
  c.vllm_version = "0.8";
  EngineConfig r = resolve_engine_config(c, gpu("h100-sxm", 79.6), oss);
  CHECK(r.kv_sliding_window == 0);
  CHECK(r.attention_window == 128);
  c.vllm_version = "0.19";
  c.disable_hybrid_kv_cache_manager = true;
  r = resolve_engine_config(c, gpu("h100-sxm", 79.6), oss);
  CHECK(r.kv_sliding_window == 0);
  CHECK(r.attention_window == 128);
  models::ModelSpec none = models::load_model("llama-3.1-8b");
  none.sliding_window = 4096;
  CHECK(resolve_engine_config(EngineRequest{}, gpu("h100-sxm", 79.6), none).attention_window == 0);
}

TEST_CASE("CUDA-graph capture sizes per rule", "[replica][version]") {
  using models::CudaGraphSizesRule;
  using models::default_cuda_graph_sizes;
  // V0: [1,2,4,8,...,256] up to the first size >= max_num_seqs.
  auto v0 = default_cuda_graph_sizes(256, 2048, CudaGraphSizesRule::kV0);
  CHECK(v0.size() == 35);
  CHECK(v0.back() == 256);
  CHECK(default_cuda_graph_sizes(20, 2048, CudaGraphSizesRule::kV0).back() == 24);
  // v0.8/0.9: up to 512 in steps of 8, capped by the budget.
  auto d512 = default_cuda_graph_sizes(256, 8192, CudaGraphSizesRule::kV1Dense512);
  CHECK(d512.size() == 3 + 64);
  CHECK(d512.back() == 512);
  CHECK(default_cuda_graph_sizes(256, 2048, CudaGraphSizesRule::kV1Dense512).back() == 512);
  CHECK(default_cuda_graph_sizes(256, 100, CudaGraphSizesRule::kV1Dense512).back() == 96);
  // v0.10: steps of 8 up to min(2·max_num_seqs, 512).
  CHECK(default_cuda_graph_sizes(64, 8192, CudaGraphSizesRule::kV1Dense2x).back() == 128);
  CHECK(default_cuda_graph_sizes(64, 8192, CudaGraphSizesRule::kV1Dense2x).size() == 3 + 16);
  // v0.11+: steps of 16 past 256.
  auto sparse = default_cuda_graph_sizes(1024, 8192, CudaGraphSizesRule::kV1Sparse);
  CHECK(sparse.size() == 3 + 31 + 17);
}

}  // namespace
}  // namespace servesim::sim
