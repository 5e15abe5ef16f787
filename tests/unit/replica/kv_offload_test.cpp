// KV offloading to a CPU tier (sim/replica/kv_offload.h, kv_offload_tier.h): the tier's LRU order
// and capacity as vLLM's LRU offloading manager, the tier's size from GiB, and, on a replica with
// a cost model simple enough to compute by hand (step = 1 ms + 10 µs per scheduled token), loads
// that take bytes / bandwidth and turn repeated prefixes the GPU cache lost into hits.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/base/error.h"
#include "sim/engine/simulator.h"
#include "sim/replica/kv_offload.h"
#include "sim/replica/kv_offload_tier.h"
#include "sim/replica/replica.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

TEST_CASE("the CPU tier evicts its least recently used block, and touch keeps a prefix's head",
          "[replica][offload]") {
  KvOffloadTier t(3);
  const std::vector<uint64_t> abc = {1, 2, 3};
  REQUIRE(t.store(abc.data(), 3) == 3);
  REQUIRE(t.lru_order() == std::vector<uint64_t>{1, 2, 3});
  // vLLM touches reversed(block_hashes): the first block ends most recently used.
  const std::vector<uint64_t> ab = {1, 2};
  t.touch(ab.data(), 2);
  REQUIRE(t.lru_order() == std::vector<uint64_t>{3, 2, 1});
  const std::vector<uint64_t> d = {4};
  REQUIRE(t.store(d.data(), 1) == 1);  // evicts 3, the least recently used
  REQUIRE(t.lru_order() == std::vector<uint64_t>{2, 1, 4});
  REQUIRE(t.evicted_blocks() == 1);
  // Lookup counts leading held keys only.
  const std::vector<uint64_t> q1 = {1, 2, 4, 3};
  REQUIRE(t.lookup(q1.data(), 4) == 3);
  const std::vector<uint64_t> q2 = {3, 1};
  REQUIRE(t.lookup(q2.data(), 2) == 0);
  // Keys already held are not stored again and do not move.
  REQUIRE(t.store(ab.data(), 2) == 0);
  REQUIRE(t.lru_order() == std::vector<uint64_t>{2, 1, 4});
}

TEST_CASE("the CPU tier stores N new blocks into N slots and refuses N + 1", "[replica][offload]") {
  // vLLM prepare_store returns None when it cannot evict enough blocks: nothing is stored.
  for (int64_t n : {1, 5, 64}) {
    std::vector<uint64_t> keys(static_cast<size_t>(n + 1));
    for (int64_t i = 0; i <= n; ++i) keys[static_cast<size_t>(i)] = 100 + static_cast<uint64_t>(i);
    KvOffloadTier fits(n);
    REQUIRE(fits.store(keys.data(), n) == n);
    REQUIRE(fits.lookup(keys.data(), n) == n);
    KvOffloadTier over(n);
    REQUIRE(over.store(keys.data(), n + 1) == -1);
    REQUIRE(over.size() == 0);
  }
}

TEST_CASE("the tier's blocks are GiB over the KV bytes of one block on all TP ranks",
          "[replica][offload]") {
  // vllm/v1/kv_offload/cpu/spec.py: num_blocks = size * 2^30 // (block bytes per rank * TP * PP).
  EngineConfig c;
  c.vllm_version = "0.15";
  c.block_size = 16;
  c.enable_chunked_prefill = 1;
  hardware::GpuSpec gpu;
  gpu.name = "test";
  gpu.host_link = {"pcie", 63e9, 0};
  models::MemoryPlan m;
  m.kv_bytes_per_token = 65536;  // a block: 1 MiB per rank
  c.kv_offloading_size = 8;
  resolve_kv_offload(c, gpu, m, 2, 1, 1);
  REQUIRE(c.kv_offload_blocks == 4096);  // 8 GiB / (1 MiB x 2 ranks)
  REQUIRE(c.kv_offload_block_bytes == 1048576.0);
  // N and N - 1 blocks: exactly 3 blocks of 2 MiB, and one byte less.
  c.kv_offloading_size = 6.0 / 1024;
  resolve_kv_offload(c, gpu, m, 2, 1, 1);
  REQUIRE(c.kv_offload_blocks == 3);
  c.kv_offloading_size = (6.0 * 1048576 - 1) / double(1ull << 30);
  resolve_kv_offload(c, gpu, m, 2, 1, 1);
  REQUIRE(c.kv_offload_blocks == 2);
  // What is not modelled is refused by name.
  c.kv_offloading_size = 8;
  REQUIRE_THROWS_WITH(resolve_kv_offload(c, gpu, m, 2, 2, 1),
                      Catch::Contains("--kv-offloading-size: KV offloading with pipeline"));
  c.kv_offloading_backend = "lmcache";
  REQUIRE_THROWS_WITH(resolve_kv_offload(c, gpu, m, 2, 1, 1),
                      Catch::Contains("--kv-offloading-backend: lmcache is not modelled"));
  c.kv_offloading_backend = "";
  c.vllm_version = "0.11";
  REQUIRE_THROWS_WITH(resolve_kv_offload(c, gpu, m, 2, 1, 1),
                      Catch::Contains("--vllm-version is 0.11: use 0.12 or later"));
  c.vllm_version = "0.15";
  gpu.host_link = {};
  REQUIRE_THROWS_WITH(resolve_kv_offload(c, gpu, m, 2, 1, 1), Catch::Contains("no host_link"));
}

