// Tests of the memory planner (models/memory_planner.h) against vLLM's KV sizing and the real KV
// capacities in data/realdata. docs/cost_model.md §Memory plan derives every constant.
#include "models/memory_planner.h"

#include <catch2/catch.hpp>

#include <string>

#include "models/model_spec.h"
#include "sim/base/error.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using testing::kGiB;

Deployment deploy(const ModelSpec& m, const hardware::GpuSpec& g, int tp = 1) {
  Deployment d;
  d.model = m;
  d.gpu = g;
  d.tensor_parallel_size = tp;
  return d;
}

MemoryPlanOptions options(int mbt, int seqs) {
  MemoryPlanOptions o;
  o.gpu_memory_utilization = 0.9;
  o.block_size = 16;
  o.max_num_batched_tokens = mbt;
  o.max_num_seqs = seqs;
  return o;
}

TEST_CASE("weights per rank match vLLM's 'Model loading took' figures", "[models][memory]") {
  // In details: params from the HF fields (REFERENCE.md §4) · 2 B + the RoPE cos/sin cache
  // (max_position_embeddings · head_dim · 2 B), which vLLM counts in the model's memory.
  // Expectations: CodeLlama-34B 33.744e9 params → 62.8571 GiB (vllm.log of both
  // inferencesim_eval_vllm0110 runs); Llama-3.1-8B 8.030e9 → 14.9888 GiB (vLLM logs on H100).
  const MemoryPlan code =
      plan_memory(deploy(testing::codellama_34b(), testing::h100_sxm()), options(4096, 256));
  CHECK_THAT(code.weight_bytes / kGiB, WithinRel(62.8571, 1e-5));
  const MemoryPlan llama =
      plan_memory(deploy(testing::llama31_8b(), testing::h100_sxm()), options(8192, 256));
  CHECK_THAT(llama.weight_bytes / kGiB, WithinRel(14.9888, 1e-5));
}

TEST_CASE("activation reserve: MLP peak of the profiling run plus the dummy sampler",
          "[models][memory]") {
  // In details: activations = mbt·(3·I/TP + 3·h)·2 B + 3·min(seqs, mbt)·V·4 B.
  // Expectations:
  //  * Llama-3.1-8B, mbt 8192, 256 seqs: 8192·(43008 + 12288)·2 = 0.844 GiB + 3·256·128256·4 =
  //    0.367 GiB → 1.211 GiB; a vLLM V1 log on H100 with these settings prints "PyTorch activation
  //    peak memory takes 1.21GiB".
  //  * CodeLlama-34B: mbt 4096/256 seqs minus mbt 64/32 seqs = 0.761 GiB; the two vllm.log files
  //    differ by 8.18 − 7.43 = 0.742 ± 0.002 GiB of KV (+2.5 %).
  const Deployment l8 = deploy(testing::llama31_8b(), testing::h100_sxm());
  CHECK_THAT(plan_memory(l8, options(8192, 256)).activation_bytes / kGiB, WithinRel(1.2107, 1e-3));
  const Deployment cl = deploy(testing::codellama_34b(), testing::h100_sxm());
  const double delta = plan_memory(cl, options(4096, 256)).activation_bytes -
                       plan_memory(cl, options(64, 32)).activation_bytes;
  CHECK_THAT(delta / kGiB, WithinRel(0.742, 0.03));
  // Under TP the MLP share of the forward activations splits, the sampler does not.
  const Deployment l8tp2 = deploy(testing::llama31_8b(), testing::h100_sxm(), 2);
  CHECK_THAT(plan_memory(l8tp2, options(8192, 256)).activation_bytes,
             WithinRel(8192.0 * (43008 / 2 + 12288) * 2 + 3.0 * 256 * 128256 * 4, 1e-12));
}

