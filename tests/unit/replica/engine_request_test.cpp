// resolve_engine_config: each optional flag of EngineRequest unset (vLLM's default for the release,
// GPU and model) and set (the value, checked), the boundaries of the defaults' rules, and the
// refusal of --enable-prefix-caching on a model with linear-attention layers. Expected values are
// vLLM's (sim/replica/engine_request.h cites where each default comes from).
#include <catch2/catch.hpp>

#include <optional>
#include <string>

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

models::ModelSpec model_with_context(int64_t n) {
  models::ModelSpec m;
  m.name = "test-model";
  m.max_position_embeddings = n;
  return m;
}

const char* const kQwen3Next = "tests/data/frontier_configs/qwen3-next-80b-a3b.json";

TEST_CASE("an empty request resolves to vLLM 0.19's defaults for the GPU and model",
          "[replica][engine_request]") {
  // 80 GB H100 (>= 70 GiB, not an A100): get_batch_defaults' 1024 sequences, 8192 tokens; the
  // model's 131,072 positions; 0.9 utilisation; chunked prefill and prefix caching on (V1);
  // async scheduling on from 0.14.
  const EngineConfig c =
      resolve_engine_config(EngineRequest{}, gpu("h100-sxm", 79.6), model_with_context(131072));
  CHECK(c.vllm_version == "0.19");
  CHECK(c.max_num_seqs == 1024);
  CHECK(c.max_num_batched_tokens == 8192);
  CHECK(c.max_model_len == 131072);
  CHECK(c.gpu_memory_utilization == 0.9);
  CHECK(c.enable_chunked_prefill);
  CHECK(c.enable_prefix_caching);
  CHECK(c.async_scheduling);
  CHECK(c.block_size == 16);
}

TEST_CASE("each optional flag set is taken as given", "[replica][engine_request]") {
  EngineRequest r;
  r.max_num_seqs = 64;
  r.max_num_batched_tokens = 512;
  r.max_model_len = 4096;
  r.gpu_memory_utilization = 0.5;
  r.enable_prefix_caching = false;
  r.async_scheduling = false;
  r.enable_chunked_prefill = true;
  const EngineConfig c =
      resolve_engine_config(r, gpu("h100-sxm", 79.6), model_with_context(131072));
  CHECK(c.max_num_seqs == 64);
  CHECK(c.max_num_batched_tokens == 512);
  CHECK(c.max_model_len == 4096);
  CHECK(c.gpu_memory_utilization == 0.5);
  CHECK_FALSE(c.enable_prefix_caching);
  CHECK_FALSE(c.async_scheduling);
  CHECK(c.enable_chunked_prefill);
  // A value equal to the default is a value: the same engine as unset.
  EngineRequest same;
  same.max_num_seqs = 1024;
  same.gpu_memory_utilization = 0.9;
  same.async_scheduling = true;
  const EngineConfig d =
      resolve_engine_config(same, gpu("h100-sxm", 79.6), model_with_context(131072));
  CHECK(d.max_num_seqs == 1024);
  CHECK(d.gpu_memory_utilization == 0.9);
  CHECK(d.async_scheduling);
}

TEST_CASE("batch defaults: the 70 GiB and A100 boundaries, and the V0 and 0.8 rules",
          "[replica][engine_request]") {
  const models::ModelSpec m = model_with_context(8192);
  // kV1Memory: >= 70 GiB exactly is big; a hair under is not; an A100 never is.
  CHECK(resolve_engine_config(EngineRequest{}, gpu("x", 70.0), m).max_num_seqs == 1024);
  CHECK(resolve_engine_config(EngineRequest{}, gpu("x", 69.99), m).max_num_seqs == 256);
  CHECK(resolve_engine_config(EngineRequest{}, gpu("x", 69.99), m).max_num_batched_tokens == 2048);
  CHECK(resolve_engine_config(EngineRequest{}, gpu("a100-80gb", 79.2), m).max_num_seqs == 256);
  // 0.8 (kV1DeviceName): the name decides, not the memory.
  EngineRequest v08;
  v08.vllm_version = "0.8";
  CHECK(resolve_engine_config(v08, gpu("h200", 139.8), m).max_num_seqs == 1024);
  CHECK(resolve_engine_config(v08, gpu("mi300x", 191.5), m).max_num_seqs == 256);
  // V0: 256 everywhere; without chunked prefill (<= 32K context) the budget is
  // max(max_model_len, 2048): 8192 here, 2048 for a 1,024-token model.
  EngineRequest v06;
  v06.vllm_version = "0.6";
  const EngineConfig c = resolve_engine_config(v06, gpu("h100-sxm", 79.6), m);
  CHECK(c.max_num_seqs == 256);
  CHECK_FALSE(c.enable_chunked_prefill);
  CHECK(c.max_num_batched_tokens == 8192);
  CHECK(resolve_engine_config(v06, gpu("h100-sxm", 79.6), model_with_context(1024))
            .max_num_batched_tokens == 2048);
  CHECK_FALSE(c.async_scheduling);  // no async scheduling before 0.10
}

