// A tiny hand-computed scenario shared by the metrics tests.
//
// One replica; its steps end at 100, 150, 200, 260, 330 ms (step indices 0..4).
//   A: sent at 0 ms,   4 tokens in steps 0..3            → tokens at 100, 150, 200, 260 ms
//   B: sent at 50 ms,  3 tokens in steps 1, then 3..4    → tokens at 150, 260, 330 ms
//      (preempted after its first token: the 150 → 260 ms gap is a preemption gap)
//   C: sent at 120 ms, 1 token in step 2                 → token at 200 ms
// Expectations (ms):
//   TTFT  A 100, B 100, C 80                 E2EL A 260, B 280, C 80
//   TPOT  A (260−100)/3 = 53.333…, B (280−100)/2 = 90; C has none (one output token)
//   ITL   A 50, 50, 60; B 110, 70 → pooled sorted [50, 50, 60, 70, 110]
//   duration 0 → 330 ms; 8 output tokens all in the first second; all three overlap at 120 ms.
#ifndef SERVESIM_TESTS_UNIT_METRICS_METRICS_FIXTURE_H_
#define SERVESIM_TESTS_UNIT_METRICS_METRICS_FIXTURE_H_

#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::metrics::testing {

inline SimTime ms(int64_t v) { return SimTime::from_ns(v * 1'000'000); }

inline RequestRecord make_record(int64_t id, int64_t arrival_ms, int32_t prompt,
                                 std::vector<TokenSegment> segments, const StepLog& log) {
  RequestRecord r;
  r.id = id;
  r.replica = 0;
  r.arrival = ms(arrival_ms);
  r.prompt_tokens = prompt;
  r.completed = true;
  r.segments = std::move(segments);
  int32_t out = 0;
  for (const auto& s : r.segments) out += static_cast<int32_t>(s.tokens());
  r.output_tokens = out;
  r.first_token = log.step_end[static_cast<std::size_t>(r.segments.front().first_step)];
  r.last_token = log.step_end[static_cast<std::size_t>(r.segments.back().last_step)];
  r.preemptions = static_cast<int32_t>(r.segments.size()) - 1;
  return r;
}

struct TinyScenario {
  std::vector<StepLog> logs;
  std::vector<RequestRecord> records;
};

inline TinyScenario tiny_scenario() {
  TinyScenario t;
  StepLog log;
  for (int64_t v : {100, 150, 200, 260, 330}) log.step_end.push_back(ms(v));
  t.logs.push_back(log);
  t.records.push_back(make_record(0, 0, 10, {{0, 3}}, log));
  t.records.push_back(make_record(1, 50, 20, {{1, 1}, {3, 4}}, log));
  t.records.push_back(make_record(2, 120, 30, {{2, 2}}, log));
  return t;
}

}  // namespace servesim::metrics::testing

#endif  // SERVESIM_TESTS_UNIT_METRICS_METRICS_FIXTURE_H_
