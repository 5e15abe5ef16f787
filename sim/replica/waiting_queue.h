// WaitingQueue: vLLM's waiting queue of one replica (scheduler.py self.waiting), in the order of
// its SchedulerPolicy.
//
// Arrival order (FCFS): slotted_ (slots: preempted requests, pushed to the front, and a head given
// its slot by the replica) followed by arrivals_ (never admitted, in arrival order, without a
// slot). Nothing is ever pushed behind an arrival but another arrival, so the two together are
// vLLM's one deque. An arrival is 16 bytes: its id and when it came; its lengths are in its
// record. One whose record does not tell all of its spec (a shared prefix, a hash chain, a
// priority) also has its spec in rich_, in the same order. Under overload hundreds of thousands
// of requests wait, and only the head is ever looked at.
// Ranked (any other policy): an ordered set of (rank, arrival, id, slot); every entry has a slot.
#ifndef SERVESIM_SIM_REPLICA_WAITING_QUEUE_H_
#define SERVESIM_SIM_REPLICA_WAITING_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <tuple>
#include <vector>

#include "sim/replica/request_state.h"
#include "sim/replica/scheduler_policy.h"
#include "workloads/request_spec.h"

namespace servesim::sim {

class WaitingQueue {
 public:
  struct Arrival {
    int64_t id;
    int64_t arrival_ns;  // when it reached this engine
  };

  // `policy` must outlive the queue.
  explicit WaitingQueue(const SchedulerPolicy& policy)
      : policy_(policy), arrival_order_(policy.arrival_order()) {}

  size_t size() const {
    return arrival_order_ ? slotted_.size() + arrivals_.size() : ranked_.size();
  }
  bool empty() const { return size() == 0; }

  // Whether a new request should take its slot at once (push_back) rather than wait as an
  // arrival (push_arrival): always when ranked; in arrival order while the queue is short and has
  // no arrivals (a short queue gains nothing from waiting without a slot).
  bool arrival_needs_slot() const {
    return !arrival_order_ || (arrivals_.empty() && slotted_.size() < kSlottedWaiting);
  }
  // A new request with a slot (`r` is its state, for the policy's rank).
  void push_back(int32_t slot, const RequestState& r) {
    if (arrival_order_) {
      slotted_.push_back(slot);
    } else {
      push_ranked(slot, r);
    }
  }
  // A new request without a slot. REQUIRES: arrival order. `rich`: its spec, when its record does
  // not tell all of it (null otherwise).
  void push_arrival(Arrival a, const workloads::RequestSpec* rich) {
    if (rich != nullptr) rich_.push_back(*rich);
    arrivals_.push_back(a);
  }
  // A preempted request goes back to the queue (FCFS: at its front).
  void push_front(int32_t slot, const RequestState& r) {
    if (arrival_order_) {
      slotted_.push_front(slot);
    } else {
      push_ranked(slot, r);
    }
  }

  // The head's slot, or −1 when the head is an arrival without one (then head_arrival() and
  // head_rich() describe it, and give_head_slot() gives it one). REQUIRES: not empty.
  int32_t front_slot() const {
    if (!arrival_order_) return std::get<3>(*ranked_.begin());
    return slotted_.empty() ? -1 : slotted_.front();
  }
  const Arrival& head_arrival() const { return arrivals_.front(); }
  // The head arrival's spec if it is rich, else null.
  const workloads::RequestSpec* head_rich() const {
    return !rich_.empty() && rich_.front().id == arrivals_.front().id ? &rich_.front() : nullptr;
  }
  // The head arrival now holds `slot`.
  void give_head_slot(int32_t slot) {
    if (head_rich() != nullptr) rich_.pop_front();
    arrivals_.pop_front();
    slotted_.push_front(slot);
  }
  // Removes the head. REQUIRES: front_slot() >= 0.
  void pop_front();
  // Removes request `id` wherever it waits (an abort; O(queue)). Returns its slot, kNoSlot when
  // it waited as an arrival without one, or kAbsent when it is not in the queue. `slots` are the
  // replica's request states, to match slotted entries by id.
  static constexpr int32_t kNoSlot = -1;
  static constexpr int32_t kAbsent = -2;
  int32_t remove(int64_t id, const std::vector<RequestState>& slots);

 private:
  static constexpr size_t kSlottedWaiting = 64;
  void push_ranked(int32_t slot, const RequestState& r) {
    ranked_.emplace(policy_.rank(r), r.arrival_ns, r.id, slot);
  }

  const SchedulerPolicy& policy_;
  bool arrival_order_;
  std::deque<int32_t> slotted_;
  std::deque<Arrival> arrivals_;
  std::deque<workloads::RequestSpec> rich_;
  std::set<std::tuple<int64_t, int64_t, int64_t, int32_t>> ranked_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_WAITING_QUEUE_H_
