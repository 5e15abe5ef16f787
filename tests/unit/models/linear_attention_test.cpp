// Qwen3-Next's Gated DeltaNet layers (models/linear_attention.h): the state per sequence from
// the published config.json, vLLM's hybrid KV layout (block size, padded mamba page, groups),
// the sequences a pool holds, the memory plan's KV for the full-attention layers only, and the
// gated delta rule's roofline work. Every expectation is the closed form of vLLM's formulas
// (docs/models.md "Qwen3-Next"), written out as arithmetic on the config's fields.
#include "models/linear_attention.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "models/memory_planner.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "tests/test_paths.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

// Qwen3-Next-80B-A3B: hidden 2048, 48 layers (36 Gated DeltaNet, 12 gated attention with 2 KV
// heads of 256), linear 16 key heads × 128, 32 value heads × 128, conv kernel 4.
ModelSpec qwen3_next() {
  return load_architecture(
      (fs::path(SERVESIM_TEST_DATA_DIR) / "frontier_configs" / "qwen3-next-80b-a3b.json").string());
}

TEST_CASE("Gated DeltaNet state per sequence from the config", "[models][linear_attention]") {
  const ModelSpec m = qwen3_next();
  // conv_dim = 2·16·128 + 32·128 = 8192; conv state (4 − 1) × 8192 / TP; recurrent state
  // 32 / TP × 128 × 128; 2 bytes each (bf16, vLLM's "auto" state dtypes).
  const DeltaNetState tp1 = delta_net_state(m, 1, 2);
  CHECK(tp1.conv_bytes == 3 * 8192 * 2);
  CHECK(tp1.recurrent_bytes == 32 * 128 * 128 * 2);
  CHECK(tp1.bytes() == 1097728);
  CHECK(36 * tp1.bytes() == 39518208);  // per sequence over the 36 linear layers
  const DeltaNetState tp4 = delta_net_state(m, 4, 2);
  CHECK(tp4.conv_bytes == 3 * 2048 * 2);
  CHECK(tp4.recurrent_bytes == 8 * 128 * 128 * 2);
  CHECK(tp4.bytes() * 4 == tp1.bytes());  // every dimension of the state is sharded
  // A float32 recurrent state (--mamba-ssm-cache-dtype float32) is not modelled; a 4-byte state
  // doubles both parts.
  CHECK(delta_net_state(m, 1, 4).bytes() == 2 * tp1.bytes());
  // 16 key heads cannot split over 32 ranks: vLLM's divide() asserts, servesim refuses.
  CHECK_THROWS_WITH(delta_net_state(m, 32, 2),
                    Contains("tensor-parallel-size 32 does not divide") &&
                        Contains("16 linear-attention key heads"));
}

TEST_CASE("KV bytes per token count the full-attention layers only", "[models][linear_attention]") {
  const ModelSpec m = qwen3_next();
  // vLLM FullAttentionSpec on 12 layers: 2 · max(1, 2 / TP) heads · 256 · 2 bytes each.
  CHECK(m.kv_bytes_per_token(2) == 12 * 2 * 2 * 256 * 2);
  CHECK(m.kv_bytes_per_token_per_rank(2, 2) == 12 * 2 * 1 * 256 * 2);
  CHECK(m.kv_bytes_per_token_per_rank(2, 4) == 12 * 2 * 1 * 256 * 2);  // replicated above 2
  CHECK(m.kv_bytes_per_token(1) == 12 * 2 * 2 * 256);                  // fp8 KV cache
}

TEST_CASE("hybrid layout: vLLM's attention block size, padded mamba page and groups",
          "[models][linear_attention]") {
  const ModelSpec m = qwen3_next();
  // TP 1: one attention token of one layer = 2 · 2 · 256 · 2 = 2048 bytes; the block size is
  // 16 · ⌈1,097,728 / (16 · 2048)⌉ = 16 · 34 = 544 tokens; page 544 · 2048 = 1,114,112 bytes, the
  // mamba page padded by 16,384 bytes (1.49%).
  const HybridStateLayout l1 = hybrid_state_layout(m, 1, 2, 2, 16);
  CHECK(l1.attention_token_bytes == 2048);
  CHECK(l1.block_size == 544);
  CHECK(l1.mamba_page_bytes == 1097728);
  CHECK(l1.page_bytes == 1114112);
  CHECK(l1.page_bytes - l1.mamba_page_bytes == 16384);
  // 12 attention and 36 linear layers: groups of 12, one attention group and three mamba groups;
  // one block of the pool is a page for each of 12 layers.
  CHECK(l1.layers_per_group == 12);
  CHECK(l1.attention_groups == 1);
  CHECK(l1.mamba_groups == 3);
  CHECK(l1.block_bytes() == 12 * 1114112);
  // TP 4: 1 KV head per rank (1024 bytes a token), state 274,432 bytes: 16 · ⌈274,432 / 16,384⌉
  // = 16 · 17 = 272 tokens.
  const HybridStateLayout l4 = hybrid_state_layout(m, 4, 2, 2, 16);
  CHECK(l4.attention_token_bytes == 1024);
  CHECK(l4.block_size == 272);
  CHECK(l4.page_bytes == 272 * 1024);
  // A user block size at least vLLM's choice is kept (the page grows, the mamba page is padded
  // to it); a smaller one is raised.
  CHECK(hybrid_state_layout(m, 1, 2, 2, 1024).block_size == 1024);
  CHECK(hybrid_state_layout(m, 1, 2, 2, 528).block_size == 544);
  // An fp8 KV cache halves the attention token; the state stays bf16, so the block doubles:
  // 16 · ⌈1,097,728 / 16,384⌉ = 16 · 67 = 1072.
  CHECK(hybrid_state_layout(m, 1, 1, 2, 16).block_size == 1072);
}

