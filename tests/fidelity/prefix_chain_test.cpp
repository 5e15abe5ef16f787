// Prefix reuse from a trace: the KV cache's hits on Mooncake hash chains against what the chains
// predict for an unbounded cache.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/simulation.h"
#include "workloads/trace_reader.h"
#include "workloads/trace_replay.h"

namespace servesim::sim {
namespace {

const std::string kMooncake =
    std::string(SERVESIM_REALDATA_DIR) + "/mooncake_traces/conversation_trace.jsonl";

SimulationConfig mooncake_config(double duration_s) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.workload.dataset_name = "trace";
  c.workload.trace = kMooncake;
  c.workload.trace_format = "mooncake";
  c.workload.trace_duration = duration_s;
  return c;
}

// Hit tokens that an unbounded cache gives when requests run one after another: engine block i of
// a prompt (tokens [16i, 16i+16)) is cached iff an earlier prompt had the same chain entry for
// the 512-token block holding the block's last token and also had a full block i; the leading run
// of cached blocks hits, capped at (prompt - 1) / 16 blocks (vLLM recomputes the last token).
// Computed from the hash ids alone, without the simulator's key mixing.
struct Prediction {
  int64_t queried = 0;
  int64_t hits = 0;
  int64_t blocks = 0;  // KV blocks the window needs in all (prompt + output, per request)
};
Prediction predict(double duration_s, int64_t bs) {
  auto reader = workloads::open_trace(kMooncake, "mooncake");
  std::set<std::pair<uint64_t, int64_t>> seen;
  Prediction p;
  workloads::TraceRow row;
  while (reader->next(row) && row.arrival_ns < static_cast<int64_t>(duration_s * 1e9)) {
    const std::vector<uint64_t> chain = workloads::prefix_chain_of(row.hash_ids);
    const int64_t full = row.prompt_tokens / bs;
    const int64_t cap = (row.prompt_tokens - 1) / bs;
    int64_t h = 0;
    while (h < cap && h < full && seen.count({chain[((h + 1) * bs - 1) / 512], h})) ++h;
    p.hits += h * bs;
    p.queried += row.prompt_tokens;
    for (int64_t i = 0; i < full; ++i) seen.insert({chain[((i + 1) * bs - 1) / 512], i});
    p.blocks += (row.prompt_tokens + row.output_tokens + bs - 1) / bs;
  }
  return p;
}

TEST_CASE("Mooncake: hit tokens equal the hash-chain prediction for an unbounded cache",
          "[fidelity][trace]") {
  // In details: the first 120 s of the conversation trace, one request at a time
  // (--max-concurrency 1) so that every earlier prompt is fully cached, and a KV cache larger than
  // every block the window allocates (nothing is ever evicted).
  // Expectations: hit tokens and queried tokens equal the prediction exactly; zero evictions.
  const double window = 120;
  for (int64_t bs : {16, 32}) {
    const Prediction want = predict(window, bs);
    REQUIRE(want.hits > 0);
    SimulationConfig c = mooncake_config(window);
    c.engine.block_size = static_cast<int>(bs);
    c.engine.num_gpu_blocks_override = want.blocks + 16;
    c.max_concurrency = 1;
    const PreparedDeployment p = prepare_deployment(c);
    const SimulationResult r = run_simulation(c, p);
    REQUIRE(r.replica_stats.size() == 1);
    INFO("block size " << bs);
    CHECK(r.replica_stats[0].prefix_queried_tokens == want.queried);
    CHECK(r.replica_stats[0].prefix_hit_tokens == want.hits);
    CHECK(r.replica_stats[0].prefix_evicted_blocks == 0);
  }
}

TEST_CASE("Mooncake: no hits without prefix caching, a small cache evicts and hits less",
          "[fidelity][trace]") {
  const double window = 120;
  const Prediction want = predict(window, 16);
  SimulationConfig c = mooncake_config(window);
  c.max_concurrency = 1;
  c.engine.enable_prefix_caching = false;
  SimulationResult r = run_simulation(c, prepare_deployment(c));
  CHECK(r.replica_stats[0].prefix_hit_tokens == 0);
  c.engine.enable_prefix_caching = true;
  // 8,000 blocks (128k tokens): room for the window's longest request (121,213 tokens), far less
  // than the 311,727 blocks the window allocates in all.
  c.engine.num_gpu_blocks_override = 8000;
  c.engine.max_model_len = 122000;
  r = run_simulation(c, prepare_deployment(c));
  CHECK(r.replica_stats[0].prefix_evicted_blocks > 0);
  CHECK(r.replica_stats[0].prefix_hit_tokens > 0);
  CHECK(r.replica_stats[0].prefix_hit_tokens < want.hits);
}

}  // namespace
}  // namespace servesim::sim