// ---------------------------------------------------------------------------------------------
// On a replica

using testing::AffineCost;
using testing::Counter;
using testing::step_time;

constexpr double kBlockBytes = 1e6;  // one block on one GPU
constexpr double kBandwidth = 1e9;   // host link, bytes/s: a block takes 1 ms

EngineConfig offload_config(int64_t tier_blocks) {
  EngineConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 4096;
  c.block_size = 16;
  c.enable_prefix_caching = true;
  c.max_model_len = 1 << 20;
  c.async_scheduling = 0;
  c.enable_chunked_prefill = 1;
  c.kv_offload_blocks = tier_blocks;
  c.kv_offload_block_bytes = kBlockBytes;
  c.kv_offload_link = {"pcie", kBandwidth, 0};
  return c;
}

struct Harness {
  AffineCost cost;
  Counter observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records;
  std::unique_ptr<Replica> replica;

  Harness(const EngineConfig& cfg, int64_t gpu_blocks, int n) : records(n) {
    replica = std::make_unique<Replica>(0, cfg, cost, nullptr, gpu_blocks, &records, &observer);
  }
  // Sends a request now and runs until the replica is idle again.
  void run(int64_t id, int32_t prompt, int64_t group, int32_t prefix_tokens) {
    workloads::RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = prompt;
    spec.output_tokens = 1;
    spec.prefix_group = group;
    spec.prefix_tokens = prefix_tokens;
    records[id].id = id;
    records[id].arrival = sim.now();
    records[id].prompt_tokens = prompt;
    records[id].output_tokens = 1;
    replica->add_request(sim, spec);
    sim.run();
  }
  SimTime ttft(int64_t id) const { return records[id].first_token - records[id].arrival; }
};

TEST_CASE("a prefix the GPU cache lost loads from the CPU tier in bytes / bandwidth",
          "[replica][offload]") {
  // A: group 0, 10 shared blocks (160 tokens), stored write-through. B: 20 unique blocks fill
  // the 20-block GPU cache and evict A's. C: group 0 again, 176 tokens: no GPU hit, 10 blocks in
  // the tier. C's TTFT = load (10 x 1e6 B / 1e9 B/s = 10 ms) + one step of the 16 tokens left.
  Harness h(offload_config(64), 20, 3);
  h.run(0, 160, 0, 160);
  h.run(1, 320, -1, 0);
  h.run(2, 176, 0, 160);
  REQUIRE(h.records[2].completed);
  const KvOffloadStats s = h.replica->stats().offload;
  REQUIRE(s.loads == 1);
  REQUIRE(s.loaded_blocks == 10);
  REQUIRE(s.hit_tokens == 160);
  REQUIRE(s.load_s == Approx(10 * kBlockBytes / kBandwidth).epsilon(1e-12));
  REQUIRE(h.ttft(2) == SimTime::from_seconds_ceil(0.010) + step_time(16));
  REQUIRE(h.records[2].cached_prompt_tokens == 160);
  // Stored: A's 10 blocks, B's 20, C's last full block (its first 10 came from the tier).
  REQUIRE(s.stored_blocks == 31);
  REQUIRE(h.replica->stats().prefix_hit_tokens == 0);  // the GPU cache had lost them

  // The same run without the tier recomputes all 176 tokens.
  EngineConfig off = offload_config(64);
  off.kv_offload_blocks = 0;
  Harness g(off, 20, 3);
  g.run(0, 160, 0, 160);
  g.run(1, 320, -1, 0);
  g.run(2, 176, 0, 160);
  REQUIRE(g.ttft(2) == step_time(176));
}

TEST_CASE("a load of a whole prompt still recomputes its last token", "[replica][offload]") {
  // 160 tokens = 10 full blocks, all in the tier: vLLM loads the 10 blocks and computes 159
  // tokens as cached, recomputing token 160 to sample (num_computed_tokens = num_tokens - 1).
  Harness h(offload_config(64), 20, 3);
  h.run(0, 160, 0, 160);
  h.run(1, 320, -1, 0);
  h.run(2, 160, 0, 160);
  REQUIRE(h.replica->stats().offload.loaded_blocks == 10);
  REQUIRE(h.ttft(2) == SimTime::from_seconds_ceil(0.010) + step_time(1));
}