TEST_CASE("sequences that fit: one attention block per block_size tokens + one per mamba group",
          "[models][linear_attention]") {
  const HybridStateLayout l = hybrid_state_layout(qwen3_next(), 1, 2, 2, 16);
  // A 2,000-token sequence: ⌈2000 / 544⌉ = 4 attention blocks + 3 state blocks.
  CHECK(l.blocks_per_sequence(2000) == 7);
  CHECK(l.blocks_per_sequence(544) == 4);
  CHECK(l.blocks_per_sequence(545) == 5);
  CHECK(l.blocks_per_sequence(1) == 4);  // the states are held from the first token
  // A pool of exactly N sequences' blocks holds N; one block less holds N − 1.
  const int64_t n = 250;
  CHECK(l.sequences_that_fit(n * 7, 2000) == n);
  CHECK(l.sequences_that_fit(n * 7 - 1, 2000) == n - 1);
  // vLLM's "GPU KV cache size" counts num_blocks / (1 + 3) groups of 544 tokens.
  CHECK(l.reported_kv_tokens(1000) == 250 * 544);
}

TEST_CASE("memory plan of Qwen3-Next on 4 × H100: KV blocks of 12 layers' pages",
          "[models][linear_attention]") {
  Deployment d;
  d.model = qwen3_next();
  d.gpu = testing::h100_sxm();
  d.tensor_parallel_size = 4;
  const HybridStateLayout l = hybrid_state_layout(d.model, 4, 2, 2, 16);
  MemoryPlanOptions o;
  o.gpu_memory_utilization = 0.9;
  o.block_size = l.block_size;
  o.max_num_batched_tokens = 8192;
  o.max_num_seqs = 1024;
  o.kv_layers_per_block = l.layers_per_group;
  o.kv_cache_groups = l.attention_groups + l.mamba_groups;
  const MemoryPlan p = plan_memory(d, o);
  // Weights: the 79.7 B parameters in bf16 split over 4 ranks, plus what every rank replicates
  // (routers 48 · 2048 · 512, norms, the RoPE cache): within 1% of params · 2 / 4.
  CHECK(p.weight_bytes == Approx(d.model.param_count() * 2 / 4).epsilon(0.01));
  // Blocks: the KV budget over one pool block (12 pages of 272 · 1024 bytes).
  CHECK(p.kv_bytes_per_token == 12 * 1024);
  CHECK(p.num_blocks == static_cast<int64_t>(p.kv_bytes / static_cast<double>(l.block_bytes())));
  CHECK(p.kv_tokens == l.reported_kv_tokens(p.num_blocks));
  // The sequences of 2,000 tokens that fit: ⌈2000 / 272⌉ + 3 = 11 blocks each.
  CHECK(l.sequences_that_fit(p.num_blocks, 2000) == p.num_blocks / 11);
}

