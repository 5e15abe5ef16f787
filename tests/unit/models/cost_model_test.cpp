// Tests of the roofline step cost model (models/roofline_cost_model.h) and of deployment.cpp.
// Each test states the closed form it expects; numbers are real model dimensions and GPU peaks.
#include "models/roofline_cost_model.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <vector>

#include "models/deployment.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using testing::decode;
using testing::h100_sxm;
using testing::llama31_70b;
using testing::llama31_8b;
using testing::mixtral_8x7b;
using testing::prefill;

Deployment deploy(const ModelSpec& m, int tp = 1) {
  Deployment d;
  d.model = m;
  d.gpu = h100_sxm();
  d.tensor_parallel_size = tp;
  return d;
}

// Linear-layer parameters of one Llama layer on one TP rank, written out from the HF fields.
double llama_layer_linear_params(const ModelSpec& m, int tp) {
  const double h = m.hidden_size, d = m.head_dim;
  const double q = h * m.num_heads * d / tp;
  const double kv = 2 * h * std::max<int64_t>(1, m.num_kv_heads / tp) * d;
  const double o = m.num_heads * d * h / tp;
  const double mlp = 3 * h * m.intermediate_size / tp;
  return q + kv + o + mlp;
}

std::vector<BatchShape> shape_grid() {
  std::vector<BatchShape> shapes;
  for (int64_t b : {1, 3, 9, 16, 100, 256, 511, 512, 513, 1024}) {
    for (int64_t ctx : {1, 500, 8000}) {
      shapes.push_back(decode(b, ctx));
    }
  }
  for (int64_t q : {1, 17, 512, 2048, 8192}) {
    for (int64_t c : {0, 1000, 30000}) {
      shapes.push_back(prefill(q, c));
      BatchShape mixed = prefill(q, c);
      mixed.decode_seqs = 40;
      mixed.decode_context_tokens = 40 * 700;
      mixed.sampled_seqs = 41;
      shapes.push_back(mixed);
    }
  }
  return shapes;
}

TEST_CASE("default_cuda_graph_sizes follows vLLM v0.11+", "[models][cost]") {
  // In details: [1,2,4] + range(8,256,8) + range(256, max+1, 16), max = min(2·seqs, 512), every
  // size <= max and <= max_num_batched_tokens.
  // Expectations: seqs 256 → max 512: 3 + 31 + 17 = 51 sizes (the RTX 4090 vLLM 0.19 meta.json
  // lists exactly these); seqs 1024 → same list; mbt 64 caps at 64; seqs 16 → max 32.
  const std::vector<int> s256 = default_cuda_graph_sizes(256, 8192);
  REQUIRE(s256.size() == 51);
  CHECK(s256.front() == 1);
  CHECK(s256[3] == 8);
  CHECK(s256[33] == 248);
  CHECK(s256[34] == 256);
  CHECK(s256[35] == 272);
  CHECK(s256.back() == 512);
  CHECK(default_cuda_graph_sizes(1024, 8192) == s256);
  CHECK(default_cuda_graph_sizes(256, 64) ==
        std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64});
  CHECK(default_cuda_graph_sizes(16, 8192) == std::vector<int>{1, 2, 4, 8, 16, 24, 32});
  CHECK(default_cuda_graph_sizes(256, 2048) == s256);  // mbt 2048 > 512: no cut
  CHECK(default_cuda_graph_sizes(256, 300).back() == 288);
}

TEST_CASE("deployment dtype helpers", "[models][cost]") {
  Deployment d = deploy(llama31_8b());
  CHECK(d.weight_bytes_per_param() == 2);
  CHECK(d.kv_dtype_bytes() == 2);
  d.quantization = "fp8";
  d.kv_cache_dtype = "fp8_e5m2";
  CHECK(d.weight_bytes_per_param() == 1);
  CHECK(d.kv_dtype_bytes() == 1);
  d.kv_cache_dtype = "fp8";
  CHECK(d.kv_dtype_bytes() == 1);
  d.kv_cache_dtype = "fp8_e4m3";
  CHECK(d.kv_dtype_bytes() == 1);
}

