// ShortestPromptFirstPolicy: a test-only scheduler policy, and the worked example of extending
// the engine (docs/design.md, "How to add a scheduler policy"). Waiting requests are admitted by
// prompt length, shortest first (ties: earlier arrival, lower id); a failed KV allocation
// preempts the running request with the longest prompt (the first such in running order). Not
// a vLLM policy: nothing outside the tests can select it.
#ifndef SERVESIM_TESTS_UNIT_REPLICA_SHORTEST_PROMPT_FIRST_POLICY_H_
#define SERVESIM_TESTS_UNIT_REPLICA_SHORTEST_PROMPT_FIRST_POLICY_H_

#include <tuple>
#include <vector>

#include "sim/replica/scheduler_policy.h"

namespace servesim::sim {

class ShortestPromptFirstPolicy final : public SchedulerPolicy {
 public:
  bool arrival_order() const override { return false; }
  int64_t rank(const RequestState& r) const override { return r.prompt; }
  size_t victim(const std::vector<int32_t>& running,
                const std::vector<RequestState>& slots) const override {
    size_t vi = 0;
    for (size_t j = 1; j < running.size(); ++j) {
      const RequestState& a = slots[running[j]];
      const RequestState& b = slots[running[vi]];
      if (std::tie(a.prompt, a.arrival_ns) > std::tie(b.prompt, b.arrival_ns)) vi = j;
    }
    return vi;
  }
};

}  // namespace servesim::sim

#endif  // SERVESIM_TESTS_UNIT_REPLICA_SHORTEST_PROMPT_FIRST_POLICY_H_