TEST_CASE("chunked prefill on V0: the 32,768-token boundary, and off refused on V1",
          "[replica][engine_request]") {
  EngineRequest r;
  r.vllm_version = "0.7";
  r.max_model_len = 32768;  // use_long_context is max_model_len > 32768
  CHECK_FALSE(resolve_engine_config(r, gpu("a100-80gb", 79.2), model_with_context(131072))
                  .enable_chunked_prefill);
  r.max_model_len = 32769;
  CHECK(resolve_engine_config(r, gpu("a100-80gb", 79.2), model_with_context(131072))
            .enable_chunked_prefill);
  r.enable_chunked_prefill = false;  // set: taken as given, the budget covers the longest prompt
  const EngineConfig c =
      resolve_engine_config(r, gpu("a100-80gb", 79.2), model_with_context(131072));
  CHECK_FALSE(c.enable_chunked_prefill);
  CHECK(c.max_num_batched_tokens == 32769);
  EngineRequest v1;
  v1.enable_chunked_prefill = false;
  CHECK_THROWS_WITH(
      resolve_engine_config(v1, gpu("h100-sxm", 79.6), model_with_context(8192)),
      Catch::Contains("--no-enable-chunked-prefill: modelled for the V0 engine only"));
}

TEST_CASE("prefix caching: off by default on the V0 rows, on from 0.8, a set value as given",
          "[replica][engine_request]") {
  // V0 EngineArgs: enable_prefix_caching = False; V1 (the 0.8 row on): True.
  const models::ModelSpec m = model_with_context(8192);
  EngineRequest r;
  for (const char* v0 : {"0.6", "0.7", "0.7.3"}) {
    r.vllm_version = v0;
    CHECK_FALSE(resolve_engine_config(r, gpu("a100-80gb", 79.2), m).enable_prefix_caching);
  }
  r.vllm_version = "0.8";  // the first V1 row
  CHECK(resolve_engine_config(r, gpu("a100-80gb", 79.2), m).enable_prefix_caching);
  r.vllm_version = "0.6";
  r.enable_prefix_caching = true;  // --enable-prefix-caching on V0 is taken
  CHECK(resolve_engine_config(r, gpu("a100-80gb", 79.2), m).enable_prefix_caching);
  r.vllm_version = "0.19";
  r.enable_prefix_caching = false;
  CHECK_FALSE(resolve_engine_config(r, gpu("a100-80gb", 79.2), m).enable_prefix_caching);
}

TEST_CASE("async scheduling: the release's default, refused where vLLM has none",
          "[replica][engine_request]") {
  const models::ModelSpec m = model_with_context(8192);
  EngineRequest r;
  r.vllm_version = "0.13";  // the last release with it off by default
  CHECK_FALSE(resolve_engine_config(r, gpu("h100-sxm", 79.6), m).async_scheduling);
  r.vllm_version = "0.14";
  CHECK(resolve_engine_config(r, gpu("h100-sxm", 79.6), m).async_scheduling);
  r.vllm_version = "0.10";  // the first release with the flag
  r.async_scheduling = true;
  CHECK(resolve_engine_config(r, gpu("h100-sxm", 79.6), m).async_scheduling);
  r.vllm_version = "0.9";
  CHECK_THROWS_WITH(resolve_engine_config(r, gpu("h100-sxm", 79.6), m),
                    Catch::Contains("--async-scheduling: vLLM 0.9 has no async scheduling"));
  r.async_scheduling = false;  // --no-async-scheduling is what 0.9 does anyway
  CHECK_FALSE(resolve_engine_config(r, gpu("h100-sxm", 79.6), m).async_scheduling);
}