TEST_CASE("decode at batch 1 is never faster than streaming the weights", "[models][cost]") {
  // In details: a decode step reads every linear weight of every layer plus the LM head once.
  // Expectations: total_s >= Σ weight bytes per rank / HBM bandwidth, for the ideal and the
  // roofline variant, at TP 1 and TP 4. For Llama-3.1-8B TP1 that is
  // (32·218.1M + 525.3M)·2 B / 3.35e12 B/s = 4.48 ms.
  for (int tp : {1, 4}) {
    for (const ModelSpec& m : {llama31_8b(), llama31_70b()}) {
      Deployment d = deploy(m, tp);
      const double weights = (m.num_layers * llama_layer_linear_params(m, tp) +
                              static_cast<double>(m.vocab_size) * m.hidden_size / tp) *
                             2.0;
      const double floor_s = weights / d.gpu.hbm_bandwidth_bytes_per_s;
      const RooflineCostModel roofline(d);
      const IdealCostModel ideal(d);
      CHECK_THAT(roofline.min_weight_bytes_per_step(), WithinRel(weights, 1e-9));
      CHECK(ideal.estimate(decode(1, 100)).total_s >= floor_s);
      CHECK(roofline.estimate(decode(1, 100)).total_s >= floor_s / d.gpu.memory_efficiency);
      if (tp == 1 && m.num_layers == 32) {
        CHECK_THAT(floor_s, WithinRel(4.48e-3, 0.01));
      }
    }
  }
}

TEST_CASE("ideal is a lower bound of the roofline for every shape", "[models][cost]") {
  // Expectations: η <= 1, ramp and latency >= 0, padding only raises T, overheads >= 0, so the
  // ideal total (and each of its parts) never exceeds the roofline's.
  for (int tp : {1, 2, 8}) {
    Deployment d = deploy(llama31_70b(), tp);
    d.gpu.step_overhead_s = 1e-3;
    d.gpu.per_seq_overhead_s = 1e-5;
    const RooflineCostModel roofline(d);
    const IdealCostModel ideal(d);
    for (const BatchShape& s : shape_grid()) {
      const StepCost r = roofline.estimate(s);
      const StepCost i = ideal.estimate(s);
      CHECK(i.total_s <= r.total_s);
      CHECK(i.linear_s <= r.linear_s);
      CHECK(i.attention_s <= r.attention_s);
      CHECK(i.lm_head_s <= r.lm_head_s);
      CHECK(i.comm_s <= r.comm_s);
      CHECK(i.overhead_s == 0);
    }
  }
  Deployment moe = deploy(mixtral_8x7b(), 2);
  for (const BatchShape& s : shape_grid()) {
    CHECK(IdealCostModel(moe).estimate(s).total_s <= RooflineCostModel(moe).estimate(s).total_s);
  }
}

TEST_CASE("parts sum to the total, empty costs 0, non-empty costs > 0", "[models][cost]") {
  Deployment d = deploy(llama31_70b(), 4);
  d.pipeline_parallel_size = 2;
  d.gpu.step_overhead_s = 2e-3;
  d.gpu.per_seq_overhead_s = 2e-5;
  const RooflineCostModel model(d);
  CHECK(model.estimate(BatchShape{}).total_s == 0);
  for (const BatchShape& s : shape_grid()) {
    const StepCost c = model.estimate(s);
    CHECK(c.total_s > 0);
    CHECK(std::isfinite(c.total_s));
    CHECK_THAT(c.linear_s + c.attention_s + c.lm_head_s + c.comm_s + c.overhead_s,
               WithinRel(c.total_s, 1e-12));
  }
  // A prefill chunk that does not finish its prompt samples nothing: no LM head.
  BatchShape chunk = prefill(512, 0);
  chunk.sampled_seqs = 0;
  CHECK(model.estimate(chunk).lm_head_s == 0);
}