TEST_CASE("reproduces CodeLlama-34B KV capacity on H100 (vLLM 0.11)", "[models][memory]") {
  // In details (realdata/inferencesim_eval_vllm0110/*/vllm.log): budget 0.9 · 79.19 GiB = 71.27
  // GiB; weights 62.857 GiB; KV 192 KiB/token (3 MiB per 16-token block).
  //   mbt 4096, 256 seqs: measured 2537 blocks = 40,592 tokens ("Available KV cache memory: 7.43").
  //   mbt 64,   32 seqs:  measured 2790 blocks = 44,640 tokens ("Available KV cache memory: 8.18").
  // The one free constant, non-torch memory (catalog: 230 MB = 0.214 GiB), sits where the mbt-64
  // log puts it; with this activation model the two logs imply 0.197 and 0.215 GiB, so the check
  // is on the activation slope: predicted 2531 (−0.24 %) and 2791 (+0.04 %) blocks.
  // Expectations: each within 0.5 % (±13 blocks); the logs' 0.01 GiB rounding alone is ±1 block.
  const Deployment d = deploy(testing::codellama_34b(), testing::h100_sxm());
  const MemoryPlan big = plan_memory(d, options(4096, 256));
  const MemoryPlan small = plan_memory(d, options(64, 32));
  CHECK(big.kv_bytes_per_token == 196608);
  CHECK_THAT(static_cast<double>(big.num_blocks), WithinRel(2537.0, 0.005));
  CHECK_THAT(static_cast<double>(small.num_blocks), WithinRel(2790.0, 0.005));
  CHECK_THAT(static_cast<double>(big.kv_tokens), WithinRel(40592.0, 0.005));
  CHECK_THAT(static_cast<double>(small.kv_tokens), WithinRel(44640.0, 0.005));
  CHECK(big.kv_tokens == big.num_blocks * 16);
  CHECK_THAT(big.budget_bytes / kGiB, WithinRel(71.2705, 1e-5));
}

TEST_CASE("the shipped catalogs reproduce the CodeLlama-34B KV capacities", "[models][memory]") {
  // The same check with hardware/catalog/h100-sxm.json and models/catalog/codellama-34b.json, as
  // `servesim simulate --model codellama-34b --gpu h100-sxm` would plan it.
  // Expectations: 2537 and 2790 blocks within 0.5 %.
  Deployment d;
  d.model = load_model("codellama-34b");
  d.gpu = hardware::load_gpu("h100-sxm");
  CHECK_THAT(static_cast<double>(plan_memory(d, options(4096, 256)).num_blocks),
             WithinRel(2537.0, 0.005));
  CHECK_THAT(static_cast<double>(plan_memory(d, options(64, 32)).num_blocks),
             WithinRel(2790.0, 0.005));
}

TEST_CASE("reproduces Llama-3.1-8B KV capacity on RTX 4090 (vLLM 0.19)", "[models][memory]") {
  // In details (realdata/llmservingsim/bench_examples/RTX4090/Llama-3.1-8B/vllm/meta.json):
  // device 25,250,627,584 B, util 0.9, mbt 2048, 256 seqs, num_gpu_blocks 2588 (41,408 tokens).
  // Budget 21.165 GiB − weights 14.989 GiB − KV 2588 · 2 MiB leaves 1.120 GiB; our activations
  // take 0.578 GiB, so this GPU/vLLM version's non-torch memory is 0.542 GiB (set in hand_specs.h;
  // 2.5× the H100/vLLM 0.11 value; recent vLLM also reserves CUDA-graph memory before sizing KV).
  // With one datum and one fitted constant this checks the arithmetic, not the model: with the
  // H100's 0.214 GiB instead the prediction would be 2756 blocks (+6.5 %).
  // Expectations: 2588 blocks within 0.5 %.
  const Deployment d = deploy(testing::llama31_8b(), testing::rtx4090());
  const MemoryPlan p = plan_memory(d, options(2048, 256));
  CHECK(p.kv_bytes_per_token == 131072);
  CHECK_THAT(static_cast<double>(p.num_blocks), WithinRel(2588.0, 0.005));
  CHECK_THAT(p.activation_bytes / kGiB, WithinRel(0.5779, 1e-3));
}

