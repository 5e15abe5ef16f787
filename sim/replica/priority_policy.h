// PriorityPolicy: vLLM's --scheduling-policy priority (SchedulingPolicy.PRIORITY). Waiting
// requests are admitted by (priority, arrival time), lowest first; a failed KV allocation
// preempts the running request with the largest (priority, arrival time), the first such in
// running order (scheduler.py: max(self.running, key=lambda r: (r.priority, r.arrival_time))).
#ifndef SERVESIM_SIM_REPLICA_PRIORITY_POLICY_H_
#define SERVESIM_SIM_REPLICA_PRIORITY_POLICY_H_

#include "sim/replica/scheduler_policy.h"

namespace servesim::sim {

class PriorityPolicy final : public SchedulerPolicy {
 public:
  bool arrival_order() const override { return false; }
  int64_t rank(const RequestState& r) const override { return r.priority; }
  size_t victim(const std::vector<int32_t>& running,
                const std::vector<RequestState>& slots) const override;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_PRIORITY_POLICY_H_
