// Multi-turn sessions end to end (workloads/session_workload.h): think times, history reuse in the
// prefix cache, conservation, and closed-loop users.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

// Forwards to a workload and records which conversation and turn every request belongs to, and
// when the client reported each completion.
class Spy final : public workloads::Workload {
 public:
  explicit Spy(std::unique_ptr<workloads::Workload> w) : w_(std::move(w)) {}
  std::optional<workloads::RequestSpec> next() override {
    auto s = w_->next();
    if (s) {
      session[s->id] = sessions++;
      turn[s->id] = 0;
    }
    return s;
  }
  int64_t size() const override { return w_->size(); }
  std::optional<workloads::RequestSpec> on_done(int64_t id, SimTime now) override {
    done_at[id] = now;
    auto s = w_->on_done(id, now);
    if (s) {
      previous[s->id] = id;
      session[s->id] = session[id];
      turn[s->id] = turn[id] + 1;
    }
    return s;
  }
  std::vector<std::string> class_names() const override { return w_->class_names(); }

  std::map<int64_t, int64_t> session, turn, previous;
  std::map<int64_t, SimTime> done_at;
  int64_t sessions = 0;

 private:
  std::unique_ptr<workloads::Workload> w_;
};

SimulationConfig session_config() {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.calibration = "none";  // no client overhead: the client learns of a completion at its last token
  c.workload.multi_turn = true;
  c.workload.num_prompts = 20;  // conversations
  c.workload.num_turns = 4;
  c.workload.think_time = 2.0;
  c.workload.request_rate = 4;
  c.workload.random_input_len = 200;  // new user message per turn (range ratio 0: exact)
  c.workload.random_output_len = 50;
  c.workload.seed = 11;
  return c;
}

struct Run {
  SimulationResult result;
  std::unique_ptr<Spy> spy;
};
Run run(const SimulationConfig& c) {
  Run out;
  out.spy = std::make_unique<Spy>(workloads::make_workload(resolved_workload(c)));
  const PreparedDeployment p = prepare_deployment(c);
  out.result = run_simulation(c, p, *out.spy);
  return out;
}

TEST_CASE("sessions: turn k+1 is sent at turn k's completion + the think time, with the history",
          "[fidelity][sessions]") {
  // Expectations (constant think time T = 2 s, no client overhead):
  //  - every turn of every conversation completes: 20 × 4 = 80 requests (conservation);
  //  - turn k+1's send time = turn k's last token + T, exactly (integer nanoseconds);
  //  - turn k's prompt = k · (200 + 50) + 200 tokens (the history, then the new message);
  //  - prefix cache (large enough: 20 conversations × 1,000 tokens ≪ 440k KV tokens): turn k+1
  //    hits the history H = k·250 + 250 tokens except the last answer token, whose KV is never
  //    computed (it is sampled, not fed back), rounded down to 16-token blocks:
  //    hit = floor((H − 1) / 16) · 16 >= floor(H / 16) · 16 − 16. First turns hit nothing.
  const SimulationConfig c = session_config();
  const Run r = run(c);
  const auto& recs = r.result.records;
  REQUIRE(recs.size() == 80);
  CHECK(r.result.metrics.completed == 80);
  CHECK(r.result.metrics.failed == 0);
  CHECK(r.spy->sessions == 20);
  for (const auto& rec : recs) {
    REQUIRE(rec.completed);
    const int64_t k = r.spy->turn.at(rec.id);
    CHECK(rec.prompt_tokens == k * 250 + 200);
    CHECK(rec.output_tokens == 50);
    if (k == 0) {
      CHECK(rec.cached_prompt_tokens == 0);
      continue;
    }
    const auto& prev = recs[static_cast<size_t>(r.spy->previous.at(rec.id))];
    CHECK(rec.arrival == prev.last_token + SimTime::from_seconds_ceil(2.0));
    CHECK(r.spy->done_at.at(prev.id) == prev.last_token);
    const int64_t history = k * 250;
    CHECK(rec.cached_prompt_tokens == (history - 1) / 16 * 16);
    CHECK(rec.cached_prompt_tokens >= history / 16 * 16 - 16);
  }
}

