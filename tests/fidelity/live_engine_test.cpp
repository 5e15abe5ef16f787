// The live engine (sim/cluster/live_engine.h) against run_simulation: the same arrivals, submitted
// one at a time while the clock advances, give every request the same token times, to the
// nanosecond; and what it shows while running is always a prefix of the final times, none later
// than its clock.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cluster/live_engine.h"
#include "sim/cluster/simulation.h"
#include "tests/fidelity/live_engine_fixture.h"
#include "workloads/workload.h"

namespace servesim::sim {
namespace {

// A batch record's token times: its segments over its replica's step log.
std::vector<SimTime> batch_tokens(const SimulationResult& r, const metrics::RequestRecord& rec) {
  std::vector<SimTime> out;
  const metrics::StepEnds& ends = r.step_logs[static_cast<size_t>(rec.replica)].step_end;
  for (const metrics::TokenSegment& s : rec.segments) {
    for (int64_t k = s.first_step; k <= s.last_step; ++k)
      out.push_back(ends[static_cast<size_t>(k)]);
  }
  return out;
}

// Runs `c` in batch and through a LiveEngine fed the same arrivals; checks every token time.
// Returns the batch run's preemptions (so a case can show it exercised them).
int64_t check_same_tokens(const SimulationConfig& c) {
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult batch = run_simulation(c, p);
  std::vector<std::vector<SimTime>> want;
  for (const auto& rec : batch.records) want.push_back(batch_tokens(batch, rec));

  LiveEngine live(c, p);
  std::unique_ptr<workloads::Workload> w = workloads::make_workload(resolved_workload(c));
  std::vector<SimTime> got;
  int64_t checked_partial = 0;
  while (std::optional<workloads::RequestSpec> spec = w->next()) {
    live.advance_to(spec->arrival);
    // Every request so far: what it shows now is a prefix of its final times, none after now().
    for (int64_t id = 0; id < live.num_requests(); ++id) {
      got.clear();
      live.token_times(id, 0, &got);
      const auto& all = want[static_cast<size_t>(id)];
      REQUIRE(got.size() <= all.size());
      for (size_t k = 0; k < got.size(); ++k) {
        REQUIRE(got[k] == all[k]);
        REQUIRE(got[k] <= live.now());
      }
      // And no token produced by now() is missing (the next one is still ahead).
      if (got.size() < all.size()) REQUIRE(all[got.size()] > live.now());
      checked_partial += !live.finished(id) && !got.empty();
      // Reading from an offset gives the tail.
      std::vector<SimTime> tail;
      live.token_times(id, 1, &tail);
      REQUIRE(tail.size() == (got.empty() ? 0 : got.size() - 1));
    }
    REQUIRE(live.submit(spec->arrival, spec->prompt_tokens, spec->output_tokens) == spec->id);
  }
  live.advance_to(SimTime::from_seconds_ceil(batch.simulated_s + 1.0));
  REQUIRE(live.num_requests() == static_cast<int64_t>(batch.records.size()));
  for (int64_t id = 0; id < live.num_requests(); ++id) {
    got.clear();
    live.token_times(id, 0, &got);
    const auto& rec = batch.records[static_cast<size_t>(id)];
    REQUIRE(live.record(id).completed == rec.completed);
    REQUIRE(live.record(id).first_token == rec.first_token);
    REQUIRE(live.record(id).last_token == rec.last_token);
    REQUIRE(live.record(id).replica == rec.replica);
    REQUIRE(got == want[static_cast<size_t>(id)]);
  }
  REQUIRE(live.num_running() == 0);
  REQUIRE(live.num_waiting() == 0);
  REQUIRE(live.used_kv_blocks() == 0);
  CHECK(checked_partial > 0);  // streams were seen half-way, not only before and after
  int64_t preemptions = 0;
  for (const auto& s : batch.replica_stats) preemptions += s.preemptions;
  return preemptions;
}

SimulationConfig base_config() { return live_engine_config(300, 20, 512, 128, 7); }

TEST_CASE("live engine: Poisson arrivals give run_simulation's token times", "[live_engine]") {
  check_same_tokens(base_config());
}

TEST_CASE("live engine: preemptions under KV pressure give run_simulation's token times",
          "[live_engine]") {
  SimulationConfig c = base_config();
  c.workload.request_rate = 200;
  c.engine.num_gpu_blocks_override = 600;  // 9,600 tokens: a few requests at once
  c.engine.max_model_len = 2048;
  CHECK(check_same_tokens(c) > 0);
}

TEST_CASE("live engine: two replicas behind least-outstanding give run_simulation's token times",
          "[live_engine]") {
  SimulationConfig c = base_config();
  c.num_replicas = 2;
  c.router = "least-outstanding";
  c.workload.request_rate = 60;
  check_same_tokens(c);
}

}  // namespace
}  // namespace servesim::sim
