// Adding up ReplicaStats (replica.h): a pipeline's virtual engines into their replica, and a
// cluster's replicas into one total. One function, so a counter added to ReplicaStats is added in
// one place.
//
// Contract: every counter and Σ adds; "the most" figures (peak_step_tokens, LoRA max_wait_ns,
// offload max_store_lag_s) take the larger; peak_used_blocks and peak_running follow `peaks`.
// Doubles are added in call order, so a total is bit-identical to a loop over the parts.
#ifndef SERVESIM_SIM_REPLICA_REPLICA_STATS_MERGE_H_
#define SERVESIM_SIM_REPLICA_REPLICA_STATS_MERGE_H_

#include <vector>

#include "sim/replica/replica.h"

namespace servesim::sim {

// How the peaks of KV blocks in use and of running sequences combine.
enum class PeakMerge {
  // Parts of one replica that hold memory at the same time (a pipeline's virtual engines): the
  // peaks add, an upper bound on the replica's peak (the parts need not peak together).
  kSum,
  // Separate replicas, each with its own KV cache: the largest one's.
  kMax,
};

// Adds `part` to `total`.
void add_replica_stats(ReplicaStats& total, const ReplicaStats& part, PeakMerge peaks);

// The cluster's total over its replicas (PeakMerge::kMax), from zero.
ReplicaStats total_replica_stats(const std::vector<ReplicaStats>& replicas);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_REPLICA_STATS_MERGE_H_
