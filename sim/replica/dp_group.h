// DpGroup: the data-parallel ranks of one MoE deployment, stepping together (docs/semantics.md
// "Data and expert parallelism").
//
// vLLM runs --data-parallel-size N as N engine cores, each with its own scheduler and KV cache
// (vllm/v1/engine/core.py DPEngineCoreProc); for an MoE model their forward passes meet in every
// MoE layer (the experts' all-to-all), so every rank runs each step — an idle one a dummy batch
// (DPEngineCoreProc.run_busy_loop: execute_dummy_batch) — and a step ends when the slowest rank's
// does. Here each rank is a Replica; when one starts a step it joins the group's round at that
// instant instead of timing the step alone. The round closes after every event of that instant
// (an event scheduled at the same time runs after those already queued), then
//   step = max over the ranks in the round of their own time with the group's MoE part,
//   own time = device (estimate() without the routed experts) + dp_group_moe_s(Σ ranks' linear
//              tokens), overlapped with the host part under async scheduling as a lone replica's,
// and every rank of the round ends its step then. A rank that gets work while a round is in
// flight starts at its end (its kick waits: see wait_for_round). Idle ranks' dummy batches are
// not charged (a one-token forward; the busy ranks set the step).
//
// Requests reach the ranks through the group's front (route): vLLM's DPLBAsyncMPClient sends a
// request to the rank with the least waiting·4 + running, the lowest rank among equals
// (vllm/v1/engine/core_client.py get_core_engine_for_request). servesim reads the ranks' counts
// at the arrival; vLLM's front end sees them refreshed every 100 ms (coordinator.py), plus its
// own assignments since.
#ifndef SERVESIM_SIM_REPLICA_DP_GROUP_H_
#define SERVESIM_SIM_REPLICA_DP_GROUP_H_

#include <cstdint>
#include <vector>

#include "models/cost_model.h"
#include "models/roofline_cost_model.h"
#include "sim/base/time.h"
#include "sim/engine/simulator.h"

namespace servesim::sim {

class Replica;

class DpGroup : public engine::EventHandler {
 public:
  // `moe` times the group's routed experts (RooflineCostModel::dp_group_moe_s); null = none.
  explicit DpGroup(const models::RooflineCostModel* moe) : moe_(moe) {}

  void add_member(Replica* r) { members_.push_back(r); }
  const std::vector<Replica*>& members() const { return members_; }
  // The rank a new request goes to (file comment).
  Replica* route() const;

  // A rank starts a step now with cost `c` over `linear_tokens` tokens; `overlap` when async
  // scheduling overlaps its host part with the previous step. Its end comes through
  // Replica::end_dp_step when the round closes.
  void join(engine::Simulator& sim, Replica* r, const models::StepCost& c, double linear_tokens,
            bool overlap);
  // When a rank that was idle gets work at `now`: the end of the round in flight, or `now`.
  SimTime wait_for_round(SimTime now) const { return now < busy_until_ ? busy_until_ : now; }

  void on_event(engine::Simulator& sim, int64_t tag) override;  // closes the round

  // Rounds run, and Σ over rounds of (step − the mean of its ranks' own times): the time DP
  // ranks waited for the slowest one.
  int64_t rounds() const { return rounds_; }
  double sync_wait_s() const { return sync_wait_s_; }

 private:
  struct Entry {
    Replica* rank;
    models::StepCost cost;
    bool overlap;
  };
  const models::RooflineCostModel* moe_;
  std::vector<Replica*> members_;
  std::vector<Entry> round_;
  double round_tokens_ = 0;
  bool round_open_ = false;
  SimTime busy_until_;
  int64_t rounds_ = 0;
  double sync_wait_s_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_DP_GROUP_H_
