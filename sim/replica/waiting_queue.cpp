#include "sim/replica/waiting_queue.h"

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

}  // namespace servesim::sim
