// EventQueue: pending events ordered by (time, seq).
//
// seq is the order in which events were scheduled, handed out by the queue itself (never a static
// counter), so two events at the same time always pop in the order they were scheduled. This is the
// whole tie-break rule: nothing else (event kind, target) decides order. The queue is a binary
// heap of small POD entries; there is no allocation per event beyond the heap's own growth.
#ifndef SERVESIM_SIM_ENGINE_EVENT_QUEUE_H_
#define SERVESIM_SIM_ENGINE_EVENT_QUEUE_H_

#include <cstdint>
#include <vector>

#include "sim/base/time.h"

namespace servesim::engine {

class EventHandler;

struct Event {
  SimTime time;
  uint64_t seq = 0;
  EventHandler* target = nullptr;
  int64_t tag = 0;  // meaning chosen by the target (e.g. which kind of event)
};

class EventQueue {
 public:
  // Adds an event and returns its sequence number.
  uint64_t push(SimTime time, EventHandler* target, int64_t tag) {
    const uint64_t seq = next_seq_++;
    heap_.push_back(Event{time, seq, target, tag});
    sift_up(heap_.size() - 1);
    return seq;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  const Event& top() const { return heap_.front(); }
  // Removes and returns the earliest event. REQUIRES: !empty().
  Event pop() {
    Event e = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    Event e = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_EVENT_QUEUE_H_
