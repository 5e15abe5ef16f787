// add_replica_stats / total_replica_stats (sim/replica/replica_stats_merge.h): counters add, "the
// most" figures take the larger, and the KV and running peaks add only for parts of one replica.
#include <catch2/catch.hpp>

#include "sim/replica/replica_stats_merge.h"

namespace servesim::sim {
namespace {

// Distinct values per field, so a field merged by the wrong rule (or not at all) shows.
ReplicaStats sample(int64_t k) {
  ReplicaStats s;
  s.steps = 10 * k;
  s.busy_ns = 1000 * k;
  s.scheduled_tokens = 7 * k;
  s.preemptions = k;
  s.peak_used_blocks = 100 * k;
  s.peak_running = 4 * k;
  s.peak_step_tokens = 2048 / k;  // the larger peak comes from the smaller k
  s.prefix_hit_tokens = 3 * k;
  s.ideal_busy_s = 0.25 * double(k);
  s.spec_accepted_tokens = 5 * k;
  s.spec_drafter_s = 0.5 * double(k);
  s.used_blocks_now = 9 * k;
  s.offload.loaded_blocks = 6 * k;
  s.offload.max_store_lag_s = 1.0 / double(k);
  s.lora.slot_loads = 2 * k;
  s.lora.max_wait_ns = 50 / k;
  return s;
}

TEST_CASE("replica stats: counters add, peaks of separate replicas take the largest",
          "[replica][stats]") {
  // Replicas k = 1, 2, 4: Σk = 7.
  const ReplicaStats t = total_replica_stats({sample(1), sample(2), sample(4)});
  CHECK(t.steps == 70);
  CHECK(t.busy_ns == 7000);
  CHECK(t.scheduled_tokens == 49);
  CHECK(t.preemptions == 7);
  CHECK(t.prefix_hit_tokens == 21);
  CHECK(t.ideal_busy_s == 1.75);  // quarters: exact in binary
  CHECK(t.spec_accepted_tokens == 35);
  CHECK(t.spec_drafter_s == 3.5);
  CHECK(t.used_blocks_now == 63);
  CHECK(t.offload.loaded_blocks == 42);
  CHECK(t.lora.slot_loads == 14);
  // Peaks: the largest replica's, not the sum.
  CHECK(t.peak_used_blocks == 400);
  CHECK(t.peak_running == 16);
  CHECK(t.peak_step_tokens == 2048);
  CHECK(t.offload.max_store_lag_s == 1.0);
  CHECK(t.lora.max_wait_ns == 50);
}

TEST_CASE("replica stats: a pipeline's virtual engines add their KV and running peaks",
          "[replica][stats]") {
  ReplicaStats t = sample(1);
  add_replica_stats(t, sample(2), PeakMerge::kSum);
  CHECK(t.steps == 30);
  CHECK(t.peak_used_blocks == 300);  // 100 + 200: the engines hold blocks at the same time
  CHECK(t.peak_running == 12);
  CHECK(t.peak_step_tokens == 2048);  // one step's tokens: still the larger, never a sum
}

TEST_CASE("replica stats: the total of no replica is zero", "[replica][stats]") {
  const ReplicaStats t = total_replica_stats({});
  CHECK(t.steps == 0);
  CHECK(t.peak_used_blocks == 0);
  CHECK(t.busy_ns == 0);
}

}  // namespace
}  // namespace servesim::sim