TEST_CASE("monotone: more tokens or context never makes a step faster", "[models][cost]") {
  // Expectations: raising any one BatchShape field by any amount keeps total_s the same or larger
  // (also across the CUDA-graph boundary at 512 tokens, and for MoE).
  for (const Deployment& d :
       {deploy(llama31_8b()), deploy(llama31_70b(), 8), deploy(mixtral_8x7b(), 2)}) {
    Deployment dd = d;
    dd.gpu.step_overhead_s = 1e-3;
    dd.gpu.per_seq_overhead_s = 1e-5;
    const RooflineCostModel model(dd);
    for (const BatchShape& base : shape_grid()) {
      const double t0 = model.estimate(base).total_s;
      for (int64_t add : {1, 7, 100, 5000}) {
        BatchShape s = base;
        s.prefill_seqs += add;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.prefill_tokens += add;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.prefill_attn_work += add * 1000.0;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.prefill_context_tokens += add;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.decode_seqs += add;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.decode_context_tokens += add;
        CHECK(model.estimate(s).total_s >= t0);
        s = base;
        s.sampled_seqs += add;
        CHECK(model.estimate(s).total_s >= t0);
      }
    }
    // Decode batch sweep 1..1100 at fixed context per request.
    double prev = 0;
    for (int64_t b = 1; b <= 1100; ++b) {
      const double t = model.estimate(decode(b, 1000)).total_s;
      CHECK(t >= prev);
      prev = t;
    }
  }
}

TEST_CASE("large compute-bound prefill costs 2·params·tokens/(peak·η)", "[models][cost]") {
  // In details: Llama-3.1-8B, one 8192-token prompt on H100, η_c = 0.713. Linear FLOPs =
  // 2 · 32 · 218.1M · 8192 = 1.14e14 → 162 ms at 989e12 · 0.713; far above the 14 GB weight stream
  // (5 ms), so every GEMM is compute-bound.
  // Expectations: linear_s = that · (1 + a/T) + 4 ops · 32 layers · t0 → within 3 % of the pure
  // formula (a/T = 128/8192 = 1.6 %, latency 0.8 ms = 0.5 %), and within 0.1 % of the exact one.
  // Attention adds 4·H·d·q²/2 per layer = 32 · 4·4096·8192²/2 = 1.76e13 FLOPs (15 % of linear).
  const Deployment d = deploy(llama31_8b());
  const RooflineCostModel model(d);
  const StepCost c = model.estimate(prefill(8192));
  const double tokens = 8192;
  const double params = d.model.num_layers * llama_layer_linear_params(d.model, 1);
  const double peak = 989e12 * d.gpu.compute_efficiency;
  const double pure = 2 * params * tokens / peak;
  CHECK_THAT(c.linear_s, WithinRel(pure, 0.03));
  const double exact = 2 * params * (tokens + kDefaultComputeRampTokens) / peak +
                       d.model.num_layers * 4 * kDefaultOpLatencyS;
  CHECK_THAT(c.linear_s, WithinRel(exact, 1e-3));
  const double attn_flops = d.model.num_layers * 4.0 * 32 * 128 * tokens * tokens / 2;
  CHECK_THAT(c.attention_s,
             WithinRel(attn_flops / peak + d.model.num_layers * kDefaultOpLatencyS, 1e-3));
  // The ideal variant: the same FLOPs at 100 % of peak, no ramp.
  const StepCost i = IdealCostModel(d).estimate(prefill(8192));
  CHECK_THAT(i.linear_s, WithinRel(2 * params * tokens / 989e12, 1e-3));
}

