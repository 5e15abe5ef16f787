#include "sim/replica/waiting_queue.h"

#include <algorithm>

#include "sim/base/error.h"

namespace servesim::sim {

void WaitingQueue::pop_front() {
  if (arrival_order_) {
    SERVESIM_CHECK(!slotted_.empty(), "WaitingQueue::pop_front of a head without a slot");
    slotted_.pop_front();
  } else {
    ranked_.erase(ranked_.begin());
  }
}

int32_t WaitingQueue::remove(int64_t id, const std::vector<RequestState>& slots) {
  if (!arrival_order_) {
    for (auto it = ranked_.begin(); it != ranked_.end(); ++it) {
      if (std::get<2>(*it) != id) continue;
      const int32_t slot = std::get<3>(*it);
      ranked_.erase(it);
      return slot;
    }
    return kAbsent;
  }
  for (auto it = slotted_.begin(); it != slotted_.end(); ++it) {
    if (slots[static_cast<size_t>(*it)].id != id) continue;
    const int32_t slot = *it;
    slotted_.erase(it);
    return slot;
  }
  const auto a = std::find_if(arrivals_.begin(), arrivals_.end(),
                              [id](const Arrival& x) { return x.id == id; });
  if (a == arrivals_.end()) return kAbsent;
  arrivals_.erase(a);
  const auto r = std::find_if(rich_.begin(), rich_.end(),
                              [id](const workloads::RequestSpec& x) { return x.id == id; });
  if (r != rich_.end()) rich_.erase(r);
  return kNoSlot;
}

}  // namespace servesim::sim
