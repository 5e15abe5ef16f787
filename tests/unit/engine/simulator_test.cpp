#include "sim/engine/simulator.h"

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/base/error.h"

namespace servesim::engine {
namespace {

// Records (time, tag) of every event it receives; can schedule follow-ups.
class Recorder : public EventHandler {
 public:
  std::vector<std::pair<int64_t, int64_t>> seen;
  void on_event(Simulator& sim, int64_t tag) override {
    seen.emplace_back(sim.now().ns(), tag);
    if (tag == 100) sim.schedule_after(SimTime::from_ns(5), this, 101);
  }
};

TEST_CASE("events run in (time, seq) order", "[engine]") {
  // Expectations: earlier time first; equal times in the order they were scheduled.
  Simulator sim;
  Recorder r;
  sim.schedule_at(SimTime::from_ns(30), &r, 3);
  sim.schedule_at(SimTime::from_ns(10), &r, 1);
  sim.schedule_at(SimTime::from_ns(20), &r, 20);
  sim.schedule_at(SimTime::from_ns(20), &r, 21);
  sim.schedule_at(SimTime::from_ns(20), &r, 22);
  REQUIRE(sim.run() == 5);
  std::vector<std::pair<int64_t, int64_t>> expected = {
      {10, 1}, {20, 20}, {20, 21}, {20, 22}, {30, 3}};
  REQUIRE(r.seen == expected);
  REQUIRE(sim.now().ns() == 30);
}

TEST_CASE("handlers schedule follow-ups relative to now", "[engine]") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(SimTime::from_ns(7), &r, 100);
  sim.run();
  REQUIRE(r.seen.size() == 2);
  REQUIRE(r.seen[1] == std::pair<int64_t, int64_t>{12, 101});
}

TEST_CASE("run(until) stops before later events and resumes", "[engine]") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(SimTime::from_ns(10), &r, 1);
  sim.schedule_at(SimTime::from_ns(11), &r, 2);
  REQUIRE(sim.run(SimTime::from_ns(10)) == 1);  // boundary: an event at `until` runs
  REQUIRE(sim.pending() == 1);
  REQUIRE(sim.run() == 1);
  REQUIRE(sim.events_processed() == 2);
}

TEST_CASE("scheduling in the past is an internal error", "[engine]") {
  Simulator sim;
  Recorder r;
  sim.schedule_at(SimTime::from_ns(10), &r, 1);
  sim.run();
  REQUIRE_THROWS_AS(sim.schedule_at(SimTime::from_ns(9), &r, 1), InternalError);
  REQUIRE_NOTHROW(sim.schedule_at(SimTime::from_ns(10), &r, 1));
}

TEST_CASE("SimTime converts from seconds rounding up", "[engine]") {
  REQUIRE(SimTime::from_seconds_ceil(1e-9).ns() == 1);
  REQUIRE(SimTime::from_seconds_ceil(1.5e-9).ns() == 2);
  REQUIRE(SimTime::from_seconds_ceil(0.25).ns() == 250000000);
  REQUIRE(SimTime::from_seconds_ceil(0.0).ns() == 0);
}

}  // namespace
}  // namespace servesim::engine