TEST_CASE("the tier's capacity bounds what comes back: N blocks hit, N - 1 do not",
          "[replica][offload]") {
  // A stores its 10 prompt blocks (group 0) in one step, B its 11 (unique), evicting A's from the
  // 11-block GPU cache. A tier of 21 holds both; in a tier of 20, B's store evicts the least
  // recently used of A's blocks, its last (touch keeps a prefix's head): C then loads 9.
  for (const auto& [tier, loaded] : {std::pair<int64_t, int64_t>{21, 10}, {20, 9}}) {
    Harness h(offload_config(tier), 11, 3);
    h.run(0, 160, 0, 160);
    h.run(1, 176, -1, 0);
    h.run(2, 176, 0, 160);
    INFO("tier blocks " << tier);
    REQUIRE(h.records[2].completed);
    REQUIRE(h.replica->stats().prefix_hit_tokens == 0);
    REQUIRE(h.replica->stats().offload.loaded_blocks == loaded);
  }
  // A tier of 9 cannot take 10 new blocks at once and stores none (vLLM's prepare_store
  // returns None).
  for (const auto& [tier, stored] : {std::pair<int64_t, int64_t>{10, 10}, {9, 0}}) {
    Harness h(offload_config(tier), 20, 1);
    h.run(0, 160, 0, 160);
    INFO("tier blocks " << tier);
    REQUIRE(h.replica->stats().offload.stored_blocks == stored);
  }
}

TEST_CASE("a tier that holds the working set turns every repeated prefix into a hit",
          "[replica][offload]") {
  // G groups of P shared blocks; prompts P*16 + 16 tokens; a GPU cache of P + 2 blocks holds one
  // request at a time. Each group is asked twice, round robin: the first round misses everywhere,
  // the second finds every group's P blocks in the tier and none on the GPU (evicted since).
  constexpr int G = 6, P = 8, bs = 16;
  constexpr int prompt = P * bs + bs;
  // Working set: every request's P + 1 full blocks (the last is its own) for 2 rounds.
  Harness h(offload_config(G * (P + 1) * 2), P + 2, 2 * G);
  for (int round = 0; round < 2; ++round) {
    for (int g = 0; g < G; ++g) h.run(round * G + g, prompt, g, P * bs);
  }
  const ReplicaStats s = h.replica->stats();
  REQUIRE(s.offload.hit_tokens == int64_t{G} * P * bs);
  REQUIRE(s.offload.loads == G);
  REQUIRE(s.prefix_hit_tokens == 0);
  // Hit rates over the prompt tokens looked up: the CPU tier served G*P*bs of 2*G*prompt.
  REQUIRE(double(s.offload.hit_tokens) / double(s.prefix_queried_tokens) ==
          Approx(double(P * bs) / double(2 * prompt)));
  for (int g = 0; g < G; ++g) {
    INFO("group " << g);
    REQUIRE(h.ttft(G + g) ==
            SimTime::from_seconds_ceil(P * kBlockBytes / kBandwidth) + step_time(bs));
  }
}

TEST_CASE("loads of one replica queue on its host link", "[replica][offload]") {
  // Two requests of groups 0 and 1 arrive together after both prefixes were evicted from the
  // 24-block GPU cache: their loads (10 blocks each, 10 ms) run one after the other.
  Harness h(offload_config(128), 24, 5);
  h.run(0, 160, 0, 160);
  h.run(1, 160, 1, 160);
  h.run(2, 384, -1, 0);
  const SimTime t0 = h.sim.now();
  for (int64_t id : {3, 4}) {
    workloads::RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = 176;
    spec.output_tokens = 1;
    spec.prefix_group = id - 3;
    spec.prefix_tokens = 160;
    h.records[id].id = id;
    h.records[id].arrival = t0;
    h.records[id].prompt_tokens = 176;
    h.records[id].output_tokens = 1;
    h.replica->add_request(h.sim, spec);
  }
  h.sim.run();
  const KvOffloadStats s = h.replica->stats().offload;
  REQUIRE(s.loads == 2);
  REQUIRE(s.load_wait_s == Approx(0.010 + 0.020));
  // Request 3 runs once its load ends (10 ms); its step ends at 11.16 ms, and request 4 runs at
  // the end of its own load (20 ms).
  REQUIRE(h.ttft(3) == SimTime::from_seconds_ceil(0.010) + step_time(16));
  REQUIRE(h.ttft(4) == SimTime::from_seconds_ceil(0.020) + step_time(16));
}

}  // namespace
}  // namespace servesim::sim
