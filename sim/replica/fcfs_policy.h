// FcfsPolicy: vLLM's default first-come-first-served policy (SchedulingPolicy.FCFS). Requests are
// admitted in arrival order, preempted ones first; a failed KV allocation preempts the last
// request of the running list (scheduler.py: self.running.pop()).
#ifndef SERVESIM_SIM_REPLICA_FCFS_POLICY_H_
#define SERVESIM_SIM_REPLICA_FCFS_POLICY_H_

#include "sim/replica/scheduler_policy.h"

namespace servesim::sim {

class FcfsPolicy final : public SchedulerPolicy {
 public:
  bool arrival_order() const override { return true; }
  int64_t rank(const RequestState& r) const override;
  size_t victim(const std::vector<int32_t>& running,
                const std::vector<RequestState>& slots) const override;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_FCFS_POLICY_H_
