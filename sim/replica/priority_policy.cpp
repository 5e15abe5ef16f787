#include "sim/replica/priority_policy.h"

#include <tuple>

namespace servesim::sim {

size_t PriorityPolicy::victim(const std::vector<int32_t>& running,
                              const std::vector<RequestState>& slots) const {
  // max(self.running, key=(priority, arrival_time)): the first maximal element.
  size_t vi = 0;
  for (size_t j = 1; j < running.size(); ++j) {
    const RequestState& a = slots[running[j]];
    const RequestState& b = slots[running[vi]];
    if (std::tie(a.priority, a.arrival_ns) > std::tie(b.priority, b.arrival_ns)) vi = j;
  }
  return vi;
}

}  // namespace servesim::sim
