// Multi-turn sessions end to end (workloads/session_workload.h): think times, history reuse in the
// prefix cache, conservation, and closed-loop users.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
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
  std::optional<workloads::RequestSpec> on_done(int64_t id, SimTime sent, SimTime now) override {
    done_at[id] = now;
    sent_at[id] = sent;
    auto s = w_->on_done(id, sent, now);
    if (s) {
      previous[s->id] = id;
      session[s->id] = session[id];
      turn[s->id] = turn[id] + 1;
    }
    return s;
  }
  std::vector<std::string> class_names() const override { return w_->class_names(); }

  std::map<int64_t, int64_t> session, turn, previous;
  std::map<int64_t, SimTime> done_at, sent_at;
  int64_t sessions = 0;

 private:
  std::unique_ptr<workloads::Workload> w_;
};

SimulationConfig session_config() {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.calibration =
      "none";  // no client overhead: the client learns of a completion at its last token
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
  CHECK_THROWS_WITH(workloads::validate(c.workload),
                    Catch::Contains("--think-time: set with --dataset-name trace --multi-turn"));
  c = session_config();
  c.workload.random_prefix_len = 100;
  CHECK_THROWS_WITH(workloads::validate(c.workload), Catch::Contains("--random-prefix-len"));
}

// A synthetic session trace (CSV with session_id) and what each row is.
struct TraceTurn {
  int64_t t_ns;  // recorded send time
  int32_t prompt, output;
  int session, turn;
};
struct SessionTrace {
  std::vector<TraceTurn> rows;  // in file (time) order
  std::string path;
  SessionTrace(const std::string& name, int sessions, int turns, double first_gap_s) {
    // Session s starts at s · first_gap_s; its gaps alternate 1 ms (shorter than any answer: the
    // next turn waits for the answer) and 5 s (longer: the recorded time is kept). Prompts grow
    // by the answer plus 33 new tokens, except session 3's third turn, which trims its history
    // by 100 tokens.
    for (int s = 0; s < sessions; ++s) {
      int64_t t = static_cast<int64_t>(s) * static_cast<int64_t>(first_gap_s * 1e9);
      int32_t prompt = 300 + 17 * s;
      for (int k = 0; k < turns; ++k) {
        rows.push_back({t, prompt, 40, s, k});
        t += k % 2 == 0 ? 1'000'000 : 5'000'000'000;
        prompt += 40 + (s == 3 && k == 1 ? -100 : 33);
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TraceTurn& a, const TraceTurn& b) { return a.t_ns < b.t_ns; });
    path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream f(path, std::ios::binary);
    f << "arrival_s,prompt_tokens,output_tokens,session_id\n";
    for (const TraceTurn& r : rows) {
      char t[32];
      std::snprintf(t, sizeof t, "%lld.%09lld", static_cast<long long>(r.t_ns / 1'000'000'000),
                    static_cast<long long>(r.t_ns % 1'000'000'000));
      f << t << ',' << r.prompt << ',' << r.output << ",s" << r.session << '\n';
    }
  }
  ~SessionTrace() { std::remove(path.c_str()); }
  const TraceTurn& at(int session, int turn) const {
    for (const TraceTurn& r : rows) {
      if (r.session == session && r.turn == turn) return r;
    }
    FAIL("no such turn");
    return rows.front();
  }
};

SimulationConfig trace_session_config(const SessionTrace& trace) {
  SimulationConfig c = session_config();
  c.workload.dataset_name = "trace";
  c.workload.trace = trace.path;
  c.workload.trace_format = "csv";
  c.workload.think_time = 0.0;
  c.workload.request_rate = std::numeric_limits<double>::infinity();  // as recorded
  return c;
}

TEST_CASE("sessions from a trace: each turn at max(answer, sent + recorded gap), to the ns",
          "[fidelity][sessions][trace]") {
  // In details: 6 sessions of 4 turns from a CSV trace with session_id (SessionTrace), first
  // turns 0.2 s apart, replayed as recorded (scale 1); no client overhead, large KV cache.
  // Expectations (trace_sessions.h):
  //  - first turns are sent at their recorded times, exactly;
  //  - turn k+1 is sent at max(turn k's last token, turn k's send + (t_{k+1} − t_k)), exactly;
  //    both cases occur: the 1 ms gaps are shorter than any answer, the 5 s gaps longer;
  //  - conservation: all 24 rows are sent and complete;
  //  - prefix cache: turn k+1 hits floor((min(P_{k+1}, P_k + O_k) − 1) / 16) · 16 tokens (the
  //    history it shares, less the last answer token, whose KV is never computed; whole 16-token
  //    blocks), first turns nothing.
  const SessionTrace trace("servesim_sessions_fidelity.csv", 6, 4, 0.2);
  const SimulationConfig c = trace_session_config(trace);
  const Run r = run(c);
  const auto& recs = r.result.records;
  REQUIRE(recs.size() == 24);
  CHECK(r.result.metrics.completed == 24);
  CHECK(r.spy->sessions == 6);
  int waited_for_answer = 0, kept_recorded = 0;
  for (const auto& rec : recs) {
    REQUIRE(rec.completed);
    const int s = static_cast<int>(r.spy->session.at(rec.id));
    const int k = static_cast<int>(r.spy->turn.at(rec.id));
    const TraceTurn& row = trace.at(s, k);
    CHECK(rec.prompt_tokens == row.prompt);
    CHECK(rec.output_tokens == row.output);
    if (k == 0) {
      CHECK(rec.arrival.ns() == row.t_ns);
      CHECK(rec.cached_prompt_tokens == 0);
      continue;
    }
    const auto& prev = recs[static_cast<size_t>(r.spy->previous.at(rec.id))];
    const TraceTurn& prow = trace.at(s, k - 1);
    CHECK(r.spy->sent_at.at(prev.id) == prev.arrival);
    const SimTime recorded = prev.arrival + SimTime::from_ns(row.t_ns - prow.t_ns);
    CHECK(rec.arrival == std::max(prev.last_token, recorded));
    waited_for_answer += prev.last_token > recorded;
    kept_recorded += prev.last_token < recorded;
    const int64_t shared = std::min<int64_t>(row.prompt, int64_t{prow.prompt} + prow.output);
    CHECK(rec.cached_prompt_tokens == (shared - 1) / 16 * 16);
  }
  CHECK(waited_for_answer == 12);  // turns 1 and 3 of each session (1 ms gaps)
  CHECK(kept_recorded == 6);       // turn 2 (5 s gap)
}

TEST_CASE("sessions from a trace: --max-concurrency counts sessions",
          "[fidelity][sessions][trace]") {
  // In details: 8 sessions of 3 turns, all first turns recorded at t = 0, --max-concurrency 2.
  // Expectations: a session holds its slot from its first send to its last answer, through its
  // recorded gaps, so at most 2 sessions are active and 2 start at t = 0; 6 first turns wait for
  // a slot; every row completes (conservation).
  const SessionTrace trace("servesim_sessions_concurrency.csv", 8, 3, 0.0);
  SimulationConfig c = trace_session_config(trace);
  c.max_concurrency = 2;
  const Run r = run(c);
  const auto& recs = r.result.records;
  REQUIRE(r.result.metrics.completed == 24);
  std::vector<std::pair<int64_t, int64_t>> span(8, {INT64_MAX, INT64_MIN});
  for (const auto& rec : recs) {
    auto& s = span[static_cast<size_t>(r.spy->session.at(rec.id))];
    s.first = std::min(s.first, rec.arrival.ns());
    s.second = std::max(s.second, rec.last_token.ns());
  }
  std::vector<std::pair<int64_t, int>> events;  // (time, +1 start / −1 end), ends first
  for (const auto& sp : span) {
    events.push_back({sp.first, +1});
    events.push_back({sp.second, -1});
  }
  std::sort(events.begin(), events.end());
  int active = 0, peak = 0;
  for (const auto& e : events) {
    active += e.second;
    peak = std::max(peak, active);
  }
  CHECK(peak == 2);
  int at_zero = 0;
  for (const auto& sp : span) at_zero += sp.first == 0;
  CHECK(at_zero == 2);
  int64_t waited = 0;
  for (const auto& rec : recs) waited += rec.client_queue_time > SimTime::zero();
  CHECK(waited == 6);
}

}  // namespace
}  // namespace servesim::sim
