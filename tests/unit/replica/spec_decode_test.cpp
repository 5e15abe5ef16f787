// Speculative decoding in the replica (sim/replica/spec_decode.h, replica.h): closed forms of the
// step count, the verify cost, the acceptance distribution, and the token budget and KV lookahead
// accounting at their boundaries.
//
// The cost models give step times that are multiples of 2^-10 s, so that every duration converts
// to integer nanoseconds exactly and sums compare with ==.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/replica/replica.h"
#include "sim/replica/spec_decode.h"

namespace servesim::sim {
namespace {

constexpr double kUnit = 1.0 / 1024;  // s

// A step costs `fixed` + `per_token` × its tokens (the verify rows' 1 + K tokens included).
class TokenCost : public models::CostModel {
 public:
  TokenCost(double fixed, double per_token) : fixed_(fixed), per_token_(per_token) {}
  models::StepCost estimate(const models::BatchShape& s) const override {
    models::StepCost c;
    if (s.empty()) return c;
    c.linear_s = fixed_ + per_token_ * static_cast<double>(s.total_tokens());
    c.total_s = c.linear_s;
    return c;
  }

 private:
  double fixed_, per_token_;
};

class NoObserver : public RequestObserver {
 public:
  void on_request_done(engine::Simulator&, int64_t) override {}
};

struct Run {
  std::vector<metrics::RequestRecord> records;
  metrics::StepLog log;
  ReplicaStats stats;
};

struct Setup {
  double fixed = 4 * kUnit;
  double per_token = 0.0;
  SpecDecode spec;  // off unless set
  int max_num_seqs = 64;
  int max_num_batched_tokens = 4096;
  int max_model_len = 1 << 20;
  int64_t blocks = 100000;
  const models::CostModel* drafter = nullptr;
};

SpecDecode eagle(int k, std::vector<double> rates) {
  SpecDecode s;
  s.method = "eagle";
  s.model = "head";
  s.num_speculative_tokens = k;
  s.acceptance_rates = std::move(rates);
  s.acceptance_source = "acceptance_rates";
  return s;
}

// Requests (prompt, output) arriving together at t = 0.
Run run(const Setup& setup, const std::vector<std::pair<int, int>>& requests) {
  TokenCost cost(setup.fixed, setup.per_token);
  NoObserver observer;
  engine::Simulator sim;
  Run out;
  out.records.resize(requests.size());
  EngineConfig cfg;
  cfg.max_num_seqs = setup.max_num_seqs;
  cfg.max_num_batched_tokens = setup.max_num_batched_tokens;
  cfg.max_model_len = setup.max_model_len;
  cfg.async_scheduling = 0;
  cfg.spec = setup.spec;
  Replica replica(0, cfg, cost, nullptr, setup.blocks, &out.records, &observer);
  replica.set_drafter(setup.drafter);
  for (size_t i = 0; i < requests.size(); ++i) {
    workloads::RequestSpec spec;
    spec.id = static_cast<int64_t>(i);
    spec.prompt_tokens = requests[i].first;
    spec.output_tokens = requests[i].second;
    out.records[i].id = spec.id;
    out.records[i].prompt_tokens = spec.prompt_tokens;
    out.records[i].output_tokens = spec.output_tokens;
    replica.add_request(sim, spec);
  }
  sim.run();
  out.log = replica.step_log();
  out.stats = replica.stats();
  // Every completed record must satisfy the metrics' invariants (segments = chunks).
  metrics::compute_metrics(out.records, {out.log}, metrics::MetricsOptions{});
  return out;
}

TEST_CASE("spec decode: acceptance 1 with K drafts divides a lone request's decode steps by K+1",
          "[replica][spec]") {
  // Output 1 + (K+1)·m: the prefill step emits the first token, then every verify step accepts
  // all K drafts and emits K + 1. Without speculation the same request takes (K+1)·m decode
  // steps; with it, m. The step cost is constant (per_token 0), so TPOT drops by (K+1)× too.
  for (int k : {1, 3, 5}) {
    INFO("K " << k);
    const int m = 12;
    const int output = 1 + (k + 1) * m;
    Setup plain;
    const Run base = run(plain, {{100, output}});
    Setup sd;
    sd.spec = eagle(k, std::vector<double>(static_cast<size_t>(k), 1.0));
    const Run spec = run(sd, {{100, output}});
    REQUIRE(base.log.step_end.size() == static_cast<size_t>(1 + (k + 1) * m));
    REQUIRE(spec.log.step_end.size() == static_cast<size_t>(1 + m));
    const SimTime step = SimTime::from_seconds_ceil(sd.fixed);
    REQUIRE(spec.records[0].last_token - spec.records[0].first_token ==
            SimTime::from_ns(step.ns() * m));
    REQUIRE(base.records[0].last_token - base.records[0].first_token ==
            SimTime::from_ns(step.ns() * (k + 1) * m));
    REQUIRE(spec.records[0].output_chunks == 1 + m);
    REQUIRE(spec.stats.spec_verify_rows == m);
    REQUIRE(spec.stats.spec_accepted_tokens == int64_t{k} * m);
    REQUIRE(spec.stats.spec_emitted_tokens == int64_t{k + 1} * m);
  }
}

TEST_CASE("spec decode: the last chunk is capped by the remaining output", "[replica][spec]") {
  // Output 1 + 4·3 + 2 with K = 3 and acceptance 1: three full chunks of 4, then one of 2 (the
  // verify step still runs K + 1 = 4 tokens).
  Setup sd;
  sd.spec = eagle(3, {1.0, 1.0, 1.0});
  const Run r = run(sd, {{50, 15}});
  REQUIRE(r.log.step_end.size() == 1 + 4);
  REQUIRE(r.records[0].output_chunks == 5);
  REQUIRE(r.stats.spec_emitted_tokens == 14);
  REQUIRE(r.stats.scheduled_tokens == 50 + 4 * 4);
}

TEST_CASE("spec decode: acceptance 0 gains nothing and pays the verify cost", "[replica][spec]") {
  // Every draft rejected: one token per step, as without speculation, but each verify step
  // computes 1 + K tokens. With step cost F + b·tokens, a decode step takes F + b(1 + K) instead
  // of F + b, and the step count is unchanged.
  const int k = 4, output = 30;
  Setup plain;
  plain.per_token = 1 * kUnit;
  Setup sd = plain;
  sd.spec = eagle(k, std::vector<double>(k, 0.0));
  const Run base = run(plain, {{20, output}});
  const Run spec = run(sd, {{20, output}});
  REQUIRE(spec.log.step_end.size() == base.log.step_end.size());
  REQUIRE(spec.log.step_end.size() == static_cast<size_t>(output));
  const SimTime base_step = SimTime::from_seconds_ceil(plain.fixed + plain.per_token);
  const SimTime spec_step = SimTime::from_seconds_ceil(sd.fixed + sd.per_token * (1 + k));
  for (size_t s = 1; s < spec.log.step_end.size(); ++s) {
    REQUIRE(spec.log.step_end[s] - spec.log.step_end[s - 1] == spec_step);
    REQUIRE(base.log.step_end[s] - base.log.step_end[s - 1] == base_step);
  }
  REQUIRE(spec.stats.spec_accepted_tokens == 0);
  REQUIRE(spec.stats.spec_draft_tokens == int64_t{k} * (output - 1));
  REQUIRE(spec.records[0].output_chunks == output);
}

TEST_CASE("spec decode: the drafter's time adds to every step", "[replica][spec]") {
  // A drafter whose every forward costs D: a verify step of one request runs K forwards (the
  // first over its 1 + K tokens, then K − 1 of one token), so it takes F + K·D.
  const int k = 3;
  TokenCost drafter(2 * kUnit, 0.0);
  Setup sd;
  sd.spec = eagle(k, std::vector<double>(k, 0.0));
  sd.drafter = &drafter;
  const Run r = run(sd, {{20, 5}});
  const SimTime verify = SimTime::from_seconds_ceil(sd.fixed + k * 2 * kUnit);
  for (size_t s = 1; s < r.log.step_end.size(); ++s) {
    REQUIRE(r.log.step_end[s] - r.log.step_end[s - 1] == verify);
  }
  // The prefill step: its own forward, then K − 1 one-token passes for the request it samples.
  REQUIRE(r.log.step_end[0] == SimTime::from_seconds_ceil(sd.fixed + k * 2 * kUnit));
}

TEST_CASE("spec decode: accepted drafts follow the closed form of the per-position rates",
          "[replica][spec]") {
  // P(A ≥ m) = Π_{i≤m} a_i, so E[A] = Σ_m Π_{i≤m} a_i and E[A²] = Σ_m (2m − 1) Π_{i≤m} a_i.
  // Over N independent draws the sample mean lies within 5 standard errors sqrt(Var/N) of E[A]
  // except with probability < 6e-7.
  const std::vector<double> rates = {0.8, 0.6, 0.4};
  double all = 1.0, mean = 0.0, second = 0.0;
  for (int m = 1; m <= 3; ++m) {
    all *= rates[static_cast<size_t>(m - 1)];
    mean += all;
    second += (2 * m - 1) * all;
  }
  REQUIRE(mean == Approx(0.8 + 0.48 + 0.192).epsilon(1e-12));
  REQUIRE(mean_accepted(rates, 3) == Approx(mean).epsilon(1e-12));
  const double sd = std::sqrt(second - mean * mean);

  SECTION("the draw itself") {
    const int n = 200000;
    double sum = 0.0;
    int64_t at_least[4] = {0, 0, 0, 0};  // draws with A >= m
    for (int i = 0; i < n; ++i) {
      const int a = accepted_drafts(rates, 7, i % 97, i / 97, 3);
      sum += a;
      for (int m = 1; m <= a; ++m) ++at_least[m];
    }
    REQUIRE(std::abs(sum / n - mean) < 5 * sd / std::sqrt(double(n)));
    // Each survival frequency against P(A >= m) = a_1 · … · a_m, within 5 binomial deviations.
    double p = 1.0;
    for (int m = 1; m <= 3; ++m) {
      p *= rates[static_cast<size_t>(m - 1)];
      const double freq = static_cast<double>(at_least[m]) / n;
      REQUIRE(std::abs(freq - p) < 5 * std::sqrt(p * (1 - p) / n));
    }
  }
  SECTION("through the replica") {
    // 64 requests of 2000 output tokens: ~64 · 2000 / 2.47 ≈ 52,000 verify rows.
    Setup s;
    s.spec = eagle(3, rates);
    const Run r = run(s, std::vector<std::pair<int, int>>(64, {30, 2000}));
    const double rows = static_cast<double>(r.stats.spec_verify_rows);
    REQUIRE(rows > 40000);
    const double got = static_cast<double>(r.stats.spec_accepted_tokens) / rows;
    REQUIRE(std::abs(got - mean) < 5 * sd / std::sqrt(rows));
    // Tokens per step: the accepted drafts + 1, except in each request's last chunk (capped).
    REQUIRE(r.stats.spec_emitted_tokens == 64 * 1999);
  }
}

TEST_CASE("spec decode: the draw accepts up to the first rejected position", "[replica][spec]") {
  // The draw does not depend on how many drafts are scheduled, so the drafts accepted out of d
  // are min(A_K, d): the first rejection ends the run, whatever is scheduled after it.
  const std::vector<double> rates = {0.9, 0.7, 0.5, 0.3, 0.1};
  for (int64_t id = 0; id < 50; ++id) {
    for (int64_t gen = 0; gen < 200; ++gen) {
      const int all = accepted_drafts(rates, 11, id, gen, 5);
      for (int d = 0; d <= 6; ++d)
        REQUIRE(accepted_drafts(rates, 11, id, gen, d) == std::min(all, d));
    }
  }
  // Rate 1 always accepts and rate 0 always rejects: the run stops exactly at the zero.
  for (int64_t id = 0; id < 200; ++id) {
    REQUIRE(accepted_drafts({1.0, 1.0, 0.0, 1.0}, 3, id, id * 7, 4) == 2);
    REQUIRE(accepted_drafts({1.0, 1.0, 0.0, 1.0}, 3, id, id * 7, 1) == 1);
    REQUIRE(accepted_drafts({0.0, 1.0, 1.0}, 3, id, id * 7, 3) == 0);
  }
  // The draws themselves are pinned (plans and documented studies depend on them): a polynomial
  // hash of 100,000 draws of the one-uniform inverse transform (spec_decode.h).
  uint64_t h = 0;
  for (int i = 0; i < 100000; ++i)
    h = h * 6 + uint64_t(accepted_drafts(rates, 11, i % 101, i / 101, 5));
  REQUIRE(h == 14163744677793213272ull);
}

TEST_CASE("spec decode: the replica's sampler gives accepted_drafts() for every input",
          "[replica][spec]") {
  // AcceptanceSampler compares the 53-bit word with ⌈p·2^53⌉ instead of its double with the
  // survival product p: equal answers by construction, checked here over many draws and at the
  // rates where an off-by-one in the threshold would show: 0, 1, exact multiples of 2^-53, their
  // neighbours, tiny and > 1.
  const double ulp = 0x1.0p-53;
  const std::vector<std::vector<double>> rate_sets = {
      {0.9, 0.7, 0.5, 0.3, 0.1},
      {0.0, 1.0, 1.0},
      {1.0, 1.0, 0.0, 1.0},
      {0.5, 0.5 + ulp, 0.5 - ulp, std::nextafter(0.5, 1.0), std::nextafter(0.5, 0.0)},
      {1e-300, 4.9e-324, 1.5, -0.25, std::nextafter(1.0, 0.0)},
      {0.62, 0.62, 0.62}};
  for (const auto& rates : rate_sets) {
    for (const uint64_t seed : {uint64_t{0}, uint64_t{11}, ~uint64_t{0}}) {
      const AcceptanceSampler sampler(rates, seed);
      for (int64_t id = 0; id < 60; ++id) {
        for (int64_t gen = 0; gen < 150; ++gen) {
          for (int d = 0; d <= static_cast<int>(rates.size()) + 1; ++d) {
            REQUIRE(sampler.accepted(id, gen, d) == accepted_drafts(rates, seed, id, gen, d));
          }
        }
      }
    }
  }
  // Rate 0.5 is the threshold 2^52 (n < 2^52 accepts): about half of 20,000 draws accept, within
  // 5 standard deviations of a binomial.
  const AcceptanceSampler half({0.5}, 5);
  int64_t accepted = 0;
  for (int64_t id = 0; id < 20000; ++id) accepted += half.accepted(id, 0, 1);
  REQUIRE(std::abs(static_cast<double>(accepted) / 20000 - 0.5) < 5 * 0.5 / std::sqrt(20000.0));
}

TEST_CASE("spec decode: the mean acceptance length converter inverts the closed form",
          "[replica][spec]") {
  // Constant rate a over K drafts: 1 + E[A] = 1 + a(1 − a^K)/(1 − a).
  for (int k : {1, 2, 4, 7}) {
    for (double len : {1.0, 1.3, 2.0, 2.9, 1.0 + k}) {
      if (len > 1.0 + k) continue;
      const double a = constant_rate_for_acceptance_length(len, k);
      REQUIRE(a >= 0.0);
      REQUIRE(a <= 1.0);
      const double closed = a == 1.0 ? k : a * (1 - std::pow(a, k)) / (1 - a);
      REQUIRE(1.0 + closed == Approx(len).margin(1e-12));
      REQUIRE(1.0 + mean_accepted(rates_for_acceptance_length(len, k), k) ==
              Approx(len).margin(1e-12));
    }
  }
  REQUIRE(constant_rate_for_acceptance_length(1.0, 3) == 0.0);
  REQUIRE(constant_rate_for_acceptance_length(4.0, 3) == 1.0);
}

TEST_CASE("spec decode: a request's acceptance does not depend on the batch around it",
          "[replica][spec]") {
  // Draws are keyed by (seed, request id, tokens generated): request 0 streams the same chunks
  // alone and among 20 others (no preemption, budget for all).
  Setup s;
  s.spec = eagle(4, {0.9, 0.7, 0.5, 0.3});
  const Run alone = run(s, {{40, 300}});
  std::vector<std::pair<int, int>> many(21, {40, 300});
  const Run crowd = run(s, many);
  REQUIRE(alone.records[0].output_chunks == crowd.records[0].output_chunks);
  // Same seed and inputs: byte-identical.
  const Run again = run(s, many);
  REQUIRE(again.log.step_end.size() == crowd.log.step_end.size());
  for (size_t i = 0; i < many.size(); ++i) {
    REQUIRE(again.records[i].last_token == crowd.records[i].last_token);
  }
}

TEST_CASE("spec decode: drafts count against the token budget", "[replica][spec]") {
  // Two decoders, K = 3, budget 5: the first gets 1 + 3 tokens, the second the 1 left (its
  // drafts are dropped this step, as vLLM truncates spec_token_ids to the scheduled tokens).
  Setup s;
  s.spec = eagle(3, {0.0, 0.0, 0.0});
  s.max_num_seqs = 2;
  s.max_num_batched_tokens = 5;
  const Run r = run(s, {{2, 4}, {2, 4}});
  REQUIRE(r.stats.peak_step_tokens == 5);
  // Steps: 0 prefills both (2 + 2 tokens), then 3 verify steps of 4 + 1 tokens.
  REQUIRE(r.log.step_end.size() == 4);
  REQUIRE(r.stats.scheduled_tokens == 4 + 3 * 5);
  REQUIRE(r.stats.spec_verify_rows == 3);  // only the first request had drafts
  REQUIRE(r.stats.spec_draft_tokens == 9);
}

TEST_CASE("spec decode: KV allocation reserves K lookahead slots within max_model_len",
          "[replica][spec]") {
  // Prompt 10, block 16. The first verify step schedules 1 + K = 4 tokens after 10 computed:
  // 14 slots fit one block, but the K = 3 lookahead slots make it 17, two blocks (EAGLE). The
  // n-gram method reserves none (one block), and max_model_len 16 caps the slots at 16 (one).
  Setup s;
  s.spec = eagle(3, {0.0, 0.0, 0.0});
  REQUIRE(run(s, {{10, 2}}).stats.peak_used_blocks == 2);
  s.spec.method = "ngram";
  REQUIRE(run(s, {{10, 2}}).stats.peak_used_blocks == 1);
  s.spec.method = "eagle";
  s.max_model_len = 16;
  REQUIRE(run(s, {{10, 2}}).stats.peak_used_blocks == 1);
}

TEST_CASE("spec decode: preemptions under a small KV cache keep every record consistent",
          "[replica][spec]") {
  // 40 requests in a cache of 60 blocks (16 tokens each): decoders are preempted and recomputed.
  // Every request completes; its segments count its chunks (run() checks the metrics'
  // invariants) and its tokens are all emitted.
  Setup s;
  s.spec = eagle(3, {0.7, 0.5, 0.3});
  s.blocks = 60;
  const Run r = run(s, std::vector<std::pair<int, int>>(40, {50, 120}));
  REQUIRE(r.stats.preemptions > 0);
  for (const auto& rec : r.records) {
    REQUIRE(rec.completed);
    REQUIRE(rec.output_chunks >= 1);
    REQUIRE(rec.output_chunks <= rec.output_tokens);
  }
  REQUIRE(r.stats.used_blocks_now == 0);
}

}  // namespace
}  // namespace servesim::sim
