// Aborts in the live engine (LiveEngine::abort, Replica::abort_request; vLLM's
// Scheduler.finish_requests with FINISHED_ABORTED). The closed forms:
//   * a request aborted while it runs leaves at the end of the step in flight, so for every other
//     request it is the same request asking for just the tokens it got: their token times, and
//     the KV blocks in use at every instant after, equal those of that run, to the nanosecond;
//   * a request aborted before it is admitted is, for the others, a request never sent;
//   * alone, its KV blocks return to what was used before it came (0), at the step boundary.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "sim/cluster/live_engine.h"
#include "sim/cluster/simulation.h"
#include "tests/fidelity/live_engine_fixture.h"
#include "workloads/workload.h"

namespace servesim::sim {
namespace {

SimulationConfig base_config() { return live_engine_config(200, 20, 512, 128, 7); }

int64_t tokens_of(const LiveEngine& e, int64_t id) {
  std::vector<SimTime> t;
  e.token_times(id, 0, &t);
  return static_cast<int64_t>(t.size());
}

// Feeds `specs` to `e`, calling `at_arrival(i)` just before request i is submitted (the clock at
// its arrival), then runs to the end sampling the KV blocks in use every `sample` of simulated
// time into `kv` (time → blocks).
template <typename F>
void feed(LiveEngine& e, const std::vector<workloads::RequestSpec>& specs, F at_arrival,
          std::map<int64_t, int64_t>* kv) {
  const SimTime sample = SimTime::from_ns(3'000'000);
  SimTime next = SimTime::from_ns(0);
  auto advance = [&](SimTime t) {
    while (next <= t) {
      e.advance_to(next);
      (*kv)[next.ns()] = e.used_kv_blocks();
      next = next + sample;
    }
    e.advance_to(t);
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    advance(specs[i].arrival);
    at_arrival(i);
    e.submit(specs[i].arrival, specs[i].prompt_tokens, specs[i].output_tokens);
  }
  advance(e.now() + SimTime::from_seconds_ceil(120.0));
}

TEST_CASE(
    "live engine abort: a running request aborted is, for the others, one that asked for "
    "the tokens it got",
    "[live_engine][abort]") {
  const SimulationConfig c = base_config();
  const PreparedDeployment p = prepare_deployment(c);
  std::vector<workloads::RequestSpec> specs = live_engine_arrivals(c);
  constexpr int64_t kVictim = 40;
  // Run 1: the victim is aborted at the first arrival after it has 10 tokens.
  LiveEngine live(c, p);
  std::map<int64_t, int64_t> kv_aborted;
  SimTime abort_at = SimTime::max();
  int64_t tokens_at_abort = 0;
  feed(
      live, specs,
      [&](size_t) {
        if (abort_at != SimTime::max() || live.num_requests() <= kVictim) return;
        tokens_at_abort = tokens_of(live, kVictim);
        if (tokens_at_abort < 10) return;
        abort_at = live.now();
        live.abort(kVictim);
      },
      &kv_aborted);
  REQUIRE(abort_at != SimTime::max());
  const metrics::RequestRecord& victim = live.record(kVictim);
  CHECK(victim.failed);
  CHECK(!victim.completed);
  CHECK(victim.error.str() == "aborted");
  const int64_t got = tokens_of(live, kVictim);
  // The step in flight at the abort ends first: one token more at most (its segments are final).
  CHECK(got >= tokens_at_abort);
  CHECK(got <= tokens_at_abort + 1);
  REQUIRE(got < specs[kVictim].output_tokens);

  // Run 2: the victim asks for `got` tokens.
  specs[kVictim].output_tokens = static_cast<int32_t>(got);
  LiveEngine shorter(c, p);
  std::map<int64_t, int64_t> kv_shorter;
  feed(
      shorter, specs, [](size_t) {}, &kv_shorter);
  REQUIRE(shorter.record(kVictim).completed);
  for (int64_t id = 0; id < live.num_requests(); ++id) {
    std::vector<SimTime> a, b;
    live.token_times(id, 0, &a);
    shorter.token_times(id, 0, &b);
    REQUIRE(a == b);
    if (id != kVictim) REQUIRE(live.record(id).completed);
  }
  REQUIRE(kv_aborted == kv_shorter);
  REQUIRE(live.used_kv_blocks() == 0);
  REQUIRE(live.num_running() == 0);
}

TEST_CASE("live engine abort: requests aborted before admission are, for the others, never sent",
          "[live_engine][abort]") {
  SimulationConfig c = base_config();
  c.offline = true;              // no API-server queue: a request goes straight to the engine
  c.engine.max_num_seqs = 4;     // a queue forms
  c.workload.request_rate = 40;  // beyond what 4 seats serve
  const PreparedDeployment p = prepare_deployment(c);
  const std::vector<workloads::RequestSpec> specs = live_engine_arrivals(c);
  // Request 30 is aborted as it is sent (before it arrives); request 60 once it has waited,
  // at the next arrival, if it is still waiting.
  LiveEngine live(c, p);
  std::map<int64_t, int64_t> kv_live;
  bool waited = false;
  feed(
      live, specs,
      [&](size_t i) {
        if (i == 31) live.abort(30);
        if (i == 61) {
          waited = tokens_of(live, 60) == 0;
          live.abort(60);
        }
      },
      &kv_live);
  REQUIRE(waited);  // it was aborted while waiting, not running
  CHECK(live.record(30).failed);
  CHECK(live.record(60).failed);
  CHECK(tokens_of(live, 30) == 0);
  CHECK(tokens_of(live, 60) == 0);

  std::vector<workloads::RequestSpec> without;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i != 30 && i != 60) without.push_back(specs[i]);
  }
  LiveEngine never(c, p);
  std::map<int64_t, int64_t> kv_never;
  feed(
      never, without, [](size_t) {}, &kv_never);
  int64_t j = 0;
  for (int64_t id = 0; id < live.num_requests(); ++id) {
    if (id == 30 || id == 60) continue;
    std::vector<SimTime> a, b;
    live.token_times(id, 0, &a);
    never.token_times(j++, 0, &b);
    REQUIRE(a == b);
  }
  REQUIRE(kv_live == kv_never);
}