TEST_CASE("TP2 halves the linear time of a memory-bound decode, plus all-reduces",
          "[models][cost]") {
  // In details: Llama-3.1-8B decode at batch 1 reads 13.96 GB of layer weights at TP1 and exactly
  // half per rank at TP2 (8 KV heads split 4/4). Activation bytes (a few KB) are negligible.
  // Expectations: (linear_s − 32 layers · 4 ops · t0) halves within 0.1 %; comm_s is 0 at TP1 and
  // at TP2 equals 64 all-reduces of 1 token · 4096 · 2 B = 8 KiB (batch 1 is its own graph size)
  // plus the all-gather of one row of 128256 bf16 logits.
  const RooflineCostModel tp1(deploy(llama31_8b(), 1));
  const RooflineCostModel tp2(deploy(llama31_8b(), 2));
  const StepCost c1 = tp1.estimate(decode(1, 1000));
  const StepCost c2 = tp2.estimate(decode(1, 1000));
  const double lat = 32 * 4 * kDefaultOpLatencyS;
  CHECK_THAT(c2.linear_s - lat, WithinRel((c1.linear_s - lat) / 2, 1e-3));
  CHECK(c1.comm_s == 0);
  const hardware::LinkSpec link = h100_sxm().scale_up;
  const double expected_comm =
      32 * 2 * all_reduce_s(1 * 4096 * 2.0, 2, link) + ring_all_gather_s(128256 * 2.0, 2, link);
  CHECK_THAT(c2.comm_s, WithinRel(expected_comm, 1e-12));
  // TP2 is faster than TP1 in total.
  CHECK(c2.total_s < c1.total_s);
}

TEST_CASE("ring all-reduce α–β formula at TP 2 and 8", "[models][cost]") {
  // In details: t = 2(p−1)·α + 2(p−1)/p · bytes / bw.
  // Expectations (α = 2 µs, bw = 450 GB/s, 64 MiB): TP2: 4 µs + 1·67.1 MB/450 GB/s = 153.1 µs;
  // TP8: 28 µs + 1.75·67.1 MB/450 GB/s = 288.9 µs. Zero for one rank or no bytes.
  const hardware::LinkSpec link{"nvlink", 450e9, 2e-6};
  const double bytes = 64.0 * 1024 * 1024;
  CHECK_THAT(ring_all_reduce_s(bytes, 2, link), WithinRel(2 * 2e-6 + bytes / 450e9, 1e-12));
  CHECK_THAT(ring_all_reduce_s(bytes, 8, link), WithinRel(14 * 2e-6 + 1.75 * bytes / 450e9, 1e-12));
  CHECK_THAT(ring_all_reduce_s(bytes, 2, link), WithinRel(153.13e-6, 1e-3));
  CHECK_THAT(ring_all_reduce_s(bytes, 8, link), WithinRel(288.95e-6, 1e-3));
  CHECK(ring_all_reduce_s(bytes, 1, link) == 0);
  CHECK(ring_all_reduce_s(0, 8, link) == 0);
  CHECK_THAT(ring_all_gather_s(bytes, 4, link), WithinRel(3 * 2e-6 + 0.75 * bytes / 450e9, 1e-12));
}

TEST_CASE("vLLM's custom all-reduce on NVLink: two hops of latency at any TP", "[models][cost]") {
  // In details: t = 2α + 2(p−1)/p · bytes / bw on NVLink/NVSwitch/Infinity Fabric; PCIe falls
  // back to the ring. Expectations (α = 2 µs, 450 GB/s, 8 KiB): TP2: 4 µs + 8192/450e9 s;
  // TP8: 4 µs + 1.75·8192/450e9 s — the latency does not grow with p, unlike the ring's 28 µs.
  const hardware::LinkSpec nvlink{"nvlink", 450e9, 2e-6};
  const hardware::LinkSpec pcie{"pcie", 32e9, 2e-6};
  const double bytes = 8192;
  CHECK_THAT(all_reduce_s(bytes, 2, nvlink), WithinRel(4e-6 + bytes / 450e9, 1e-12));
  CHECK_THAT(all_reduce_s(bytes, 8, nvlink), WithinRel(4e-6 + 1.75 * bytes / 450e9, 1e-12));
  CHECK(all_reduce_s(bytes, 8, pcie) == ring_all_reduce_s(bytes, 8, pcie));
  CHECK(all_reduce_s(bytes, 1, nvlink) == 0);
}

