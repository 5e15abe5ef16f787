// Prefix-aware routing on trace hash chains (Mooncake hash_ids), the counterpart of the
// generated-shared-prefix routing test in cluster_contract_test.cpp.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

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
    SimulationConfig c;
    c.model = "llama-3.1-8b";
    c.gpu = "a100-80gb";
    c.num_replicas = 4;
    c.router = router;
    c.workload.dataset_name = "trace";
    c.workload.trace = path;
    c.workload.trace_format = "mooncake";
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

}  // namespace
}  // namespace servesim::sim