TEST_CASE("gated delta rule roofline work per step", "[models][linear_attention]") {
  const ModelSpec m = qwen3_next();
  // One decode token of one sequence at TP 1 over the 36 layers: 7·128·128 FLOPs per value head
  // (32 heads) + 2 · 4 taps · 8192 channels of conv1d; bytes: q, k, v (8192), g, β (2·32) in and
  // o (32·128) out at 2 bytes, plus the 1,097,728-byte state read and written.
  const LinearAttentionWork one = delta_rule_work(m, 1, 2, 2, 1, 1);
  CHECK(one.flops == Approx(36.0 * (7.0 * 128 * 128 * 32 + 2.0 * 4 * 8192)).epsilon(1e-12));
  CHECK(one.bytes == Approx(36.0 * ((8192 + 64 + 4096) * 2.0 + 2.0 * 1097728)).epsilon(1e-12));
  // Linear in tokens; the state traffic follows the sequences, not the tokens (a 512-token
  // prefill chunk moves its state once).
  const LinearAttentionWork chunk = delta_rule_work(m, 1, 2, 2, 512, 1);
  CHECK(chunk.flops == Approx(512 * one.flops).epsilon(1e-12));
  CHECK(chunk.bytes == Approx(36.0 * (512 * (8192 + 64 + 4096) * 2.0 + 2.0 * 1097728)));
  // TP 4 splits every term by 4.
  const LinearAttentionWork tp4 = delta_rule_work(m, 4, 2, 2, 1, 1);
  CHECK(tp4.flops * 4 == Approx(one.flops).epsilon(1e-12));
  CHECK(tp4.bytes * 4 == Approx(one.bytes).epsilon(1e-12));
}

TEST_CASE("chunked gated delta rule: FLOPs per chunk token in closed form",
          "[models][linear_attention]") {
  // Per chunk token and value head, C = 64 (vLLM's chunk_gated_delta_rule_fwd):
  //   kkt 2·C·dk + solve_tril C²/3 + w, u 2·C·dk + 2·C·dv + fwd_h 4·dk·dv
  //   + fwd_o 2·dk·dv + 2·C·dk + 2·C·dv = 6·dk·dv + 2·C·(3·dk + 2·dv) + C²/3.
  // Qwen3-Next (dk = dv = 128): 98,304 + 49,152 + 32,768 + 1,365⅓ = 181,589⅓, against the
  // recurrent form's 7·dk·dv = 114,688 per token.
  CHECK(chunked_delta_rule_flops_per_head(128, 128, 64) ==
        Approx(98304.0 + 49152.0 + 32768.0 + 4096.0 / 3.0).epsilon(1e-15));
  CHECK(chunked_delta_rule_flops_per_head(128, 128, 64) == Approx(181589.0 + 1.0 / 3.0));
  CHECK(chunked_delta_rule_flops_per_head(64, 32, 16) ==
        Approx(6.0 * 64 * 32 + 2.0 * 16 * (3 * 64 + 2 * 32) + 256.0 / 3.0).epsilon(1e-15));
}

TEST_CASE("chunked gated delta rule: work per token, chunk and sequence",
          "[models][linear_attention]") {
  const ModelSpec m = qwen3_next();
  // TP 1, bf16 everywhere: nv 32, nk 16, dk = dv = 128, conv_dim 8192, 36 layers.
  // Per token: q, k, v, g, β in and o out (8192 + 64 + 4096) · 2; the l2norm of q and k
  // 2 · 2 · 16 · 128 · 2; k read by three more kernels 3 · 16 · 128 · 2; per value head A (64 fp32)
  // and its inverse (64 bf16) written and read, w (128), u (128), v' (128) written and read:
  // 32 · (2·64·4 + 2·64·2 + 2·(128 + 2·128)·2). FLOPs: the conv1d 2 · 4 · 8192.
  const double per_token = (8192 + 64 + 4096) * 2.0 + 2.0 * 2 * 16 * 128 * 2 + 3.0 * 16 * 128 * 2 +
                           32.0 * (512 + 256 + 2.0 * 384 * 2);
  const LinearAttentionWork tok = chunked_delta_rule_work(m, 1, 2, 2, 1, 0, 0);
  CHECK(tok.flops == Approx(36.0 * 2 * 4 * 8192).epsilon(1e-15));
  CHECK(tok.bytes == Approx(36.0 * per_token).epsilon(1e-15));
  // Per chunk: 64 rows of the chunked FLOPs per value head; the chunk state H (128 × 128 bf16)
  // per value head written by fwd_h and read by fwd_o.
  const LinearAttentionWork chunk = chunked_delta_rule_work(m, 1, 2, 2, 0, 1, 0);
  CHECK(chunk.flops ==
        Approx(36.0 * 64 * 32 * chunked_delta_rule_flops_per_head(128, 128, 64)).epsilon(1e-15));
  CHECK(chunk.bytes == Approx(36.0 * 32 * 2 * 128 * 128 * 2).epsilon(1e-15));
  // Per sequence: the conv state read and written (2 · 49,152) and the recurrent state moved six
  // times (gathered, read, final written, scattered back: 6 · 1,048,576).
  const LinearAttentionWork seq = chunked_delta_rule_work(m, 1, 2, 2, 0, 0, 1);
  CHECK(seq.flops == 0);
  CHECK(seq.bytes == Approx(36.0 * (2.0 * 49152 + 6.0 * 1048576)).epsilon(1e-15));
  // Linear in its three arguments.
  const LinearAttentionWork all = chunked_delta_rule_work(m, 1, 2, 2, 1000, 17, 3);
  CHECK(all.flops == Approx(1000 * tok.flops + 17 * chunk.flops).epsilon(1e-12));
  CHECK(all.bytes == Approx(1000 * tok.bytes + 17 * chunk.bytes + 3 * seq.bytes).epsilon(1e-12));
  // TP 2 halves every head count and the state: every term halves.
  const LinearAttentionWork tp2 = chunked_delta_rule_work(m, 2, 2, 2, 1000, 17, 3);
  CHECK(tp2.flops * 2 == Approx(all.flops).epsilon(1e-12));
  CHECK(tp2.bytes * 2 == Approx(all.bytes).epsilon(1e-12));
}