TEST_CASE("set values are checked at their boundaries", "[replica][engine_request]") {
  const models::ModelSpec m = model_with_context(8192);
  const auto resolve = [&](const EngineRequest& r) {
    return resolve_engine_config(r, gpu("h100-sxm", 79.6), m);
  };
  EngineRequest r;
  r.gpu_memory_utilization = 1.0;  // (0, 1]: 1 is allowed, 0 and above 1 are not
  CHECK(resolve(r).gpu_memory_utilization == 1.0);
  r.gpu_memory_utilization = 0.0;
  CHECK_THROWS_WITH(resolve(r), Catch::Contains("--gpu-memory-utilization: 0 is invalid"));
  r.gpu_memory_utilization = 1.01;
  CHECK_THROWS_WITH(resolve(r), Catch::Contains("--gpu-memory-utilization: 1.01 is invalid"));
  r = EngineRequest{};
  r.max_num_seqs = 8192;  // the budget must cover one token per sequence: 8192 = 8192 passes
  CHECK(resolve(r).max_num_batched_tokens == 8192);
  r.max_num_seqs = 8193;
  CHECK_THROWS_WITH(resolve(r), Catch::Contains("a value >= --max-num-seqs (8193)"));
  r = EngineRequest{};
  r.max_model_len = 2;  // the smallest accepted
  CHECK(resolve(r).max_model_len == 2);
  r.max_model_len = 1;
  CHECK_THROWS_WITH(resolve(r), Catch::Contains("--max-model-len: 1 is invalid"));
  r = EngineRequest{};
  r.max_num_seqs = 0;
  CHECK_THROWS_WITH(resolve(r), Catch::Contains("--max-num-seqs: 0 is invalid"));
}

TEST_CASE("prefix caching on a linear-attention model: off by default, refused when asked for",
          "[replica][engine_request]") {
  // vLLM's EngineArgs: enable_prefix_caching unset -> False for is_hybrid models; set, vLLM
  // turns it off again (MambaModelConfig) or caches block-aligned states: not modelled, refused.
  models::Deployment d;
  d.gpu = gpu("h100-sxm", 79.6);
  d.model = models::load_model(kQwen3Next);
  d.tensor_parallel_size = 4;
  REQUIRE(d.model.linear.num_layers > 0);
  EngineRequest r;
  const EngineConfig c = resolve_engine_config(r, d);
  CHECK_FALSE(c.enable_prefix_caching);
  CHECK(c.kv_mamba_groups == 3);
  r.enable_prefix_caching = false;
  CHECK_FALSE(resolve_engine_config(r, d).enable_prefix_caching);
  r.enable_prefix_caching = true;
  CHECK_THROWS_WITH(resolve_engine_config(r, d),
                    Catch::StartsWith("--enable-prefix-caching: ") &&
                        Catch::Contains("Gated DeltaNet (linear-attention) layers"));
  // A model without such layers keeps it on, unset or set.
  models::Deployment llama = d;
  llama.model = model_with_context(8192);
  CHECK(resolve_engine_config(EngineRequest{}, llama).enable_prefix_caching);
  CHECK(resolve_engine_config(r, llama).enable_prefix_caching);
}

TEST_CASE("pipeline stages resolve without async scheduling and with one KV group",
          "[replica][engine_request]") {
  models::Deployment d;
  d.gpu = gpu("h100-sxm", 79.6);
  d.model = models::load_model("gpt-oss-120b");
  const EngineConfig one = resolve_engine_config(EngineRequest{}, d);
  CHECK(one.async_scheduling);
  CHECK(one.kv_sliding_groups == 1);
  d.pipeline_parallel_size = 2;
  const EngineConfig two = resolve_engine_config(EngineRequest{}, d);
  CHECK_FALSE(two.async_scheduling);
  CHECK(two.kv_layers_per_block == 0);
  CHECK(two.kv_sliding_groups == 0);
  CHECK(two.kv_sliding_window == 0);
  CHECK(two.attention_window == 128);
}

}  // namespace
}  // namespace servesim::sim
