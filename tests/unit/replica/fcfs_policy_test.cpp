// FcfsPolicy and the arrival-order WaitingQueue it selects: vLLM's FCFS deque, with preempted
// requests at its front and the last running request as the preemption victim.
#include "sim/replica/fcfs_policy.h"

#include <catch2/catch.hpp>

#include <vector>

#include "sim/replica/waiting_queue.h"

namespace servesim::sim {
namespace {

RequestState state(int64_t id, int64_t arrival_ns, int32_t prompt = 10, int32_t priority = 0) {
  RequestState r;
  r.id = id;
  r.arrival_ns = arrival_ns;
  r.prompt = prompt;
  r.priority = priority;
  return r;
}

TEST_CASE("FCFS preempts the last running request whatever its age or priority",
          "[replica][scheduler_policy]") {
  const FcfsPolicy fcfs;
  REQUIRE(fcfs.arrival_order());
  // The last of the running list is the victim, even when it is the oldest and most important.
  std::vector<RequestState> slots = {state(0, 50, 10, 9), state(1, 10, 10, 0), state(2, 0, 10, -5)};
  for (size_t n = 1; n <= 3; ++n) {
    std::vector<int32_t> running;
    for (size_t i = 0; i < n; ++i) running.push_back(static_cast<int32_t>(i));
    REQUIRE(fcfs.victim(running, slots) == n - 1);
  }
  REQUIRE(fcfs.victim({2, 0, 1}, slots) == 2);
}

TEST_CASE("the FCFS waiting queue keeps arrival order with preempted requests at its front",
          "[replica][scheduler_policy]") {
  const FcfsPolicy fcfs;
  WaitingQueue q(fcfs);
  REQUIRE(q.empty());
  std::vector<RequestState> slots = {state(0, 0), state(1, 1), state(2, 2)};
  // New requests go behind everyone; a preempted one goes before everyone.
  REQUIRE(q.arrival_needs_slot());
  q.push_back(0, slots[0]);
  q.push_back(1, slots[1]);
  q.push_front(2, slots[2]);
  REQUIRE(q.size() == 3);
  std::vector<int32_t> order;
  while (!q.empty()) {
    order.push_back(q.front_slot());
    q.pop_front();
  }
  REQUIRE(order == std::vector<int32_t>{2, 0, 1});
}

TEST_CASE("beyond 64 slotted requests FCFS arrivals wait without a slot, in order",
          "[replica][scheduler_policy]") {
  const FcfsPolicy fcfs;
  WaitingQueue q(fcfs);
  RequestState r;
  for (int32_t s = 0; s < 64; ++s) {
    REQUIRE(q.arrival_needs_slot());
    q.push_back(s, r);
  }
  // The 65th request (and every one after it, while one waits without a slot) has none.
  REQUIRE_FALSE(q.arrival_needs_slot());
  workloads::RequestSpec rich;
  rich.id = 101;
  rich.prompt_tokens = 7;
  rich.prefix_group = 3;
  q.push_arrival({100, 5}, nullptr);
  q.push_arrival({101, 6}, &rich);
  REQUIRE(q.size() == 66);
  for (int32_t s = 0; s < 64; ++s) {
    REQUIRE(q.front_slot() == s);
    q.pop_front();
  }
  REQUIRE_FALSE(q.arrival_needs_slot());
  // The head has no slot: the queue tells who it is, and the replica gives it one.
  REQUIRE(q.front_slot() == -1);
  REQUIRE(q.head_arrival().id == 100);
  REQUIRE(q.head_arrival().arrival_ns == 5);
  REQUIRE(q.head_rich() == nullptr);  // its record tells all of it
  q.give_head_slot(7);
  REQUIRE(q.front_slot() == 7);
  q.pop_front();
  REQUIRE(q.front_slot() == -1);
  REQUIRE(q.head_arrival().id == 101);
  REQUIRE(q.head_rich() != nullptr);
  REQUIRE(q.head_rich()->prefix_group == 3);
  q.give_head_slot(8);
  REQUIRE(q.head_rich() == nullptr);
  REQUIRE(q.size() == 1);
  q.pop_front();
  REQUIRE(q.empty());
  REQUIRE(q.arrival_needs_slot());
}

}  // namespace
}  // namespace servesim::sim
