// Simulator: owns the clock and the event queue, and runs events in (time, seq) order.
//
// Components implement EventHandler and schedule events on themselves (or on each other) with a
// tag they interpret. One Simulator per simulation; nothing is global, so many simulations can run
// on different threads at once. Invariant: now() never decreases.
#ifndef SERVESIM_SIM_ENGINE_SIMULATOR_H_
#define SERVESIM_SIM_ENGINE_SIMULATOR_H_

#include <cstdint>

#include "sim/base/time.h"
#include "sim/engine/event_queue.h"

namespace servesim::engine {

class Simulator;

// Receives the events scheduled for it.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  // Called when an event scheduled for this handler comes due; sim.now() is the event's time.
  virtual void on_event(Simulator& sim, int64_t tag) = 0;
};

class Simulator {
 public:
  SimTime now() const { return now_; }

  // Schedules target->on_event(tag) at absolute time t. REQUIRES: t >= now().
  void schedule_at(SimTime t, EventHandler* target, int64_t tag);
  // Schedules target->on_event(tag) after delay d. REQUIRES: d >= 0.
  void schedule_after(SimTime d, EventHandler* target, int64_t tag) {
    schedule_at(now_ + d, target, tag);
  }

  // Runs events until the queue is empty, stop() is called, or the next event is after `until`.
  // Returns the number of events processed.
  uint64_t run(SimTime until = SimTime::max());

  // For a handler, inside run(), that would schedule an event for itself at `t` as the last thing
  // it does: when that event would be the next one run() processes — nothing queued at or before
  // `t`, `t` not after run()'s `until`, no stop() — makes it due now instead (now() = t, counted
  // as a processed event) and returns true; the handler then handles it in place, without the
  // queue. Otherwise returns false and the handler schedules it. Same order, same clock, same
  // event count as scheduling it (an event pushed at `t` would get the largest sequence number,
  // so it could only come next if nothing else is due by `t`). REQUIRES: t >= now().
  bool advance_inline(SimTime t) {
    if (!in_run_ || stopped_ || t > until_ || (!queue_.empty() && !(t < queue_.top().time))) {
      return false;
    }
    now_ = t;
    ++inline_events_;
    return true;
  }
  // Makes run() return after the current event.
  void stop() { stopped_ = true; }

  uint64_t events_processed() const { return events_processed_; }
  size_t pending() const { return queue_.size(); }
  // When the earliest queued event is due; SimTime::max() when none is queued. (A caller that
  // runs the simulation in slices, sim/cluster/live_engine.h, sleeps until then.)
  SimTime next_event_time() const { return queue_.empty() ? SimTime::max() : queue_.top().time; }

 private:
  EventQueue queue_;
  SimTime now_;
  bool stopped_ = false;
  bool in_run_ = false;
  SimTime until_;
  uint64_t inline_events_ = 0;  // advance_inline() events of the current run()
  uint64_t events_processed_ = 0;
};

}  // namespace servesim::engine

#endif  // SERVESIM_SIM_ENGINE_SIMULATOR_H_
