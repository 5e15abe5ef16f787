#include "sim/replica/fcfs_policy.h"

namespace servesim::sim {

// Never asked (arrival_order()); the arrival time is FCFS's order all the same.
int64_t FcfsPolicy::rank(const RequestState& r) const { return r.arrival_ns; }

size_t FcfsPolicy::victim(const std::vector<int32_t>& running,
                          const std::vector<RequestState>& /*slots*/) const {
  return running.size() - 1;
}

}  // namespace servesim::sim
