// Prefix-aware routing on trace hash chains (Mooncake hash_ids), the counterpart of the
// generated-shared-prefix routing test in cluster_contract_test.cpp.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

// 4 replicas of Llama-3.1-8B on A100-80GB replaying the Mooncake-format trace at `path`.
SimulationConfig four_replicas(const std::string& path, const std::string& router) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "a100-80gb";
  c.num_replicas = 4;
  c.router = router;
  c.workload.dataset_name = "trace";
  c.workload.trace = path;
  c.workload.trace_format = "mooncake";
  return c;
}

TEST_CASE("prefix-aware routing on hash chains raises the hit rate over round-robin",
          "[contract][cluster][trace]") {
  // Workload: a Mooncake-format trace of 16 conversations × 25 requests, one every 25 ms (40
  // req/s), conversation (7i + ⌊i/16⌋) mod 16 for request i (so round-robin spreads each one
  // over all replicas). A request's prompt is 1,088 tokens: two
  // 512-token blocks shared by its conversation (hash ids 2g, 2g+1) and a 64-token block of its
  // own (hash id 1000 + i); 64 output tokens; 4 replicas of Llama-3.1-8B on A100-80GB.
  // Round-robin sends every conversation to all 4 replicas (each computes each shared prefix:
  // up to 64 misses of 64 blocks); prefix-aware keeps a conversation where its chain was sent
  // (16 misses) while loads stay within the threshold.
  // Expectations: hit rate(prefix-aware) > hit rate(round-robin) + 5 points (ideal gap ≈ 11).
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("servesim_chain_router_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  {
    std::ofstream out(path);
    for (int i = 0; i < 400; ++i) {
      const int g = (i * 7 + i / 16) % 16;  // each block of 16 requests: every conversation once
      out << "{\"timestamp\": " << 25 * i << ", \"input_length\": 1088, \"output_length\": 64, "
          << "\"hash_ids\": [" << 2 * g << ", " << 2 * g + 1 << ", " << 1000 + i << "]}\n";
    }
  }
  auto hit_rate = [&](const std::string& router) {
    const SimulationConfig c = four_replicas(path, router);
    const PreparedDeployment p = prepare_deployment(c);
    const SimulationResult r = run_simulation(c, p);
    return servesim_summary(c, p, r)["prefix_cache_hit_rate"].get<double>();
  };
  const double rr = hit_rate("round-robin");
  const double pa = hit_rate("prefix-aware");
  std::remove(path.c_str());
  INFO("round-robin " << rr << " prefix-aware " << pa);
  CHECK(pa > rr + 0.05);
}

TEST_CASE("prefix-aware routing: a chain that matches only its first block spreads by tree size",
          "[contract][cluster][trace]") {
  // Workload: 200 requests, one every 50 ms, each a chain of four 512-token blocks: block 7 shared
  // by all (a system prompt), three of its own. 4 replicas of Llama-3.1-8B on A100-80GB, light
  // load (outstanding counts stay far within the balance threshold).
  // Expected (SGLang's cache_threshold 0.5): the longest match is 1 of 4 blocks, at most half the
  // chain, so each request goes to the replica holding the fewest blocks, ties → lowest id:
  // request i to replica i mod 4 (each request adds its 3 own blocks, plus block 7 the first time
  // a replica gets it), exactly 50 each. Following the one-block match instead sent all 200 to
  // replica 0 and left the other three idle.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("servesim_chain_spread_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  {
    std::ofstream out(path);
    for (int i = 0; i < 200; ++i) {
      out << "{\"timestamp\": " << 50 * i << ", \"input_length\": 2048, \"output_length\": 16, "
          << "\"hash_ids\": [7, " << 10000 + 3 * i << ", " << 10001 + 3 * i << ", " << 10002 + 3 * i
          << "]}\n";
    }
  }
  const SimulationConfig c = four_replicas(path, "prefix-aware");
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  std::remove(path.c_str());
  std::vector<int> per_replica(4, 0);
  for (const auto& rec : r.records) ++per_replica.at(static_cast<size_t>(rec.replica));
  for (int n : per_replica) CHECK(n == 50);
}

}  // namespace
}  // namespace servesim::sim