TEST_CASE("fp8 KV cache doubles the blocks", "[models][memory]") {
  // Expectations: the KV bytes are unchanged and a token takes half the bytes, so
  // blocks_fp8 ∈ {2·b, 2·b + 1} (floor of twice the quotient).
  for (int tp : {2, 4, 8}) {
    Deployment d = deploy(testing::llama31_70b(), testing::h100_sxm(), tp);
    const MemoryPlan bf16 = plan_memory(d, options(8192, 1024));
    d.kv_cache_dtype = "fp8";
    const MemoryPlan fp8 = plan_memory(d, options(8192, 1024));
    CHECK(fp8.kv_bytes_per_token * 2 == bf16.kv_bytes_per_token);
    CHECK(fp8.num_blocks >= 2 * bf16.num_blocks);
    CHECK(fp8.num_blocks <= 2 * bf16.num_blocks + 1);
  }
}

TEST_CASE("tensor and pipeline parallel shard weights and KV", "[models][memory]") {
  // Expectations: Llama-3.1-70B KV per token per rank is 2·80·8·128·2 = 327,680 B at TP1,
  // /2 at TP2, /8 at TP8 (1 KV head per rank), and stays at 1 head per rank at TP16 > 8 heads
  // (replicated). PP2 keeps 40 layers per rank: half again. Weights per rank ≈ 1/TP.
  const ModelSpec m = testing::llama31_70b();
  const hardware::GpuSpec g = testing::h100_sxm();
  CHECK(plan_memory(deploy(m, g, 2), options(8192, 1024)).kv_bytes_per_token == 163840);
  CHECK(plan_memory(deploy(m, g, 8), options(8192, 1024)).kv_bytes_per_token == 40960);
  Deployment pp = deploy(m, g, 4);
  pp.pipeline_parallel_size = 2;
  const MemoryPlan p = plan_memory(pp, options(8192, 1024));
  CHECK(p.kv_bytes_per_token == 2 * 40 * 2 * 128 * 2);
  const MemoryPlan tp8 = plan_memory(deploy(m, g, 8), options(8192, 1024));
  // TP4·PP2 holds 40 layers/4 + one vocab matrix/4; TP8 holds 80 layers/8 + two vocab matrices/8.
  CHECK_THAT(p.weight_bytes, WithinRel(tp8.weight_bytes, 0.01));
  Deployment tp16 = deploy(m, g, 16);
  CHECK(plan_memory(tp16, options(8192, 1024)).kv_bytes_per_token == 2 * 80 * 1 * 128 * 2);
}

TEST_CASE("llmk8s A100-40GB TP8 Llama-3.3-70B: ~17.9 GiB of KV per GPU", "[models][memory]") {
  // In details: the llmk8s server logs (realdata README) report ~17.9 GiB of KV per GPU for the
  // TP4×PP2 runs (vLLM 0.8.3, V0 fallback, mbt 2048). Budget 0.9 · 39.39 GiB = 35.45 GiB; weights
  // per rank 16.5 GiB; activations 0.5 GiB; other 0.21 + 0.35 (NCCL) GiB → 17.9 GiB.
  // Expectations: within 3 % (different engine generation; only one rounded figure).
  Deployment d = deploy(testing::llama31_70b(), testing::a100_40gb(), 4);
  d.pipeline_parallel_size = 2;
  const MemoryPlan p = plan_memory(d, options(2048, 256));
  CHECK_THAT(p.kv_bytes / kGiB, WithinRel(17.9, 0.03));
}