TEST_CASE("CUDA-graph padding: a decode batch of 9 runs its linear ops at 16", "[models][cost]") {
  // In details: default sizes [1,2,4,8,16,24,...]; 9 pads to 16. Beyond the largest size (512)
  // the batch runs eagerly at its own size. enforce_eager turns padding off.
  // Expectations: linear_s(9) == linear_s(16) exactly (same context per request), and comm too;
  // attention and LM head are not padded, so 9 is cheaper there; eager 9 < eager 16.
  Deployment d = deploy(llama31_70b(), 4);
  const RooflineCostModel graphs(d);
  CHECK(graphs.linear_tokens(decode(9, 100)) == 16);
  CHECK(graphs.linear_tokens(decode(16, 100)) == 16);
  CHECK(graphs.linear_tokens(decode(17, 100)) == 24);
  CHECK(graphs.linear_tokens(decode(300, 100)) == 304);
  CHECK(graphs.linear_tokens(decode(512, 100)) == 512);
  CHECK(graphs.linear_tokens(decode(513, 100)) == 513);
  const StepCost c9 = graphs.estimate(decode(9, 100));
  const StepCost c16 = graphs.estimate(decode(16, 100));
  CHECK(c9.linear_s == c16.linear_s);
  CHECK(c9.comm_s - ring_all_gather_s(9 * 128256 * 2.0, 4, d.gpu.scale_up) ==
        Approx(c16.comm_s - ring_all_gather_s(16 * 128256 * 2.0, 4, d.gpu.scale_up)));
  CHECK(c9.attention_s < c16.attention_s);
  CHECK(c9.lm_head_s < c16.lm_head_s);

  d.enforce_eager = true;
  const RooflineCostModel eager(d);
  CHECK(eager.linear_tokens(decode(9, 100)) == 9);
  CHECK(eager.estimate(decode(9, 100)).linear_s < eager.estimate(decode(16, 100)).linear_s);

  // Explicit sizes from the replica replace the default.
  d.enforce_eager = false;
  d.cuda_graph_sizes = {1, 2, 4, 8, 16, 32};
  const RooflineCostModel custom(d);
  CHECK(custom.linear_tokens(decode(17, 100)) == 32);
  CHECK(custom.linear_tokens(decode(33, 100)) == 33);
  CHECK(cuda_graph_padded_tokens(5, {1, 2, 4, 8}) == 8);
  CHECK(cuda_graph_padded_tokens(9, {1, 2, 4, 8}) == 9);
}

TEST_CASE("MoE: expected distinct experts touched", "[models][cost]") {
  // In details: E·(1 − (1 − k/E)^T). Mixtral: E = 8, k = 2.
  // Expectations: T = 1 → k = 2; T = 2 → 8·(1 − 0.75²) = 3.5; T large → E = 8.
  CHECK_THAT(expected_experts_touched(8, 2, 1), WithinRel(2.0, 1e-12));
  CHECK_THAT(expected_experts_touched(8, 2, 2), WithinRel(3.5, 1e-12));
  CHECK_THAT(expected_experts_touched(8, 2, 1000), WithinRel(8.0, 1e-12));
  CHECK_THAT(expected_experts_touched(256, 8, 1), WithinRel(8.0, 1e-9));
  CHECK_THAT(expected_experts_touched(256, 8, 100000), WithinRel(256.0, 1e-9));
  CHECK(expected_experts_touched(8, 2, 0) == 0);

  // A Mixtral decode at batch 1 streams attention + 2 experts, not all 8: between the
  // active-parameter and the total-parameter weight streams.
  const Deployment d = deploy(mixtral_8x7b());
  const IdealCostModel ideal(d);
  const double h = 4096, I = 14336;
  const double attn = h * 4096 + 2 * h * 1024 + 4096 * h;
  const double expert = 3 * h * I;
  const double lm = 32000 * h;
  const double active = (32 * (attn + 2 * expert + h * 8) + lm) * 2 / 3.35e12;
  const double total = (32 * (attn + 8 * expert + h * 8) + lm) * 2 / 3.35e12;
  const double t1 =
      ideal.estimate(decode(1, 10)).linear_s + ideal.estimate(decode(1, 10)).lm_head_s;
  CHECK_THAT(t1, WithinRel(active, 0.01));
  CHECK(ideal.estimate(decode(64, 10)).total_s < total * 1.05);
  CHECK(ideal.estimate(decode(64, 10)).linear_s > 0.9 * (total - lm * 2 / 3.35e12));
}

