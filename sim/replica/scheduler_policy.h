// SchedulerPolicy: what orders a replica's requests — which waiting request is admitted next and
// which running request is preempted when a KV allocation fails (vLLM's --scheduling-policy,
// vllm/v1/core/sched/scheduler.py and request_queue.py). Everything else about a step (token
// budget, chunking, KV blocks, timing) is the replica's and the same under every policy.
//
// Contract. A policy is stateless and deterministic. With arrival_order(), the waiting queue is
// vLLM's FCFS deque (new requests at the back, preempted ones at the front) and rank() is never
// called. Otherwise the waiting queue is ordered by (rank, arrival time, request id), lowest
// first, preempted requests included. victim() is called once per preemption (never per token).
// A new policy is one file defining a subclass plus one line in scheduler_policy.cpp's registry
// (docs/design.md, "How to add a scheduler policy").
#ifndef SERVESIM_SIM_REPLICA_SCHEDULER_POLICY_H_
#define SERVESIM_SIM_REPLICA_SCHEDULER_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/replica/request_state.h"

namespace servesim::sim {

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  // True: the waiting queue keeps arrival order (a deque; rank() unused).
  virtual bool arrival_order() const = 0;
  // The waiting request's rank: lower is admitted first (ties: earlier arrival, lower id).
  virtual int64_t rank(const RequestState& r) const = 0;
  // The index in `running` (slots into `slots`, in vLLM's running order) of the request to
  // preempt. REQUIRES: running is not empty.
  virtual size_t victim(const std::vector<int32_t>& running,
                        const std::vector<RequestState>& slots) const = 0;
};

using SchedulerPolicyFactory = std::function<std::unique_ptr<SchedulerPolicy>()>;

// The policy named `name` (EngineConfig::scheduling_policy); throws naming the known ones when
// there is none of that name.
std::unique_ptr<SchedulerPolicy> make_scheduler_policy(const std::string& name);
// Adds a policy under `name` (for tests and extensions; the built-in ones are registered in
// scheduler_policy.cpp). Returns true; throws if the name is taken.
bool register_scheduler_policy(const std::string& name, SchedulerPolicyFactory factory);
// The registered names, sorted.
std::vector<std::string> scheduler_policy_names();

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_SCHEDULER_POLICY_H_
