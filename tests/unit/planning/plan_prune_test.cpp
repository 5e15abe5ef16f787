// Plan pruning (sim/planning/plan_prune.h): the rule's threshold is the tie rule's widest reach,
// the incumbent's band bounds the final cheapest's, and a pruned plan keeps the answer, the ties
// and every verified candidate of the plan without pruning.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/planning/error_band.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_prune.h"
#include "sim/planning/plan_report.h"
#include "sim/planning/plan_wire.h"

namespace servesim::planning {
namespace {

CandidateResult ok_at(const std::string& label, const std::string& basis,
                      const std::string& binding, double cost) {
  CandidateResult c;
  c.candidate.label = label;
  c.status = CandidateStatus::kOk;
  c.basis.label = basis;
  c.capacity.binding = binding;
  c.cost_per_hour = cost;
  c.price_per_gpu_hour = 1;
  c.total_gpus = c.min_gpus = c.max_gpus = c.replicas = static_cast<int>(cost);
  return c;
}

TEST_CASE("a candidate's widest cost band follows the bases its basis can turn into",
          "[planning][plan][prune]") {
  // Table (error_band.cpp): calibrated 3.9/2.4/2.9 %, transferred 12.4/4.4/15.2 %,
  // datasheet-only 27.2/15.2/15.6 %. Calibrated and transferred turn into each other with the
  // load per replica; datasheet-only stays; an unknown label gets the widest of the table.
  CHECK(widest_cost_band("calibrated") == 0.152);
  CHECK(widest_cost_band("transferred") == 0.152);
  CHECK(widest_cost_band("datasheet-only") == 0.272);
  CHECK(widest_cost_band("") == 0.272);
  CHECK(widest_cost_band("measured-elsewhere") == 0.272);
}

TEST_CASE("the prune rule's threshold is best x (1 + the combined band), the tie rule's reach",
          "[planning][plan][prune]") {
  PruneRule rule;
  rule.on = true;
  // Cheapest: transferred, TTFT-bound (12.4%); the other datasheet-only (widest 27.2%):
  // combined sqrt(0.124² + 0.272²) = 29.893%.
  const double band = combined_band(0.124, 0.272);
  REQUIRE(band == Approx(0.29893).epsilon(1e-4));
  const double at = 100 * (1 + band);
  CHECK(rule.excludes(at * (1 + 2e-9), 0.272, 100, 0.124));
  CHECK_FALSE(rule.excludes(at * (1 - 1e-6), 0.272, 100, 0.124));
  // A narrower band on either side excludes at least as much; a dearer best, less.
  CHECK(rule.excludes(at * (1 - 1e-6), 0.152, 100, 0.124));
  CHECK_FALSE(rule.excludes(at * (1 + 2e-9), 0.272, 101, 0.124));
  // Off (a price of 0 somewhere), or no priced best: nothing is excluded.
  rule.on = false;
  CHECK_FALSE(rule.excludes(1e9, 0, 100, 0));
  rule.on = true;
  CHECK_FALSE(rule.excludes(1e9, 0, 0, 0));

  // The tie rule on the same pair: a cost just inside the band ties with the cheapest (the
  // better-founded, so it stays the answer, the tie listed); at the rule's threshold, no tie.
  for (const double factor : {1 - 1e-6, 1 + 2e-9}) {
    PlanResult plan;
    resolve_ties({ok_at("h100-sxm TP4", "transferred", "p99_ttft_ms<=500", 100),
                  ok_at("h200 TP4", "datasheet-only", "p99_ttft_ms<=500", at * factor)},
                 &plan);
    REQUIRE(plan.candidates[0].candidate.label == "h100-sxm TP4");
    CHECK(plan.ties.size() == (factor < 1 ? 1u : 0u));
  }
}

TEST_CASE("the incumbent's band is the widest of the bounds at most its cost",
          "[planning][plan][prune]") {
  Incumbent none;
  none.offer(50);
  CHECK_FALSE(none.best().has_value());  // no bound that low: nothing to compare against
  Incumbent inc({{100, 0.152}, {120, 0.272}, {90, 0.1}});
  CHECK_FALSE(inc.best().has_value());
  inc.offer(110);  // bounds 90 and 100 are at most 110: widest 0.152
  REQUIRE(inc.best().has_value());
  CHECK(inc.best()->cost == 110);
  CHECK(inc.best()->band == 0.152);
  inc.offer(95);  // only 90's: 0.1
  CHECK(inc.best()->cost == 95);
  CHECK(inc.best()->band == 0.1);
  inc.offer(130);  // dearer: the least stays
  CHECK(inc.best()->cost == 95);
  inc.offer(100);  // a cost equal to a bound counts that bound
  CHECK(inc.best()->cost == 95);
  Incumbent edge({{100, 0.152}, {120, 0.272}});
  edge.offer(120);
  CHECK(edge.best()->band == 0.272);
}

// Llama-3.1-8B on H100 and L40S, TP 1 and 2, 30 req/s of short requests: one L40S at TP 1 is the
// cheapest, and the other candidates' stability bounds already cost more than any tie with it.
std::vector<PlanCandidate> small_plan(PlanOptions* o) {
  sim::SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.workload.num_prompts = 200;
  c.workload.random_input_len = 256;
  c.workload.random_output_len = 32;
  o->target_qps = 30;
  o->slos = parse_slos({"p99_ttft_ms<=400", "p99_tpot_ms<=40"});
  o->seeds = 2;
  std::vector<PlanCandidate> cands;
  for (const char* gpu : {"h100-sxm", "l40s"}) {
    for (int tp : {1, 2}) {
      PlanCandidate p;
      p.label = std::string(gpu) + " TP" + std::to_string(tp);
      p.config = c;
      p.config.gpu = gpu;
      p.config.tensor_parallel_size = tp;
      cands.push_back(p);
    }
  }
  return cands;
}

TEST_CASE("a pruned plan keeps the answer, the ties and every verified candidate",
          "[planning][plan][prune]") {
  PlanOptions o;
  const std::vector<PlanCandidate> cands = small_plan(&o);
  o.jobs = 1;
  o.prune = false;
  const PlanResult full = run_plan(cands, o, nullptr, nullptr);
  o.prune = true;
  const PlanResult pruned = run_plan(cands, o, nullptr, nullptr);
  REQUIRE(full.found());
  REQUIRE(pruned.found());

  std::map<std::string, const CandidateResult*> by_label;
  for (const CandidateResult& c : full.candidates) {
    REQUIRE(c.status == CandidateStatus::kOk);
    by_label[c.candidate.label] = &c;
  }
  const CandidateResult& cheapest = full.candidates.front();
  const double best_band = *cost_band(cheapest.basis.label, cheapest.capacity.binding);
  int n_pruned = 0;
  for (const CandidateResult& c : pruned.candidates) {
    const CandidateResult& f = *by_label.at(c.candidate.label);
    INFO(c.candidate.label);
    if (c.status == CandidateStatus::kOk) {
      // Verified the same, number for number.
      CHECK(candidate_result_to_json(c) == candidate_result_to_json(f));
      continue;
    }
    REQUIRE(c.status == CandidateStatus::kPruned);
    ++n_pruned;
    // The bound is a bound: the full search needed at least as many GPUs, and cost at least
    // the cheapest's × (1 + the combined band), so it was in no tie.
    CHECK(c.bound_gpus <= f.total_gpus);
    CHECK(c.bound_cost_per_hour <= f.cost_per_hour);
    CHECK(f.cost_per_hour >=
          cheapest.cost_per_hour * (1 + combined_band(best_band, widest_cost_band(f.basis.label))));
    CHECK(c.simulations == o.seeds);  // its saturation probes
    CHECK_THAT(c.reason, Catch::Contains("not verified (--no-prune verifies it)"));
  }
  CHECK(n_pruned == 3);  // l40s TP2 and both H100 candidates, at the time of writing
  CHECK(plan_answer(pruned, o) == plan_answer(full, o));
  const nlohmann::json a = plan_to_json(pruned, o, nlohmann::json::object());
  const nlohmann::json b = plan_to_json(full, o, nlohmann::json::object());
  for (const char* k : {"answer", "ties", "cheapest_passed_over", "answer_latencies"}) {
    CHECK(a[k] == b[k]);
  }
  CHECK(pruned.simulations_run < full.simulations_run);

  // The same files whatever --jobs is (the order and timing of the early stops differ).
  o.jobs = 2;
  const PlanResult two = run_plan(cands, o, nullptr, nullptr);
  CHECK(nlohmann::json(plan_to_json(two, o, nlohmann::json::object())) == a);
  CHECK(plan_to_csv(two) == plan_to_csv(pruned));

  // A GPU without a price: costs no longer decide the ties, so nothing is pruned.
  o.gpu_price["h100-sxm"] = 0;
  const PlanResult unpriced = run_plan(cands, o, nullptr, nullptr);
  for (const CandidateResult& c : unpriced.candidates) {
    CHECK(c.status == CandidateStatus::kOk);
  }
}

}  // namespace
}  // namespace servesim::planning