TEST_CASE("a model that does not fit names the shortfall and the smallest TP", "[models][memory]") {
  // In details: Llama-3.1-70B on one H100: weights 131.4 GiB + activations 3.2 GiB (mbt 8192,
  // 1024 seqs) + other 0.2 GiB against 0.9 · 79.19 = 71.3 GiB: short by 63.5 GiB. At TP2 a rank
  // holds 65.7 GiB + 2.5 + 0.56 (incl. NCCL) → 2.5 GiB of KV: fits.
  // Expectations: ConfigError with exactly that message.
  const Deployment d = deploy(testing::llama31_70b(), testing::h100_sxm(), 1);
  try {
    plan_memory(d, options(8192, 1024));
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "llama-3.1-70b does not fit on h100-sxm with tensor-parallel-size 1: weights 131.4 GiB "
          "+ activations 3.2 GiB + other 0.2 GiB exceed the 71.3 GiB budget "
          "(gpu-memory-utilization 0.90) by 63.5 GiB; the smallest tensor-parallel-size that "
          "fits is 2");
  }
  CHECK(plan_memory(deploy(testing::llama31_70b(), testing::h100_sxm(), 2), options(8192, 1024))
            .num_blocks > 0);

  // Llama-3.1-405B on 40 GB A100s: 94.5 GiB per rank even at TP8.
  const Deployment huge = deploy(testing::llama31_405b(), testing::a100_40gb(), 8);
  CHECK_THROWS_WITH(plan_memory(huge, options(2048, 256)),
                    Contains("llama-3.1-405b does not fit on a100-sxm-40gb with "
                             "tensor-parallel-size 8") &&
                        Contains("the smallest tensor-parallel-size that fits is none up to 8"));

  // Room for the weights but less than one block: also an error.
  Deployment tight = deploy(testing::llama31_8b(), testing::h100_sxm());
  tight.gpu.memory_bytes = (14.9888 + 1.2107 + 0.001) * kGiB / 0.9 + 230e6 / 0.9;
  CHECK_THROWS_WITH(plan_memory(tight, options(8192, 256)),
                    Contains("less than one 16-token block"));
}

TEST_CASE("num_gpu_blocks_override replaces the computed count", "[models][memory]") {
  const Deployment d = deploy(testing::llama31_8b(), testing::h100_sxm());
  MemoryPlanOptions o = options(8192, 256);
  const int64_t computed = plan_memory(d, o).num_blocks;
  CHECK(computed > 20000);
  o.num_gpu_blocks_override = 1000;
  const MemoryPlan p = plan_memory(d, o);
  CHECK(p.num_blocks == 1000);
  CHECK(p.kv_tokens == 16000);
}

TEST_CASE("memory plan: bad options are ConfigErrors", "[models][memory]") {
  const Deployment d = deploy(testing::llama31_8b(), testing::h100_sxm());
  MemoryPlanOptions o = options(8192, 256);
  o.gpu_memory_utilization = 1.5;
  CHECK_THROWS_AS(plan_memory(d, o), ConfigError);
  o = options(8192, 256);
  o.block_size = 0;
  CHECK_THROWS_AS(plan_memory(d, o), ConfigError);
}

TEST_CASE("MXFP4 experts: weights per rank at 4.25 bits per expert weight", "[models][memory]") {
  // Expectations: gpt-oss-120b (MXFP4 checkpoint) holds exactly 36 · 128 · 3·2880·2880/TP expert
  // weights per rank × (2 − 0.53125) bytes fewer than the same model in bf16; nothing else changes.
  // (At TP4: in bf16 the model does not fit on two H100s.)
  Deployment d = deploy(load_model("gpt-oss-120b"), testing::h100_sxm(), 4);
  Deployment bf = d;
  bf.model.checkpoint_quantization.clear();
  const double experts = 36.0 * 128 * 3 * 2880 * 2880 / 4;
  CHECK_THAT(plan_memory(bf, options(8192, 64)).weight_bytes -
                 plan_memory(d, options(8192, 64)).weight_bytes,
             WithinRel(experts * (2 - 0.53125), 1e-9));
  // About 30 GiB per rank at TP2 (in bf16 it would be about 109 GiB: more than an H100 has).
  d.tensor_parallel_size = 2;
  CHECK(plan_memory(d, options(8192, 64)).weight_bytes / kGiB == Approx(30.4).margin(0.5));
}

