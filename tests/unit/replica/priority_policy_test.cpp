// PriorityPolicy: vLLM's priority scheduling — admission by (priority, arrival), lowest first;
// preemption of the first running request with the largest (priority, arrival).
#include "sim/replica/priority_policy.h"

#include <catch2/catch.hpp>

#include <vector>

#include "sim/replica/waiting_queue.h"

namespace servesim::sim {
namespace {

RequestState state(int64_t id, int64_t arrival_ns, int32_t priority) {
  RequestState r;
  r.id = id;
  r.arrival_ns = arrival_ns;
  r.priority = priority;
  return r;
}

TEST_CASE("the priority policy preempts the largest (priority, arrival), the first of equals",
          "[replica][scheduler_policy]") {
  const PriorityPolicy prio;
  REQUIRE_FALSE(prio.arrival_order());
  std::vector<RequestState> slots = {state(0, 0, 1), state(1, 10, 5), state(2, 10, 5),
                                     state(3, 20, 3), state(4, 5, 5)};
  // Priority 5 is the largest; among slots 1, 2 and 4, arrival 10 is the latest; slots 1 and 2
  // tie on both, and max() returns the first in running order.
  REQUIRE(prio.victim({0, 1, 2, 3, 4}, slots) == 1);
  REQUIRE(prio.victim({0, 2, 1, 3, 4}, slots) == 1);  // slot 2, now first of the pair
  REQUIRE(prio.victim({4, 0, 3}, slots) == 0);        // priority 5 beats later arrivals
  REQUIRE(prio.victim({0, 3}, slots) == 1);
  REQUIRE(prio.victim({0}, slots) == 0);
}

TEST_CASE("the priority waiting queue admits by (priority, arrival, id), preempted ones included",
          "[replica][scheduler_policy]") {
  const PriorityPolicy prio;
  WaitingQueue q(prio);
  std::vector<RequestState> slots = {state(0, 30, 2), state(1, 10, 2), state(2, 40, -1),
                                     state(3, 10, 2), state(4, 0, 7)};
  q.push_back(0, slots[0]);
  q.push_back(1, slots[1]);
  q.push_front(2, slots[2]);  // a preempted request takes its place by rank, not the front
  q.push_back(3, slots[3]);
  q.push_front(4, slots[4]);
  REQUIRE(q.arrival_needs_slot());  // every waiting request has its slot
  REQUIRE(q.size() == 5);
  std::vector<int32_t> order;
  while (!q.empty()) {
    order.push_back(q.front_slot());
    q.pop_front();
  }
  // -1 first; then priority 2 by arrival (10, 10, 30), ids 1 < 3 breaking the tie; then 7.
  REQUIRE(order == std::vector<int32_t>{2, 1, 3, 0, 4});
}

}  // namespace
}  // namespace servesim::sim