TEST_CASE("live engine abort: alone, its KV blocks return to 0 at the step boundary",
          "[live_engine][abort]") {
  const SimulationConfig c = base_config();
  const PreparedDeployment p = prepare_deployment(c);
  LiveEngine e(c, p);
  REQUIRE(e.used_kv_blocks() == 0);
  const int64_t id = e.submit(SimTime::from_ns(0), 1000, 500);
  SimTime t = SimTime::from_ns(0);
  while (tokens_of(e, id) < 5) {
    t = t + SimTime::from_ns(1'000'000);
    e.advance_to(t);
  }
  const int64_t used = e.used_kv_blocks();
  // 1000 prompt tokens and a few generated in blocks of block_size: ceil(tokens / block_size),
  // or one block more, allocated ahead for the token of the step in flight.
  const int64_t bs = p.engine.block_size;
  const int64_t held = (1000 + tokens_of(e, id) + bs - 1) / bs;
  CHECK(used >= held);
  CHECK(used <= held + 1);
  const int64_t before = tokens_of(e, id);
  e.abort(id);
  e.advance_to(t);  // the abort is taken; the step in flight still holds the request
  CHECK(e.num_running() == 1);
  CHECK(e.used_kv_blocks() == used);
  e.advance_to(e.next_event_time());  // the end of the step in flight
  CHECK(e.finished(id));
  CHECK(e.record(id).failed);
  CHECK(tokens_of(e, id) == before + 1);  // that step's token came; no other
  CHECK(e.used_kv_blocks() == 0);
  CHECK(e.num_running() == 0);
  CHECK(e.num_waiting() == 0);
  e.advance_to(e.now() + SimTime::from_seconds_ceil(1.0));  // an async placeholder step, if any
  CHECK(e.next_event_time() == SimTime::max());             // nothing left to run
}

}  // namespace
}  // namespace servesim::sim