TEST_CASE("MLA cache entries aligned to 256 bytes, as vLLM 0.7's CacheEngine holds them",
          "[models][memory]") {
  // DeepSeek-R1: 61 layers of one 512 + 64 = 576-element latent entry, the same on every rank.
  // bf16: 1,152 B per entry, 1,280 B aligned → 61 · 1,280 = 78,080 B per token (70,272
  // unaligned); fp8: 576 B → 768 B → 46,848 B (35,136 unaligned). An entry already a multiple
  // of the alignment keeps its size.
  hardware::GpuSpec big = testing::h100_sxm();
  big.memory_bytes = 150e9;  // the FP8 checkpoint's ~84 GB per rank fit, KV is left
  Deployment d = deploy(load_model("deepseek-r1"), big, 8);
  MemoryPlanOptions o = options(8192, 256);
  o.mla_entry_align_bytes = 0;
  CHECK(plan_memory(d, o).kv_bytes_per_token == 70272);
  o.mla_entry_align_bytes = 256;
  CHECK(plan_memory(d, o).kv_bytes_per_token == 78080);
  o.mla_entry_align_bytes = 128;  // 1,152 = 9 · 128: unchanged
  CHECK(plan_memory(d, o).kv_bytes_per_token == 70272);
  d.kv_cache_dtype = "fp8";
  o.mla_entry_align_bytes = 256;
  CHECK(plan_memory(d, o).kv_bytes_per_token == 46848);
  o.mla_entry_align_bytes = 0;
  CHECK(plan_memory(d, o).kv_bytes_per_token == 35136);
}

TEST_CASE("vLLM 0.7's MLA keeps its absorbed decode weights beside the raw ones",
          "[models][memory]") {
  // DeepSeek-R1 (fp8) at TP 8: H = 128 / 8 = 16 heads, q_lora_rank 1,536, kv_lora_rank 512,
  // rope 64, nope 128, v 128, hidden 7,168. Per layer and rank:
  //   W_QR   1,536 × 16·64 × 2 B (bf16)            =  3,145,728
  //   W_Q_UK 1,536 × 16·512 × 1 B (fp8)            = 12,582,912
  //   W_UV_O 16·512 × 7,168 × 1 B (fp8)            = 58,720,256
  //   kv_b_proj dequantized, 16·256 × 512 × 2 B    =  4,194,304
  //   sum 78,643,200 B; × 61 layers = 4,797,235,200 B (4.47 GiB). The dequantized kv_b_proj is
  //   held by every release (mla_extra_weight_bytes_per_layer), the rest only by 0.7:
  //   74,448,896 B × 61 = 4,541,382,656 B.
  hardware::GpuSpec big = testing::h100_sxm();
  big.memory_bytes = 150e9;
  Deployment d = deploy(load_model("deepseek-r1"), big, 8);
  CHECK(mla_extra_weight_bytes_per_layer(d, 8, false) == 4194304.0);
  CHECK(mla_extra_weight_bytes_per_layer(d, 8, true) == 78643200.0);
  MemoryPlanOptions o = options(8192, 256);
  const double without = plan_memory(d, o).weight_bytes;
  o.mla_absorbed_weights = true;
  CHECK(plan_memory(d, o).weight_bytes - without == Approx(4541382656.0).epsilon(1e-12));
  // bf16 weights: W_UK and W_UV are views of kv_b_proj, nothing extra without absorption.
  Deployment bf16 = d;
  bf16.model.checkpoint_quantization = "";
  CHECK(mla_extra_weight_bytes_per_layer(bf16, 8, false) == 0.0);
  CHECK(mla_extra_weight_bytes_per_layer(deploy(load_model("llama-3.1-8b"), big), 1, true) == 0.0);
  // TP 4: twice the heads per rank, so twice each term.
  d.tensor_parallel_size = 4;
  big.memory_bytes = 300e9;
  d.gpu = big;
  o.mla_absorbed_weights = false;
  const double without4 = plan_memory(d, o).weight_bytes;
  o.mla_absorbed_weights = true;
  CHECK(plan_memory(d, o).weight_bytes - without4 == Approx(2 * 4541382656.0).epsilon(1e-12));
  // A dense model is unaffected.
  Deployment dense = deploy(load_model("llama-3.1-8b"), testing::h100_sxm(), 1);
  o.mla_absorbed_weights = false;
  const double a = plan_memory(dense, o).weight_bytes;
  o.mla_absorbed_weights = true;
  CHECK(plan_memory(dense, o).weight_bytes == a);
}

