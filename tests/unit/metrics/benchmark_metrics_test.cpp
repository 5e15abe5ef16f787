#include "sim/metrics/benchmark_metrics.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/metrics/sample_stats.h"
#include "tests/unit/metrics/metrics_fixture.h"

namespace servesim::metrics {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using testing::ms;
using testing::tiny_scenario;

constexpr double kRel = 1e-12;

double pct(const MetricSummary& s, double p) {
  for (const auto& [q, v] : s.percentiles_ms) {
    if (q == p) return v;
  }
  FAIL("percentile " << p << " missing");
  return 0;
}

MetricsOptions all_percentiles() {
  MetricsOptions o;
  o.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  o.metric_percentiles = {0, 50, 99, 100};
  return o;
}

TEST_CASE("percentile_linear matches np.percentile (linear)", "[metrics]") {
  // Expectations: for [1, 2, 3, 4], rank = p/100·3: p0 → 1, p50 → 2.5, p99 → 3 + 0.97 = 3.97,
  // p100 → 4; one element gives itself at every p.
  const std::vector<double> v = {1, 2, 3, 4};
  CHECK(percentile_linear(v, 0) == 1.0);
  CHECK_THAT(percentile_linear(v, 50), WithinRel(2.5, kRel));
  CHECK_THAT(percentile_linear(v, 99), WithinRel(3.97, kRel));
  CHECK(percentile_linear(v, 100) == 4.0);
  CHECK_THAT(percentile_linear(v, 25), WithinRel(1.75, kRel));
  CHECK(percentile_linear({7.5}, 0) == 7.5);
  CHECK(percentile_linear({7.5}, 99) == 7.5);
  CHECK(percentile_linear({7.5}, 100) == 7.5);
}

TEST_CASE("summaries of a plain list: np.mean / np.median / np.std (ddof 0)", "[metrics]") {
  // Expectations: [1, 2, 3, 4] s → mean 2500 ms, median (2+3)/2 = 2500 ms (np.mean of the two
  // middle values), std sqrt(1.25) s; an odd-length list's median is its middle element.
  std::vector<double> v = {4, 1, 3, 2};
  const auto s = detail::summarize_seconds(v, {50, 99});
  CHECK_THAT(s.mean_ms, WithinRel(2500.0, kRel));
  CHECK_THAT(s.median_ms, WithinRel(2500.0, kRel));
  CHECK_THAT(s.std_ms, WithinRel(std::sqrt(1.25) * 1000, kRel));
  CHECK_THAT(pct(s, 99), WithinRel(3970.0, kRel));
  std::vector<double> odd = {5, 1, 3};
  CHECK(detail::summarize_seconds(odd, {}).median_ms == 3000.0);
}

TEST_CASE("tiny scenario: TTFT, TPOT, ITL, E2EL by hand", "[metrics]") {
  // Expectations: see tests/unit/metrics/metrics_fixture.h.
  auto t = tiny_scenario();
  const auto m = compute_metrics(t.records, t.logs, all_percentiles());

  SECTION("counts, tokens, duration and throughputs") {
    CHECK(m.completed == 3);
    CHECK(m.failed == 0);
    CHECK(m.total_input_tokens == 60);
    CHECK(m.total_output_tokens == 8);
    CHECK_THAT(m.duration_s, WithinRel(0.33, kRel));
    CHECK_THAT(m.request_throughput, WithinRel(3 / 0.33, kRel));
    CHECK_THAT(m.output_throughput, WithinRel(8 / 0.33, kRel));
    CHECK_THAT(m.total_token_throughput, WithinRel(68 / 0.33, kRel));
    CHECK_FALSE(m.request_goodput.has_value());
  }
  SECTION("peak tokens per second and peak concurrency") {
    // All 8 tokens land in second 0; at 120 ms A [0,260), B [50,330) and C [120,200) overlap.
    CHECK(m.max_output_tokens_per_s == 8.0);
    CHECK(m.max_concurrent_requests == 3);
  }
  SECTION("TTFT [100, 100, 80] ms: output==1 request C included") {
    const auto& s = m.summaries.at("ttft");
    CHECK_THAT(s.mean_ms, WithinRel(280.0 / 3, kRel));
    CHECK_THAT(s.median_ms, WithinRel(100.0, kRel));
    CHECK_THAT(s.std_ms, WithinRel(std::sqrt(800.0 / 9), 1e-9));
    CHECK_THAT(pct(s, 0), WithinRel(80.0, kRel));
    CHECK_THAT(pct(s, 50), WithinRel(100.0, kRel));
    CHECK_THAT(pct(s, 99), WithinRel(100.0, kRel));
    CHECK_THAT(pct(s, 100), WithinRel(100.0, kRel));
  }
  SECTION("TPOT [53.33, 90] ms: output==1 request C excluded") {
    const auto& s = m.summaries.at("tpot");
    const double a = 160.0 / 3;
    CHECK_THAT(s.mean_ms, WithinRel((a + 90) / 2, 1e-9));
    CHECK_THAT(s.median_ms, WithinRel((a + 90) / 2, 1e-9));
    CHECK_THAT(s.std_ms, WithinRel((90 - a) / 2, 1e-9));
    CHECK_THAT(pct(s, 0), WithinRel(a, 1e-9));
    CHECK_THAT(pct(s, 99), WithinRel(a + 0.99 * (90 - a), 1e-9));
    CHECK_THAT(pct(s, 100), WithinRel(90.0, 1e-9));
  }
  SECTION("ITL pooled [50, 50, 60, 70, 110] ms, preemption gap 110 included") {
    const auto& s = m.summaries.at("itl");
    CHECK_THAT(s.mean_ms, WithinRel(68.0, kRel));
    CHECK_THAT(s.median_ms, WithinRel(60.0, kRel));
    CHECK_THAT(s.std_ms, WithinRel(std::sqrt(496.0), 1e-9));
    CHECK_THAT(pct(s, 0), WithinRel(50.0, kRel));
    CHECK_THAT(pct(s, 50), WithinRel(60.0, kRel));
    CHECK_THAT(pct(s, 99), WithinRel(108.4, kRel));  // rank 3.96: 70 + 0.96·40
    CHECK_THAT(pct(s, 100), WithinRel(110.0, kRel));
  }
  SECTION("E2EL [260, 280, 80] ms") {
    const auto& s = m.summaries.at("e2el");
    CHECK_THAT(s.mean_ms, WithinRel(620.0 / 3, kRel));
    CHECK_THAT(s.median_ms, WithinRel(260.0, kRel));
    CHECK_THAT(pct(s, 99), WithinRel(260 + 0.98 * 20, kRel));  // rank 1.98
  }
}

TEST_CASE("token_times follows the segments through the StepLog", "[metrics]") {
  auto t = tiny_scenario();
  const auto times = token_times(t.records[1], t.logs[0]);
  REQUIRE(times.size() == 3);
  CHECK(times[0] == ms(150));
  CHECK(times[1] == ms(260));
  CHECK(times[2] == ms(330));
}

TEST_CASE("ttft_offset_s shifts TTFT and E2EL, not TPOT or ITL", "[metrics]") {
  // Expectations: +20 ms client overhead → TTFT mean +20, E2EL mean +20; TPOT, ITL unchanged.
  auto t = tiny_scenario();
  auto o = all_percentiles();
  const auto base = compute_metrics(t.records, t.logs, o);
  o.ttft_offset_s = 0.020;
  const auto m = compute_metrics(t.records, t.logs, o);
  CHECK_THAT(m.summaries.at("ttft").mean_ms,
             WithinRel(base.summaries.at("ttft").mean_ms + 20, 1e-9));
  CHECK_THAT(m.summaries.at("e2el").mean_ms,
             WithinRel(base.summaries.at("e2el").mean_ms + 20, 1e-9));
  CHECK_THAT(m.summaries.at("tpot").mean_ms, WithinRel(base.summaries.at("tpot").mean_ms, 1e-9));
  CHECK(m.summaries.at("itl").mean_ms == base.summaries.at("itl").mean_ms);
  CHECK_THAT(m.duration_s, WithinRel(0.35, kRel));  // last completion 330 + 20 ms
}

TEST_CASE("warm-up requests are excluded from everything", "[metrics]") {
  // In details: warm-ups use the same replica and even steps of measured requests.
  // Expectations: every number equals the run without them, except that the duration now starts
  // at the first *measured* send.
  auto t = tiny_scenario();
  const auto base = compute_metrics(t.records, t.logs, all_percentiles());
  auto with = t.records;
  auto w1 = testing::make_record(10, 0, 999, {{0, 4}}, t.logs[0]);
  w1.warmup = true;
  auto w2 = testing::make_record(11, 0, 5, {{4, 4}}, t.logs[0]);
  w2.warmup = true;
  w2.failed = true;
  w2.completed = false;
  with.insert(with.begin(), w1);
  with.push_back(w2);
  const auto m = compute_metrics(with, t.logs, all_percentiles());
  CHECK(m.completed == base.completed);
  CHECK(m.failed == 0);
  CHECK(m.total_input_tokens == base.total_input_tokens);
  CHECK(m.total_output_tokens == base.total_output_tokens);
  CHECK(m.duration_s == base.duration_s);
  CHECK(m.max_output_tokens_per_s == base.max_output_tokens_per_s);
  CHECK(m.max_concurrent_requests == base.max_concurrent_requests);
  for (const char* k : {"ttft", "tpot", "itl", "e2el"}) {
    CHECK(m.summaries.at(k).mean_ms == base.summaries.at(k).mean_ms);
    CHECK(m.summaries.at(k).percentiles_ms == base.summaries.at(k).percentiles_ms);
  }

  SECTION("duration starts at the first measured send") {
    // Steps end at 1.0, 1.5, 2.0 s; warm-up W sent at 0 s (step 0); measured M sent at 0.5 s,
    // tokens at steps 1..2. Expectation: duration = 2.0 − 0.5 = 1.5 s.
    std::vector<StepLog> logs(1);
    logs[0].step_end = {ms(1000), ms(1500), ms(2000)};
    auto w = testing::make_record(0, 0, 1, {{0, 0}}, logs[0]);
    w.warmup = true;
    auto mm = testing::make_record(1, 500, 1, {{1, 2}}, logs[0]);
    const auto r = compute_metrics({w, mm}, logs, all_percentiles());
    CHECK_THAT(r.duration_s, WithinRel(1.5, kRel));
    CHECK(r.completed == 1);
  }
}

TEST_CASE("failed requests count in `failed` only", "[metrics]") {
  // Expectations: one failed request (rejected at 200 ms) → failed 1; completed, tokens, latency
  // summaries and duration unchanged.
  auto t = tiny_scenario();
  const auto base = compute_metrics(t.records, t.logs, all_percentiles());
  RequestRecord f;
  f.id = 3;
  f.arrival = ms(200);
  f.prompt_tokens = 5000;
  f.output_tokens = 10;
  f.failed = true;
  f.error = "prompt longer than --max-model-len";
  auto recs = t.records;
  recs.push_back(f);
  const auto m = compute_metrics(recs, t.logs, all_percentiles());
  CHECK(m.failed == 1);
  CHECK(m.completed == 3);
  CHECK(m.total_input_tokens == 60);
  CHECK(m.total_output_tokens == 8);
  CHECK(m.duration_s == base.duration_s);
  CHECK(m.summaries.at("ttft").percentiles_ms == base.summaries.at("ttft").percentiles_ms);
  CHECK(m.summaries.at("e2el").mean_ms == base.summaries.at("e2el").mean_ms);

  SECTION("a request still in flight is neither completed nor failed") {
    RequestRecord inflight;
    inflight.id = 4;
    inflight.arrival = ms(300);
    recs.push_back(inflight);
    const auto m2 = compute_metrics(recs, t.logs, all_percentiles());
    CHECK(m2.completed == 3);
    CHECK(m2.failed == 1);
  }
}

TEST_CASE("goodput: every given SLO must hold (metric <= SLO)", "[metrics]") {
  // Per request (ms): A ttft 100 tpot 53.3 e2el 260; B 100 / 90 / 280; C 80 / (0) / 80.
  // vLLM treats a one-token request's TPOT as 0 for goodput.
  auto t = tiny_scenario();
  const auto goodput = [&](std::map<std::string, double> slo) {
    auto o = all_percentiles();
    o.goodput_slo_ms = std::move(slo);
    const auto m = compute_metrics(t.records, t.logs, o);
    REQUIRE(m.request_goodput.has_value());
    return *m.request_goodput * m.duration_s;  // number of good requests
  };
  CHECK_THAT(goodput({{"ttft", 100.001}}), WithinRel(3.0, kRel));
  CHECK_THAT(goodput({{"ttft", 99.999}}), WithinRel(1.0, kRel));
  CHECK_THAT(goodput({{"tpot", 60}}), WithinRel(2.0, kRel));  // A and C
  CHECK_THAT(goodput({{"tpot", 0}}), WithinRel(1.0, kRel));   // only C (tpot counted as 0)
  CHECK_THAT(goodput({{"e2el", 270}, {"ttft", 90}}), WithinRel(1.0, kRel));  // only C
  CHECK_THAT(goodput({{"e2el", 1e9}}), WithinRel(3.0, kRel));
  CHECK_THAT(goodput({{"e2el", 79.999}}), WithinAbs(0.0, 1e-12));
}

TEST_CASE("client queue time: its own summary and the queue-inclusive E2EL", "[metrics]") {
  // Expectations: queue times [10, 0, 30] ms → mean 13.33 ms; E2EL + queue [270, 280, 110] ms.
  // Computed only when selected.
  auto t = tiny_scenario();
  t.records[0].client_queue_time = ms(10);
  t.records[2].client_queue_time = ms(30);
  auto o = all_percentiles();
  CHECK_FALSE(compute_metrics(t.records, t.logs, o).summaries.count("client_queue_time"));
  o.percentile_metrics = {"client_queue_time", "e2el_including_client_queue"};
  const auto m = compute_metrics(t.records, t.logs, o);
  CHECK_THAT(m.summaries.at("client_queue_time").mean_ms, WithinRel(40.0 / 3, 1e-9));
  CHECK_THAT(m.summaries.at("e2el_including_client_queue").median_ms, WithinRel(270.0, 1e-9));
  CHECK_THAT(pct(m.summaries.at("e2el_including_client_queue"), 100), WithinRel(280.0, 1e-9));
}

TEST_CASE("parse_goodput accepts KEY:VALUE and rejects what vLLM rejects", "[metrics]") {
  const auto slo = parse_goodput({"ttft:500", "tpot:50", "e2el: 1e3 "});
  CHECK(slo.size() == 3);
  CHECK(slo.at("ttft") == 500.0);
  CHECK(slo.at("tpot") == 50.0);
  CHECK(slo.at("e2el") == 1000.0);
  CHECK(parse_goodput({"ttft:1", "ttft:2"}).at("ttft") == 2.0);  // last value wins
  CHECK(parse_goodput({"tpot:0"}).at("tpot") == 0.0);
  for (const std::string bad : {"ttft", "ttft:abc", "ttft:", "ttft:1:2", "ttft:0x10", "foo:5",
                                "ttft:-1", "TTFT:5", "ttft:nan"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_goodput({bad}), ConfigError);
    CHECK_THROWS_WITH(parse_goodput({bad}), Catch::Contains("--goodput"));
  }
  CHECK_THROWS_WITH(parse_goodput({"foo:5"}), Catch::Contains("foo"));
  CHECK_THROWS_WITH(parse_goodput({"ttft:-1"}), Catch::Contains("non-negative"));
}

TEST_CASE("bad options are ConfigErrors naming the flag", "[metrics]") {
  auto t = tiny_scenario();
  MetricsOptions o;
  o.metric_percentiles = {101};
  CHECK_THROWS_WITH(compute_metrics(t.records, t.logs, o), Catch::Contains("--metric-percentiles"));
  o = MetricsOptions{};
  o.percentile_metrics = {"ttft", "latency"};
  CHECK_THROWS_WITH(compute_metrics(t.records, t.logs, o), Catch::Contains("--percentile-metrics"));
  o = MetricsOptions{};
  o.goodput_slo_ms = {{"itl", 5}};
  CHECK_THROWS_WITH(compute_metrics(t.records, t.logs, o), Catch::Contains("--goodput"));
}

TEST_CASE("inconsistent records are internal errors", "[metrics]") {
  auto t = tiny_scenario();
  t.records[0].output_tokens = 5;  // segments hold 4
  CHECK_THROWS_AS(compute_metrics(t.records, t.logs, MetricsOptions{}), InternalError);
  t = tiny_scenario();
  t.records[1].segments[1].last_step = 5;  // beyond the StepLog
  CHECK_THROWS_AS(compute_metrics(t.records, t.logs, MetricsOptions{}), InternalError);
}

TEST_CASE("no samples: every statistic is 0, like np.mean(x or 0)", "[metrics]") {
  const auto m = compute_metrics({}, {}, all_percentiles());
  CHECK(m.completed == 0);
  CHECK(m.duration_s == 0.0);
  CHECK(m.request_throughput == 0.0);
  CHECK(m.max_output_tokens_per_s == 0.0);
  CHECK(m.max_concurrent_requests == 0);
  for (const auto& [key, s] : m.summaries) {
    INFO(key);
    CHECK(s.mean_ms == 0.0);
    CHECK(s.median_ms == 0.0);
    CHECK(s.std_ms == 0.0);
    REQUIRE(s.percentiles_ms.size() == 4);
    for (const auto& [p, v] : s.percentiles_ms) CHECK(v == 0.0);
  }
  // Only one-token requests: TPOT and ITL have no samples.
  auto t = tiny_scenario();
  const auto one = compute_metrics({t.records[2]}, t.logs, all_percentiles());
  CHECK(one.summaries.at("tpot").mean_ms == 0.0);
  CHECK(one.summaries.at("itl").percentiles_ms.back().second == 0.0);
  CHECK_THAT(one.summaries.at("ttft").mean_ms, WithinRel(80.0, kRel));
}

// ---------------------------------------------------------------------------------------------
// Weighted ITL against the naive expanded computation, on random data.

// numpy's np.percentile(linear), written out independently of the library.
double naive_percentile(const std::vector<double>& sorted, double p) {
  const double vi = static_cast<double>(sorted.size() - 1) * (p / 100.0);
  if (vi >= static_cast<double>(sorted.size() - 1)) return sorted.back();
  const double lo = std::floor(vi);
  const double g = vi - lo;
  const double a = sorted[static_cast<std::size_t>(lo)];
  const double b = sorted[static_cast<std::size_t>(lo) + 1];
  return g >= 0.5 ? b - (b - a) * (1 - g) : a + (b - a) * g;
}

struct RandomRun {
  std::vector<StepLog> logs;
  std::vector<RequestRecord> records;
};

// `decode_like`: ~20 times more steps, most of them 5 ms + up to 3 µs (decode steps, which
// compute_metrics sums in the ITL multiset's dense window), 5% of 20–60 ms, 1% of under 1 ms.
RandomRun random_run(uint64_t seed, bool decode_like = false) {
  std::mt19937_64 rng(seed);
  RandomRun run;
  const int replicas = 3;
  for (int r = 0; r < replicas; ++r) {
    StepLog log;
    int64_t t = 1'000'000;
    const int steps = (200 + static_cast<int>(rng() % 300)) * (decode_like ? 20 : 1);
    for (int s = 0; s < steps; ++s) {
      if (decode_like) {
        const auto kind = rng() % 100;
        t += kind == 0   ? 1 + static_cast<int64_t>(rng() % 1'000'000)
             : kind <= 5 ? 20'000'000 + static_cast<int64_t>(rng() % 40'000'000)
                         : 5'000'000 + static_cast<int64_t>(rng() % 3'000);
        log.step_end.push_back(SimTime::from_ns(t));
        continue;
      }
      // Replica 0 has few distinct step durations (many ties); the others are arbitrary.
      t += r == 0 ? 10'000'000 * static_cast<int64_t>(1 + rng() % 3)
                  : 1 + static_cast<int64_t>(rng() % 90'000'000);
      log.step_end.push_back(SimTime::from_ns(t));
    }
    run.logs.push_back(log);
  }
  for (int64_t id = 0; id < (decode_like ? 2000 : 400); ++id) {
    const int32_t rep = static_cast<int32_t>(rng() % replicas);
    const auto& log = run.logs[static_cast<std::size_t>(rep)];
    const auto n = static_cast<int64_t>(log.step_end.size());
    int64_t s = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    std::vector<TokenSegment> segs;
    const int nseg = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < nseg && s < n; ++k) {
      const int64_t len = 1 + static_cast<int64_t>(rng() % (decode_like ? 300 : 40));
      const int64_t last = std::min(n - 1, s + len - 1);
      segs.push_back({s, last});
      s = last + 2 + static_cast<int64_t>(rng() % 20);  // a preemption gap of ≥ 1 step
    }
    auto r = testing::make_record(id, 0, 1 + static_cast<int32_t>(rng() % 100), segs, log);
    r.replica = rep;
    // Sent a random time before its first token.
    r.arrival = SimTime::from_ns(
        std::max<int64_t>(0, r.first_token.ns() - static_cast<int64_t>(rng() % 3'000'000'000)));
    const auto kind = rng() % 10;
    if (kind == 0) r.warmup = true;
    if (kind == 1) {
      r.failed = true;
      r.completed = false;
    }
    run.records.push_back(r);
  }
  return run;
}

TEST_CASE("weighted ITL equals the naive expansion on random segments", "[metrics]") {
  // In details: 3 replicas, 400 requests with 1–3 segments (preemption gaps), 10% warm-up,
  // 10% failed. The naive side lists every token time, every gap, sorts, and applies numpy's
  // formulas directly.
  // Expectations: percentiles and median bit-identical; mean and std within 1e-12 relative.
  // The decode-like runs (> 4,096 steps) take the dense-window path of the ITL multiset.
  const std::vector<double> ps = {0, 1, 12.5, 25, 50, 75, 90, 99, 99.9, 100};
  for (uint64_t seed : {1u, 2u, 3u, 42u, 101u, 102u}) {
    INFO("seed " << seed);
    const auto run = random_run(seed, /*decode_like=*/seed > 100);
    MetricsOptions o;
    o.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
    o.metric_percentiles = ps;
    const auto m = compute_metrics(run.records, run.logs, o);

    std::vector<double> gaps, ttfts;
    std::vector<std::vector<double>> token_s;  // per measured completed request, seconds
    for (const auto& r : run.records) {
      if (r.warmup || r.failed || !r.completed) continue;
      const auto times = token_times(r, run.logs[static_cast<std::size_t>(r.replica)]);
      REQUIRE(static_cast<int32_t>(times.size()) == r.output_tokens);
      for (std::size_t k = 1; k < times.size(); ++k)
        gaps.push_back((times[k] - times[k - 1]).seconds());
      ttfts.push_back((r.first_token - r.arrival).seconds());
    }
    REQUIRE(gaps.size() > 1000);
    std::sort(gaps.begin(), gaps.end());
    const auto& itl = m.summaries.at("itl");
    const std::size_t n = gaps.size();
    for (const auto& [p, v] : itl.percentiles_ms) {
      INFO("p" << p);
      CHECK(v == naive_percentile(gaps, p) * 1000);
    }
    const double median = n % 2 ? gaps[n / 2] : (gaps[n / 2 - 1] + gaps[n / 2]) / 2.0;
    CHECK(itl.median_ms == median * 1000);
    double sum = 0;
    for (double g : gaps) sum += g;
    const double mean = sum / static_cast<double>(n);
    double sq = 0;
    for (double g : gaps) sq += (g - mean) * (g - mean);
    CHECK_THAT(itl.mean_ms, WithinRel(mean * 1000, 1e-11));
    CHECK_THAT(itl.std_ms, WithinRel(std::sqrt(sq / static_cast<double>(n)) * 1000, 1e-10));

    std::sort(ttfts.begin(), ttfts.end());
    CHECK(pct(m.summaries.at("ttft"), 99.9) == naive_percentile(ttfts, 99.9) * 1000);
  }
}

TEST_CASE("peak tokens/s and peak concurrency match vLLM's per-token loops", "[metrics]") {
  // In details: the naive side is calculate_metrics' own algorithm: per successful request, every
  // token time into bucket int(t − min_start); concurrency = max over sends of the number of
  // half-open intervals [start, start + latency) containing it.
  for (uint64_t seed : {5u, 6u, 7u, 105u}) {
    INFO("seed " << seed);
    const auto run = random_run(seed, /*decode_like=*/seed > 100);
    const auto m = compute_metrics(run.records, run.logs, MetricsOptions{});
    std::vector<const RequestRecord*> ok;
    for (const auto& r : run.records) {
      if (!r.warmup && r.completed && !r.failed) ok.push_back(&r);
    }
    SimTime min_start = SimTime::max();
    double max_end = 0;
    for (const auto* r : ok) min_start = std::min(min_start, r->arrival);
    for (const auto* r : ok) max_end = std::max(max_end, (r->last_token - min_start).seconds());
    std::vector<double> bins(static_cast<std::size_t>(std::ceil(max_end)) + 1, 0.0);
    for (const auto* r : ok) {
      for (const auto& t : token_times(*r, run.logs[static_cast<std::size_t>(r->replica)])) {
        bins[static_cast<std::size_t>((t - min_start).seconds())] += 1;
      }
    }
    CHECK(m.max_output_tokens_per_s == *std::max_element(bins.begin(), bins.end()));
    int64_t peak = 0;
    for (const auto* a : ok) {
      int64_t c = 0;
      for (const auto* b : ok) c += (b->arrival <= a->arrival && a->arrival < b->last_token);
      peak = std::max(peak, c);
    }
    CHECK(m.max_concurrent_requests == peak);
  }
}

TEST_CASE("values left out (compute_itl, the two peaks) change none of the others", "[metrics]") {
  // In details: MetricsOptions::compute_itl / compute_max_output_tokens_per_s /
  // compute_max_concurrent_requests cleared, one at a time and all together, on random runs.
  // Expectations: what is left out is absent (ITL) or 0 (the peaks); every other value is the same
  // double as with everything computed.
  for (uint64_t seed : {8u, 9u, 109u}) {
    INFO("seed " << seed);
    const auto run = random_run(seed, /*decode_like=*/seed > 100);
    MetricsOptions all;
    all.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
    all.metric_percentiles = {50, 90, 99};
    all.goodput_slo_ms = {{"ttft", 2000}};
    const auto full = compute_metrics(run.records, run.logs, all);
    for (int mask = 1; mask < 8; ++mask) {
      INFO("mask " << mask);
      MetricsOptions o = all;
      o.compute_itl = (mask & 1) == 0;
      o.compute_max_output_tokens_per_s = (mask & 2) == 0;
      o.compute_max_concurrent_requests = (mask & 4) == 0;
      const auto m = compute_metrics(run.records, run.logs, o);
      CHECK(m.completed == full.completed);
      CHECK(m.failed == full.failed);
      CHECK(m.duration_s == full.duration_s);
      CHECK(m.request_throughput == full.request_throughput);
      CHECK(*m.request_goodput == *full.request_goodput);
      CHECK(m.output_throughput == full.output_throughput);
      CHECK(m.total_token_throughput == full.total_token_throughput);
      CHECK(m.max_output_tokens_per_s ==
            (o.compute_max_output_tokens_per_s ? full.max_output_tokens_per_s : 0.0));
      CHECK(m.max_concurrent_requests ==
            (o.compute_max_concurrent_requests ? full.max_concurrent_requests : 0));
      CHECK(m.summaries.count("itl") == (o.compute_itl ? 1u : 0u));
      for (const auto& [key, s] : m.summaries) {
        INFO(key);
        const auto& f = full.summaries.at(key);
        CHECK(s.mean_ms == f.mean_ms);
        CHECK(s.median_ms == f.median_ms);
        CHECK(s.std_ms == f.std_ms);
        CHECK(s.percentiles_ms == f.percentiles_ms);
      }
    }
  }
}

TEST_CASE("ITL multiset: a dense window gives the summary of sorting every sample", "[metrics]") {
  // In details: WeightedNsSamples with set_window() against the same adds without one. The
  // samples mix a dense bulk (5 ms + up to 2 µs), values below and far above it, weights up to
  // 1000 and a few of 2^24 or more and values of 2^40 ns or more (the multiset's wide mode);
  // windows that hold the bulk, part of it, nothing, or everything.
  // Expectations: every statistic is the same double (the same distinct values and weights).
  const std::vector<double> ps = {0, 1, 25, 50, 90, 99, 99.9, 100};
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    std::vector<std::pair<int64_t, int64_t>> adds;
    for (int i = 0; i < 20'000; ++i) {
      const auto kind = rng() % 100;
      int64_t v = 5'000'000 + static_cast<int64_t>(rng() % 2'000);
      if (kind < 3) v = static_cast<int64_t>(rng() % 5'000'000);
      if (kind >= 3 && kind < 8) v = 20'000'000 + static_cast<int64_t>(rng() % 40'000'000);
      if (kind == 8 && seed == 3) v = (int64_t{1} << 40) + static_cast<int64_t>(rng() % 1000);
      int64_t w = 1 + static_cast<int64_t>(rng() % 1000);
      if (kind == 9 && seed == 2 && i < 2'000)
        w = (int64_t{1} << 24) + static_cast<int64_t>(rng() % 7);
      adds.emplace_back(v, w);
    }
    int64_t total = 0;
    for (const auto& [v, w] : adds) total += w;
    detail::WeightedNsSamples plain;
    for (const auto& [v, w] : adds) plain.add(v, w);
    const MetricSummary expected = plain.summarize(ps);
    const std::pair<int64_t, int64_t> windows[] = {
        {5'000'000, 2'000}, {5'000'500, 700}, {1, 1}, {0, 70'000'000}, {4'999'000, 1'000}};
    for (const auto& [lo, width] : windows) {
      INFO("seed " << seed << ", window " << lo << " + " << width);
      detail::WeightedNsSamples windowed;
      REQUIRE(windowed.set_window(lo, width, total));
      for (const auto& [v, w] : adds) windowed.add(v, w);
      REQUIRE(windowed.count() == plain.count());
      const MetricSummary got = windowed.summarize(ps);
      CHECK(got.mean_ms == expected.mean_ms);
      CHECK(got.median_ms == expected.median_ms);
      CHECK(got.std_ms == expected.std_ms);
      CHECK(got.percentiles_ms == expected.percentiles_ms);
      // Adds after a summary join the merged values (the window is gone by then).
      windowed.add(5'000'001, 3);
      plain.add(5'000'001, 3);
      CHECK(windowed.summarize(ps).percentiles_ms == plain.summarize(ps).percentiles_ms);
      plain = detail::WeightedNsSamples();
      for (const auto& [v, w] : adds) plain.add(v, w);
    }
  }
  // Refused: after an add, a width of 0, a total that 32-bit sums could not hold.
  detail::WeightedNsSamples s;
  CHECK_FALSE(s.set_window(0, 0, 10));
  CHECK_FALSE(s.set_window(0, 10, int64_t{1} << 32));
  s.add(5, 1);
  CHECK_FALSE(s.set_window(0, 10, 10));
}

TEST_CASE("ITL counts per step hold a batch of 32,767 and of 32,768 segments alike", "[metrics]") {
  // Steps end at 100, 150, 220 ms; n requests each emit 3 tokens in steps 0..2. Expectation: ITL
  // = n × 50 ms and n × 70 ms (mean 60; median 60, numpy's mean of the two middle values 50 and
  // 70), 3n output tokens in the first second.
  // compute_metrics counts the tokens ending a gap per step in a difference array whose entries
  // are 16-bit until one would leave that range (+n at step 1, −n at step 3): n = 32,767 fits,
  // n = 32,768 widens the array, and the figures must not change.
  for (const int n : {32767, 32768}) {
    std::vector<StepLog> logs(1);
    logs[0].step_end = {ms(100), ms(150), ms(220)};
    std::vector<RequestRecord> records;
    for (int i = 0; i < n; ++i) records.push_back(testing::make_record(i, 0, 1, {{0, 2}}, logs[0]));
    const auto m = compute_metrics(records, logs, all_percentiles());
    CHECK_THAT(m.summaries.at("itl").mean_ms, WithinRel(60.0, kRel));
    CHECK_THAT(m.summaries.at("itl").median_ms, WithinRel(60.0, kRel));
    CHECK(m.max_output_tokens_per_s == 3.0 * n);
  }
}

}  // namespace
}  // namespace servesim::metrics