TEST_CASE("fp8 weights halve a memory-bound decode's linear time", "[models][cost]") {
  // Expectations: fp8 quantization stores linear weights in 1 byte, so the ideal linear time of a
  // batch-1 decode halves (activations are bf16, a few KB); the LM head stays 16-bit.
  Deployment d = deploy(llama31_8b());
  const StepCost bf16 = IdealCostModel(d).estimate(decode(1, 100));
  d.quantization = "fp8";
  const StepCost fp8 = IdealCostModel(d).estimate(decode(1, 100));
  CHECK_THAT(fp8.linear_s, WithinRel(bf16.linear_s / 2, 1e-3));
  CHECK(fp8.lm_head_s == bf16.lm_head_s);
  // Compute-bound prefill runs at the fp8 peak (1979 vs 989 TFLOP/s).
  Deployment dp = deploy(llama31_8b());
  const double b = IdealCostModel(dp).estimate(prefill(8192)).linear_s;
  dp.quantization = "fp8";
  CHECK_THAT(IdealCostModel(dp).estimate(prefill(8192)).linear_s, WithinRel(b * 989 / 1979, 1e-3));
}

TEST_CASE("MXFP4 experts: a decode streams 4.25 bits per expert weight", "[models][cost]") {
  // In details: gpt-oss-120b's config.json says quantization_config.quant_method = "mxfp4"; vLLM
  // then stores the routed experts in MXFP4 (32 E2M1 values + one E8M0 scale: 4.25 bits) and every
  // other weight in bf16. At batch 1 a decode touches exactly top-k = 4 experts per layer.
  // Expectations: against the same model with all weights in bf16, the ideal linear time of a
  // batch-1 decode at TP2 drops by exactly 36 layers · 4 experts · 3·2880·1440 weights ·
  // (2 − 0.53125) bytes / 3.35 TB/s; attention stays bf16 (linear time of fp8 is lower); the
  // linear layers run at the bf16 peak (w4a16 on Hopper).
  Deployment d = deploy(load_model("gpt-oss-120b"), 2);
  REQUIRE(d.model.checkpoint_quantization == "mxfp4");
  CHECK(d.weight_format() == "mxfp4");
  CHECK(kMxfp4BytesPerWeight == 0.53125);
  CHECK(d.expert_weight_bytes_per_param() == 0.53125);
  CHECK(d.weight_bytes_per_param() == 2);
  CHECK(d.linear_compute_dtype() == "bf16");
  const StepCost mx = IdealCostModel(d).estimate(decode(1, 100));
  Deployment bf = d;
  bf.model.checkpoint_quantization.clear();
  CHECK(bf.weight_format().empty());
  const StepCost b = IdealCostModel(bf).estimate(decode(1, 100));
  const double saved = 36.0 * 4 * 3 * 2880 * 1440 * (2 - 0.53125) / 3.35e12;
  CHECK_THAT(b.linear_s - mx.linear_s, WithinRel(saved, 1e-6));
  CHECK(mx.lm_head_s == b.lm_head_s);
  // --quantization fp8 overrides the checkpoint: every linear weight in one byte.
  Deployment f = d;
  f.quantization = "fp8";
  CHECK(f.weight_format() == "fp8");
  CHECK(f.expert_weight_bytes_per_param() == 1);
  CHECK(f.weight_bytes_per_param() == 1);
}