TEST_CASE("MoE activation peak holds the fused-MoE workspace", "[models][memory]") {
  // activations = (mbt·3·h + M·k·per_pick)·2 B + 3·min(seqs, mbt)·V·4 B, per_pick = max(N, K) +
  // N/2 from vLLM 0.8 (caches 1 and 3 share a buffer) or N + N/2 + K before, N = 2·I_part,
  // K = hidden, M = min(tokens, 32768) (memory_planner.cpp).
  hardware::GpuSpec big = testing::h100_sxm();
  big.memory_bytes = 300e9;
  const double sampler_r1 = 3.0 * 1024 * 129280 * 4;
  // DeepSeek-R1 at TP 8, mbt 32,000 (the public vLLM 0.7.3 log's flags): N = 2·2048/8 = 512.
  Deployment r1 = deploy(load_model("deepseek-r1"), big, 8);
  MemoryPlanOptions o = options(32000, 1024);
  const double hidden_r1 = 32000.0 * 3 * 7168 * 2;
  CHECK_THAT(plan_memory(r1, o).activation_bytes,
             WithinRel(hidden_r1 + 32000.0 * 8 * (7168 + 256) * 2 + sampler_r1, 1e-12));
  o.fused_moe_separate_caches = true;  // vLLM 0.7: 3.78 GiB of workspace
  CHECK_THAT(plan_memory(r1, o).activation_bytes,
             WithinRel(hidden_r1 + 32000.0 * 8 * (512 + 256 + 7168) * 2 + sampler_r1, 1e-12));
  CHECK_THAT(32000.0 * 8 * (512 + 256 + 7168) * 2 / kGiB, WithinRel(3.784, 1e-3));
  // Expert parallel: whole experts, N = 4096, still below K = 7168.
  o.fused_moe_separate_caches = false;
  r1.enable_expert_parallel = true;
  CHECK_THAT(plan_memory(r1, o).activation_bytes,
             WithinRel(hidden_r1 + 32000.0 * 8 * (7168 + 2048) * 2 + sampler_r1, 1e-12));
  // Qwen3-30B-A3B (hidden 2,048, 8 of 128 experts of 768): at TP 1 N = 1,536 < K; mbt 8,192.
  const double sampler_q = 3.0 * 256 * 151936 * 4;
  Deployment q = deploy(load_model("qwen3-30b-a3b"), big, 1);
  CHECK_THAT(plan_memory(q, options(8192, 256)).activation_bytes,
             WithinRel(8192.0 * 3 * 2048 * 2 + 8192.0 * 8 * (2048 + 768) * 2 + sampler_q, 1e-12));
  // From vLLM 0.14 unquantized experts run the modular kernel's TritonExperts: max(N/2, K) +
  // max(N, K) = 2,048 + 2,048 per pick. Quantized (fp8) experts keep the 0.8 form.
  MemoryPlanOptions modular = options(8192, 256);
  modular.fused_moe_modular_workspace = true;
  CHECK_THAT(plan_memory(q, modular).activation_bytes,
             WithinRel(8192.0 * 3 * 2048 * 2 + 8192.0 * 8 * (2048 + 2048) * 2 + sampler_q, 1e-12));
  Deployment r1_modular = deploy(load_model("deepseek-r1"), big, 8);
  MemoryPlanOptions r1_opts = options(32000, 1024);
  const double r1_08 = plan_memory(r1_modular, r1_opts).activation_bytes;
  r1_opts.fused_moe_modular_workspace = true;
  CHECK(plan_memory(r1_modular, r1_opts).activation_bytes == r1_08);
  // The chunk: with 4 data-parallel ranks the MoE layer gathers 4 · 16,384 tokens, of which the
  // workspace holds 32,768 (experts sliced over TP·DP = 4: N = 384).
  q.data_parallel_size = 4;
  const double sampler_q16 = 3.0 * 256 * 151936 * 4;
  CHECK_THAT(
      plan_memory(q, options(16384, 256)).activation_bytes,
      WithinRel(16384.0 * 3 * 2048 * 2 + 32768.0 * 8 * (2048 + 192) * 2 + sampler_q16, 1e-12));
}