TEST_CASE("sessions: with --max-concurrency, conversations are the closed-loop users",
          "[fidelity][sessions]") {
  // In details: 12 conversations of 3 turns all ready at t = 0 (--request-rate inf) and
  // --max-concurrency 3: a conversation holds its slot from its first turn's send until its last
  // answer, through its think times.
  // Expectations: at most 3 conversations are active at any time, and 3 are at the start; a
  // conversation starts only when another has ended (so 4 waves of 3); every turn completes.
  SimulationConfig c = session_config();
  c.workload.num_prompts = 12;
  c.workload.num_turns = 3;
  c.workload.request_rate = std::numeric_limits<double>::infinity();
  c.max_concurrency = 3;
  const Run r = run(c);
  const auto& recs = r.result.records;
  REQUIRE(r.result.metrics.completed == 36);
  // Each conversation's [first send, last answer].
  std::vector<std::pair<int64_t, int64_t>> span(12, {INT64_MAX, INT64_MIN});
  for (const auto& rec : recs) {
    auto& s = span[static_cast<size_t>(r.spy->session.at(rec.id))];
    s.first = std::min(s.first, rec.arrival.ns());
    s.second = std::max(s.second, rec.last_token.ns());
  }
  std::vector<std::pair<int64_t, int>> events;  // (time, +1 start / −1 end), ends first
  for (const auto& [a, b] : span) {
    events.push_back({a, +1});
    events.push_back({b, -1});
  }
  std::sort(events.begin(), events.end());
  int active = 0, peak = 0;
  for (const auto& e : events) {
    active += e.second;
    peak = std::max(peak, active);
  }
  CHECK(peak == 3);
  int at_zero = 0;
  for (const auto& s : span) at_zero += s.first == 0;
  CHECK(at_zero == 3);
  // The client queue time of a later conversation's first turn is its wait for a user slot.
  int64_t waited = 0;
  for (const auto& rec : recs) waited += rec.client_queue_time > SimTime::zero();
  CHECK(waited == 9);
}

TEST_CASE("sessions: exponential think times have the configured mean", "[fidelity][sessions]") {
  // Expectations: the n = 200 × 2 gaps between an answer and the next turn are Exp(mean 3 s):
  // standard deviation 3 s, so the sample mean lies within 5 standard errors, 5 · 3 / √400 =
  // 0.75 s, of 3 s (a miss has probability 6e-7).
  SimulationConfig c = session_config();
  c.workload.num_prompts = 200;
  c.workload.num_turns = 3;
  c.workload.think_time = 3.0;
  c.workload.think_time_dist = "exponential";
  c.workload.request_rate = 20;
  const Run r = run(c);
  double sum = 0;
  int n = 0;
  for (const auto& rec : r.result.records) {
    auto it = r.spy->previous.find(rec.id);
    if (it == r.spy->previous.end()) continue;
    sum += (rec.arrival - r.result.records[static_cast<size_t>(it->second)].last_token).seconds();
    ++n;
  }
  REQUIRE(n == 400);
  CHECK(std::fabs(sum / n - 3.0) <= 0.75);
}

TEST_CASE("sessions: bad flags are refused", "[fidelity][sessions][errors]") {
  SimulationConfig c = session_config();
  c.workload.think_time = -1;
  CHECK_THROWS_WITH(workloads::validate(c.workload), Catch::Contains("--think-time: -1"));
  c = session_config();
  c.workload.think_time_dist = "gamma";
  CHECK_THROWS_WITH(workloads::validate(c.workload),
                    Catch::Contains("--think-time-dist: \"gamma\" is not supported"));
  c = session_config();
  c.workload.dataset_name = "trace";
  c.workload.trace = "x.csv";
  c.workload.trace_format = "csv";
  CHECK_THROWS_WITH(workloads::validate(c.workload), Catch::Contains("--multi-turn: set with"));
  c = session_config();
  c.workload.random_prefix_len = 100;
  CHECK_THROWS_WITH(workloads::validate(c.workload), Catch::Contains("--random-prefix-len"));
}

}  // namespace
}  // namespace servesim::sim