TEST_CASE("pipeline parallel: stages summed plus (PP−1) send/recv", "[models][cost]") {
  // In details: one micro-batch runs every stage in turn, so the compute is that of PP = 1 and each
  // stage boundary adds the hand-off of vLLM's IntermediateTensors (hidden states + residual, [T,
  // h] each): every TP rank sends its 1/TP slice to its peer, then the next stage all-gathers it:
  //   hop = 2·(α + T·h·2/TP / bw) + 2·((TP−1)·α + (TP−1)/TP · T·h·2 / bw)   (all on NVLink here)
  // Expectations: PP2 − PP1 = 1 hop; PP4 − PP1 = 3 hops (16 GPUs per node: all in one node).
  // (Moved to the topology-aware hand-off with tests/unit/models/pipeline_test.cpp.)
  Deployment d = deploy(llama31_70b(), 4);
  d.gpus_per_node = 16;
  const BatchShape s = prefill(2048, 0);
  const double t1 = RooflineCostModel(d).estimate(s).total_s;
  const double a = d.gpu.scale_up.latency_s;
  const double bw = d.gpu.scale_up.bandwidth_bytes_per_s;
  const double bytes = 2048 * 8192 * 2.0;
  const double hop = 2 * (a + bytes / 4 / bw) + 2 * (3 * a + 0.75 * bytes / bw);
  d.pipeline_parallel_size = 2;
  CHECK_THAT(RooflineCostModel(d).estimate(s).total_s, WithinRel(t1 + hop, 1e-9));
  d.pipeline_parallel_size = 4;
  CHECK_THAT(RooflineCostModel(d).estimate(s).total_s, WithinRel(t1 + 3 * hop, 1e-9));
}

TEST_CASE("overheads: per step plus per scheduled sequence", "[models][cost]") {
  Deployment d = deploy(llama31_8b());
  d.gpu.step_overhead_s = 3e-3;
  d.gpu.per_seq_overhead_s = 1e-5;
  BatchShape s = decode(10, 100);
  s.prefill_seqs = 2;
  s.prefill_tokens = 100;
  s.prefill_attn_work = 2 * 50 * 25.0;
  const StepCost c = RooflineCostModel(d).estimate(s);
  CHECK_THAT(c.overhead_s, WithinRel(3e-3 + 12 * 1e-5, 1e-12));
  CHECK(make_cost_model(d)->estimate(s).total_s == c.total_s);
  d.ideal = true;
  CHECK(make_cost_model(d)->estimate(s).overhead_s == 0);
  // A calibrated per-prefill-token term adds 100 prompt tokens x 6 us = 0.6 ms, serially, and
  // leaves a decode-only step as it was.
  d.ideal = false;
  d.calibration.terms.per_prefill_token_overhead_s = calibration::FittedValue{6e-6, 0};
  const StepCost p = make_cost_model(d)->estimate(s);
  CHECK_THAT(p.overhead_s, WithinRel(3e-3 + 12 * 1e-5 + 100 * 6e-6, 1e-12));
  CHECK_THAT(p.total_s - c.total_s, WithinRel(100 * 6e-6, 1e-9));
  const BatchShape decode_only = decode(10, 100);
  CHECK_THAT(make_cost_model(d)->estimate(decode_only).overhead_s,
             WithinRel(3e-3 + 10 * 1e-5, 1e-12));
  // The per-TP-worker broadcast term: (TP − 1) × 0.5 ms per step, nothing at TP 1.
  d.calibration.terms.tp_broadcast_overhead_s = calibration::FittedValue{5e-4, 0};
  CHECK_THAT(make_cost_model(d)->estimate(decode_only).overhead_s,
             WithinRel(3e-3 + 10 * 1e-5, 1e-12));
  Deployment d4 = deploy(llama31_8b(), 4);
  d4.gpu.step_overhead_s = 3e-3;
  d4.gpu.per_seq_overhead_s = 1e-5;
  const double without = make_cost_model(d4)->estimate(decode_only).total_s;
  d4.calibration.terms.tp_broadcast_overhead_s = calibration::FittedValue{5e-4, 0};
  const StepCost b = make_cost_model(d4)->estimate(decode_only);
  CHECK_THAT(b.overhead_s, WithinRel(3e-3 + 10 * 1e-5 + 3 * 5e-4, 1e-12));
  CHECK_THAT(b.total_s - without, WithinRel(3 * 5e-4, 1e-9));
}

