#include "sim/engine/simulator.h"

#include <string>

#include "sim/base/error.h"

namespace servesim::engine {

void Simulator::schedule_at(SimTime t, EventHandler* target, int64_t tag) {
  SERVESIM_CHECK(t >= now_, "event scheduled in the past at " + std::to_string(t.ns()) +
                                " ns, now " + std::to_string(now_.ns()) + " ns");
  queue_.push(t, target, tag);
}

uint64_t Simulator::run(SimTime until) {
  stopped_ = false;
  in_run_ = true;
  until_ = until;
  inline_events_ = 0;
  uint64_t processed = 0;
  while (!stopped_ && !queue_.empty() && queue_.top().time <= until) {
    Event e = queue_.pop();
    SERVESIM_CHECK(e.time >= now_, "time went backwards");
    now_ = e.time;
    e.target->on_event(*this, e.tag);
    ++processed;
  }
  in_run_ = false;
  processed += inline_events_;
  events_processed_ += processed;
  return processed;
}

}  // namespace servesim::engine