TEST_CASE("which form a step runs: chunked with any prefill, recurrent without",
          "[models][linear_attention]") {
  // vLLM's Qwen3NextGatedDeltaNet._forward_core: num_prefills > 0 → chunk_gated_delta_rule over
  // every sequence (a decode is a chunk of one token); else fused_recurrent_gated_delta_rule.
  BatchShape decode;
  decode.decode_seqs = 100;
  CHECK(delta_rule_chunks(decode) == 0);
  BatchShape mixed = decode;
  mixed.prefill_seqs = 2;
  mixed.prefill_tokens = 1000 + 65;
  mixed.prefill_linear_chunks = 16 + 2;  // ⌈1000 / 64⌉ + ⌈65 / 64⌉, as the replica counts
  CHECK(delta_rule_chunks(mixed) == 18 + 100);
  // Not counted by the caller: the lower bound max(2, ⌈1065 / 64⌉ = 17).
  mixed.prefill_linear_chunks = 0;
  CHECK(delta_rule_chunks(mixed) == 17 + 100);
  // 40 one-token prefills: at least one chunk each.
  BatchShape tiny;
  tiny.prefill_seqs = 40;
  tiny.prefill_tokens = 40;
  CHECK(delta_rule_chunks(tiny) == 40);
}

TEST_CASE("roofline: a step with a prefill pays the chunked form for its decodes too",
          "[models][linear_attention]") {
  // Ideal roofline (η = 1, no latency) on an H100 at TP 1. A 1,000-token prefill with 16 chunks
  // moves ~166 MB a DeltaNet layer and computes ~6 GFLOP, far below the ridge
  // (989e12 / 3.35e12 = 295 FLOP/byte): memory-bound with 16 or 20 chunks. Four more chunks
  // change nothing but the chunk states: 36 layers · 4 · 32 heads · 128 · 128 · 2 bytes · 2
  // (written, read) over 3.35e12 B/s; the full-attention layers see no chunk count.
  Deployment d;
  d.model = qwen3_next();
  d.gpu = testing::h100_sxm();
  d.tensor_parallel_size = 1;
  const IdealCostModel ideal(d);
  BatchShape s;
  s.prefill_seqs = 1;
  s.prefill_tokens = 1000;
  s.prefill_attn_work = 1000.0 * 500.0;
  s.prefill_linear_chunks = 16;
  s.sampled_seqs = 1;
  BatchShape more = s;
  more.prefill_linear_chunks = 20;
  const double delta = 36.0 * 4 * 32 * 128 * 128 * 2 * 2 / 3.35e12;
  CHECK(ideal.estimate(more).attention_s - ideal.estimate(s).attention_s ==
        Approx(delta).epsilon(1e-9));
  // Left at 0, the count is its lower bound ⌈1000 / 64⌉ = 16: the same time.
  BatchShape uncounted = s;
  uncounted.prefill_linear_chunks = 0;
  CHECK(ideal.estimate(uncounted).attention_s == ideal.estimate(s).attention_s);
  // 50 decodes: alone they run the recurrent form; beside the prefill each is a chunk, and its
  // state moves 6 times instead of twice, so the same decodes cost more DeltaNet time in the
  // mixed step than in a decode step of their own.
  BatchShape decodes;
  decodes.decode_seqs = 50;
  decodes.decode_context_tokens = 50 * 1000;
  decodes.sampled_seqs = 50;
  BatchShape mixed = s;
  mixed.decode_seqs = 50;
  mixed.decode_context_tokens = 50 * 1000;
  mixed.sampled_seqs = 51;
  const double alone = ideal.estimate(decodes).attention_s;
  const double added = ideal.estimate(mixed).attention_s - ideal.estimate(s).attention_s;
  CHECK(added > alone);
}

TEST_CASE("a model without linear layers has no hybrid state", "[models][linear_attention]") {
  CHECK_THROWS_WITH(delta_net_state(testing::llama31_8b(), 1, 2),
                    Contains("has no linear-attention layers"));
}

}  // namespace
}  // namespace servesim::models