TEST_CASE("cost model: decode series equal estimate() bit for bit", "[models][cost]") {
  // DecodeSeries::total_s(C) must be the same double as estimate() of the decode-only shape with
  // context C (the replica's decode runs rely on it for byte-identical results): exact equality,
  // for dense and MoE models, TP 1 and 4, the uncalibrated options with host terms and serial
  // overheads, and the ideal model; with and without a memo. gpt-oss-120b (18 of 36 layers with
  // a 128-token window): contexts below, at and above rows·W as well.
  std::vector<std::unique_ptr<CostModel>> models;
  models.push_back(std::make_unique<RooflineCostModel>(deploy(llama31_8b())));
  models.push_back(std::make_unique<RooflineCostModel>(deploy(llama31_70b(), 4)));
  models.push_back(std::make_unique<RooflineCostModel>(deploy(mixtral_8x7b(), 2)));
  models.push_back(std::make_unique<IdealCostModel>(deploy(llama31_8b())));
  models.push_back(std::make_unique<RooflineCostModel>(deploy(load_model("gpt-oss-120b"), 2)));
  models.push_back(std::make_unique<IdealCostModel>(deploy(load_model("gpt-oss-120b"), 8)));
  Deployment d = deploy(llama31_8b());
  RooflineOptions o = RooflineOptions::from_gpu(d.gpu);
  o.step_overhead_s = 2e-3;
  o.per_seq_overhead_s = 1.7e-5;
  o.host_step_s = 3.1e-3;
  o.host_per_seq_s = 2.3e-5;
  o.host_per_prefill_token_s = 1e-7;
  o.host_per_sampled_token_s = 4.1e-6;
  models.push_back(std::make_unique<RooflineCostModel>(d, o));
  models.push_back(std::make_unique<RooflineCostModel>(deploy(load_model("gpt-oss-120b"), 2), o));
  for (const auto& m : models) {
    const CostFastPath* fast = m->fast_path();
    REQUIRE(fast != nullptr);
    const std::unique_ptr<CostMemo> memo = fast->make_memo();
    for (int64_t rows : {1, 2, 7, 16, 100, 513}) {
      for (CostMemo* mm : {static_cast<CostMemo*>(nullptr), memo.get()}) {
        const DecodeSeries s = fast->decode_series(rows, mm);
        REQUIRE(s.valid);
        for (int64_t ctx : {int64_t{0}, rows, rows * 128 - 1, rows * 128, rows * 128 + 1,
                            rows * 1000 + 17, rows * 131071}) {
          BatchShape shape;
          shape.decode_seqs = rows;
          shape.sampled_seqs = rows;
          shape.decode_context_tokens = ctx;
          const StepCost c = m->estimate(shape);
          CHECK(s.total_s(ctx) == c.total_s);
          CHECK(s.host_s == c.host_s);
        }
      }
    }
  }
}

TEST_CASE("cost model: bad options are ConfigErrors", "[models][cost]") {
  Deployment d = deploy(llama31_8b());
  RooflineOptions o = RooflineOptions::from_gpu(d.gpu);
  o.compute_efficiency = 0;
  CHECK_THROWS_AS(RooflineCostModel(d, o), ConfigError);
  d.gpu.hbm_bandwidth_bytes_per_s = 0;
  CHECK_THROWS_AS(RooflineCostModel(d), ConfigError);
  Deployment t = deploy(llama31_8b(), 2);
  t.gpu.scale_up.bandwidth_bytes_per_s = 0;
  CHECK_THROWS_AS(RooflineCostModel(t), ConfigError);
}

}  // namespace
}  // namespace servesim::models
