#include "sim/replica/replica_stats_merge.h"

#include <algorithm>

namespace servesim::sim {
namespace {

void add_lora(LoraStats& t, const LoraStats& s) {
  t.requests += s.requests;
  t.slot_loads += s.slot_loads;
  t.storage_loads += s.storage_loads;
  t.cpu_evictions += s.cpu_evictions;
  t.load_s += s.load_s;
  t.waited_requests += s.waited_requests;
  t.wait_ns += s.wait_ns;
  t.max_wait_ns = std::max(t.max_wait_ns, s.max_wait_ns);
}

void add_offload(KvOffloadStats& t, const KvOffloadStats& s) {
  t.queried_tokens += s.queried_tokens;
  t.hit_tokens += s.hit_tokens;
  t.loads += s.loads;
  t.loaded_blocks += s.loaded_blocks;
  t.stored_blocks += s.stored_blocks;
  t.evicted_blocks += s.evicted_blocks;
  t.load_s += s.load_s;
  t.load_wait_s += s.load_wait_s;
  t.store_s += s.store_s;
  t.max_store_lag_s = std::max(t.max_store_lag_s, s.max_store_lag_s);
}

}  // namespace

void add_replica_stats(ReplicaStats& t, const ReplicaStats& s, PeakMerge peaks) {
  t.steps += s.steps;
  t.busy_ns += s.busy_ns;
  t.scheduled_seqs += s.scheduled_seqs;
  t.scheduled_tokens += s.scheduled_tokens;
  t.preemptions += s.preemptions;
  t.slow_path_steps += s.slow_path_steps;
  if (peaks == PeakMerge::kSum) {
    t.peak_used_blocks += s.peak_used_blocks;
    t.peak_running += s.peak_running;
  } else {
    t.peak_used_blocks = std::max(t.peak_used_blocks, s.peak_used_blocks);
    t.peak_running = std::max(t.peak_running, s.peak_running);
  }
  t.peak_step_tokens = std::max(t.peak_step_tokens, s.peak_step_tokens);
  t.outstanding_ns += s.outstanding_ns;
  t.prefix_queried_tokens += s.prefix_queried_tokens;
  t.prefix_hit_tokens += s.prefix_hit_tokens;
  t.prefix_evicted_blocks += s.prefix_evicted_blocks;
  t.ideal_busy_s += s.ideal_busy_s;
  t.steps_below_ideal += s.steps_below_ideal;
  t.spec_verify_rows += s.spec_verify_rows;
  t.spec_draft_tokens += s.spec_draft_tokens;
  t.spec_accepted_tokens += s.spec_accepted_tokens;
  t.spec_emitted_tokens += s.spec_emitted_tokens;
  t.spec_drafter_s += s.spec_drafter_s;
  t.used_blocks_now += s.used_blocks_now;
  add_offload(t.offload, s.offload);
  add_lora(t.lora, s.lora);
}

ReplicaStats total_replica_stats(const std::vector<ReplicaStats>& replicas) {
  ReplicaStats total;
  for (const ReplicaStats& s : replicas) add_replica_stats(total, s, PeakMerge::kMax);
  return total;
}

}  // namespace servesim::sim
