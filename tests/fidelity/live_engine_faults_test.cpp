// Fault injection in the live engine (`servesim serve --replica-outage`, `--latency-spike`).
// The closed forms:
//   * an outage R@T1-T2: no request that arrives in [T1, T2) goes to R; the requests R holds at
//     T1 fail with cut time T1, every other request completes with all its tokens (completed +
//     failed = sent); R holds no request and no KV block at T2; it takes requests again after;
//     round-robin gives the window's requests to the other replicas in turn;
//   * every replica down: a request that arrives in the window fails at once ("no replica up");
//   * a latency spike T1-T2:xF: a lone decoding request's gap between tokens k−1 and k (the
//     duration of step k, which starts at token k−1) is F times the gap without the spike, to
//     the nanosecond (ceil(F·d)), exactly when step k starts in [T1, T2), and the same otherwise.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/base/error.h"
#include "sim/cluster/live_engine.h"
#include "sim/cluster/simulation.h"
#include "tests/fidelity/live_engine_fixture.h"
#include "workloads/workload.h"

namespace servesim::sim {
namespace {

SimulationConfig base_config() { return live_engine_config(300, 30, 512, 128, 11); }

std::vector<SimTime> tokens(const LiveEngine& e, int64_t id) {
  std::vector<SimTime> t;
  e.token_times(id, 0, &t);
  return t;
}

SimTime seconds(double s) { return SimTime::from_seconds_ceil(s); }

TEST_CASE(
    "live engine outage: the window's requests avoid the replica, its own fail, counts "
    "are conserved, it comes back empty",
    "[live_engine][faults]") {
  SimulationConfig c = base_config();
  c.num_replicas = 3;
  c.router = "round-robin";
  const PreparedDeployment p = prepare_deployment(c);
  const std::vector<workloads::RequestSpec> specs = live_engine_arrivals(c);
  const SimTime down = seconds(3.0);
  const SimTime up = seconds(6.0);
  REQUIRE(specs.back().arrival > up + seconds(1.0));  // requests come after the window too

  LiveEngine e(c, p);
  e.schedule_outage({1, down, up});
  int64_t held_at_up = -1;
  int64_t running_at_up = -1;
  for (const workloads::RequestSpec& s : specs) {
    if (held_at_up < 0 && s.arrival > up) {
      e.advance_to(up);
      held_at_up = e.replica_used_kv_blocks(1);
      running_at_up = e.replica_up(1) ? 0 : -2;
    }
    e.advance_to(s.arrival);
    e.submit(s.arrival, s.prompt_tokens, s.output_tokens);
  }
  e.advance_to(e.now() + seconds(300.0));
  CHECK(held_at_up == 0);
  CHECK(running_at_up == 0);  // up again at T2

  int64_t completed = 0;
  int64_t failed = 0;
  int64_t window_to[3] = {0, 0, 0};
  int64_t after_to_1 = 0;
  for (int64_t id = 0; id < e.num_requests(); ++id) {
    const metrics::RequestRecord& rec = e.record(id);
    const bool in_window = rec.arrival >= down && rec.arrival < up;
    if (in_window) {
      REQUIRE(rec.replica != 1);
      ++window_to[rec.replica];
    }
    if (rec.arrival >= up && rec.replica == 1) ++after_to_1;
    if (rec.completed) {
      ++completed;
      REQUIRE(static_cast<int64_t>(tokens(e, id).size()) == rec.output_tokens);
      REQUIRE(e.cut_time(id) == SimTime::max());
    } else {
      ++failed;
      REQUIRE(rec.failed);
      REQUIRE(rec.replica == 1);
      REQUIRE(rec.arrival < down);
      // Cut at the crash, or (still in the API server's queue then) where it met the dead engine.
      REQUIRE((e.cut_time(id) == down || rec.error.str() == Replica::kReplicaDownError));
      // It lost tokens: it was not finished at the crash.
      REQUIRE(static_cast<int64_t>(tokens(e, id).size()) < rec.output_tokens);
    }
  }
  CHECK(completed + failed == static_cast<int64_t>(specs.size()));
  CHECK(failed > 0);
  CHECK(after_to_1 > 0);
  // Round-robin skips the dead replica in its turn: the window's requests alternate 0, 2.
  CHECK(window_to[0] + window_to[2] > 20);
  CHECK(std::abs(window_to[0] - window_to[2]) <= 1);
  CHECK(e.used_kv_blocks() == 0);
}

TEST_CASE("live engine outage: with every replica down a request fails at once",
          "[live_engine][faults]") {
  const SimulationConfig c = base_config();
  const PreparedDeployment p = prepare_deployment(c);
  const std::vector<workloads::RequestSpec> specs = live_engine_arrivals(c);
  const SimTime down = seconds(2.0);
  const SimTime up = seconds(4.0);
  LiveEngine e(c, p);
  e.schedule_outage({0, down, up});
  for (const workloads::RequestSpec& s : specs) {
    e.advance_to(s.arrival);
    e.submit(s.arrival, s.prompt_tokens, s.output_tokens);
  }
  e.advance_to(e.now() + seconds(300.0));
  int64_t refused = 0;
  int64_t cut = 0;
  int64_t completed = 0;
  for (int64_t id = 0; id < e.num_requests(); ++id) {
    const metrics::RequestRecord& rec = e.record(id);
    if (rec.arrival >= down && rec.arrival < up) {
      REQUIRE(rec.failed);
      REQUIRE(rec.error.str() == LiveEngine::kNoReplicaUp);
      REQUIRE(tokens(e, id).empty());
      ++refused;
    } else if (rec.completed) {
      ++completed;
    } else {
      REQUIRE(rec.arrival < down);
      ++cut;
    }
  }
  CHECK(refused > 30);  // 2 s at 30 req/s
  CHECK(cut > 0);
  CHECK(refused + cut + completed == static_cast<int64_t>(specs.size()));
}

TEST_CASE("live engine outage: bad windows are refused by name", "[live_engine][faults]") {
  SimulationConfig c = base_config();
  c.num_replicas = 2;
  const PreparedDeployment p = prepare_deployment(c);
  LiveEngine e(c, p);
  CHECK_THROWS_AS(e.schedule_outage({2, seconds(1), seconds(2)}), ConfigError);
  CHECK_THROWS_AS(e.schedule_outage({0, seconds(2), seconds(2)}), ConfigError);
  e.schedule_outage({0, seconds(1), seconds(3)});
  CHECK_THROWS_AS(e.schedule_outage({0, seconds(2), seconds(4)}), ConfigError);
  e.schedule_outage({1, seconds(2), seconds(4)});  // another replica may overlap
}

TEST_CASE(
    "live engine latency spike: a lone request's gaps are F times longer for the steps "
    "that start in the window",
    "[live_engine][faults]") {
  const SimulationConfig c = base_config();
  const PreparedDeployment p = prepare_deployment(c);
  const SimTime from = seconds(0.5);
  const SimTime to = seconds(1.0);
  for (const double factor : {3.0, 2.5}) {
    LiveEngine plain(c, p);
    LiveEngine spiked(c, p);
    spiked.set_latency_spikes(LatencySpikes({{from, to, factor}}));
    const int64_t a = plain.submit(SimTime::zero(), 200, 400);
    const int64_t b = spiked.submit(SimTime::zero(), 200, 400);
    plain.advance_to(seconds(60));
    spiked.advance_to(seconds(60));
    REQUIRE(plain.record(a).completed);
    REQUIRE(spiked.record(b).completed);
    const std::vector<SimTime> t0 = tokens(plain, a);
    const std::vector<SimTime> t1 = tokens(spiked, b);
    REQUIRE(t0.size() == 400);
    REQUIRE(t1.size() == 400);
    REQUIRE(t0.back() > to);  // the request outlasts the window
    int64_t inside = 0;
    for (size_t k = 1; k < t1.size(); ++k) {
      const int64_t gap = (t0[k] - t0[k - 1]).ns();
      const SimTime start = t1[k - 1];  // a lone decoder's steps run back to back
      const int64_t want = start >= from && start < to
                               ? static_cast<int64_t>(std::ceil(static_cast<double>(gap) * factor))
                               : gap;
      if (start >= from && start < to) ++inside;
      REQUIRE((t1[k] - t1[k - 1]).ns() == want);
    }
    // 0.5 s of steps of ~6-10 ms, each F times longer.
    CHECK(inside > 10);
    // Before the window nothing changes.
    CHECK(t1[0] == t0[0]);
  }
}

TEST_CASE("live engine latency spike: overlapping or empty windows are refused",
          "[live_engine][faults]") {
  CHECK_THROWS_AS(LatencySpikes({{seconds(1), seconds(3), 2.0}, {seconds(2), seconds(4), 2.0}}),
                  ConfigError);
  CHECK_THROWS_AS(LatencySpikes({{seconds(2), seconds(2), 2.0}}), ConfigError);
  CHECK_THROWS_AS(LatencySpikes({{seconds(1), seconds(2), 0.0}}), ConfigError);
  const LatencySpikes s({{seconds(1), seconds(2), 4.0}});
  CHECK(s.apply(seconds(0.999), SimTime::from_ns(10)) == SimTime::from_ns(10));
  CHECK(s.apply(seconds(1), SimTime::from_ns(10)) == SimTime::from_ns(40));
  CHECK(s.apply(seconds(2), SimTime::from_ns(10)) == SimTime::from_ns(10));
}

}  // namespace
}  // namespace servesim::sim