TEST_CASE("MXFP4 experts on Marlin are stored at their padded shape", "[models][memory]") {
  // Below compute capability 9.0 vLLM allocates each MXFP4 expert for Marlin with the hidden size
  // rounded up to 256 and the intermediate width per partition to 128 (models/marlin_moe.h):
  // gpt-oss-120b at TP4 holds 36 · 128 experts of 3·3072·768 instead of 3·2880·720 weights per
  // rank, at 0.53125 B; nothing else changes. Under expert parallelism a rank holds 128/4 whole
  // experts of 3·3072·2944.
  Deployment hopper = deploy(load_model("gpt-oss-120b"), testing::h100_sxm(), 4);
  hopper.gpu.architecture = "hopper";
  Deployment ampere = hopper;
  ampere.gpu.architecture = "ampere";
  const double w = kMxfp4BytesPerWeight;
  CHECK_THAT(plan_memory(ampere, options(8192, 64)).weight_bytes -
                 plan_memory(hopper, options(8192, 64)).weight_bytes,
             WithinRel(36.0 * 128 * 3 * (3072.0 * 768 - 2880.0 * 720) * w, 1e-9));
  hopper.enable_expert_parallel = true;
  ampere.enable_expert_parallel = true;
  CHECK_THAT(plan_memory(ampere, options(8192, 64)).weight_bytes -
                 plan_memory(hopper, options(8192, 64)).weight_bytes,
             WithinRel(36.0 * 32 * 3 * (3072.0 * 2944 - 2880.0 * 2880) * w, 1e-9));
}

TEST_CASE("hybrid KV blocks hold one group of layers", "[models][memory]") {
  // gpt-oss-120b, 18 full + 18 sliding layers: vLLM's hybrid manager makes blocks of 18 layers
  // (page = 18 · block_size · kv hidden size) shared by 2 groups, and reports num_blocks / 2 ·
  // block_size tokens. The same KV memory holds twice the blocks; the tokens reported are the
  // same (to one block of rounding).
  Deployment d;
  d.model = load_model("gpt-oss-120b");
  d.gpu = hardware::load_gpu("h100-sxm");
  d.tensor_parallel_size = 2;
  const MemoryPlan all = plan_memory(d, options(8192, 1024));
  MemoryPlanOptions o = options(8192, 1024);
  o.kv_layers_per_block = 18;
  o.kv_cache_groups = 2;
  const MemoryPlan hybrid = plan_memory(d, o);
  CHECK(hybrid.kv_bytes == all.kv_bytes);
  CHECK(hybrid.kv_bytes_per_token == all.kv_bytes_per_token);  // every layer, per token
  // floor(2x) is 2 floor(x) or 2 floor(x) + 1.
  CHECK(hybrid.num_blocks >= 2 * all.num_blocks);
  CHECK(hybrid.num_blocks <= 2 * all.num_blocks + 1);
  CHECK(hybrid.kv_tokens == hybrid.num_blocks / 2 * 16);
  CHECK(hybrid.kv_tokens == all.kv_tokens);
  // kv_layers_per_block >= the layers: the plain layout.
  o.kv_layers_per_block = 36;
  o.kv_cache_groups = 1;
  CHECK(plan_memory(d, o).num_blocks == all.num_blocks);
}

}  // namespace
}  // namespace servesim::models
