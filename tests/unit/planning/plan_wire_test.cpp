// plan_wire.h's contract: a candidate's result read back from its JSON, through CBOR as the
// executors send it, equals the result in every field but `candidate`.
#include "sim/planning/plan_wire.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

namespace servesim::planning {
namespace {

// Every field set to a value no default has; doubles that text would round.
CandidateResult sample() {
  CandidateResult r;
  r.gpu = "h100-sxm";
  r.catalog_model = {{"name", "llama-3.1-8b"}, {"hf_id", "meta-llama/Llama-3.1-8B"}};
  r.tensor_parallel_size = 2;
  r.pipeline_parallel_size = 3;
  r.status = CandidateStatus::kUnverified;
  r.reason = "verification stopped at 9 replicas";
  r.basis = {"transferred", "profile h100-sxm: tp 2 outside its domain"};
  r.gpus_per_replica = 6;
  CapacityResult& c = r.capacity;
  c.saturation_rps = 1.0 / 3.0;
  c.feasible = true;
  c.capped_at_saturation = true;
  c.max_rate = 0.1 + 0.2;
  c.min_failing_rate = std::nextafter(0.5, 1.0);
  c.binding = "p99_ttft_ms <= 500";
  c.per_seed_max_rate = {0.25, 0.0, 1e-300};
  c.reason = "none";
  SloEvaluation e;
  e.per_seed = {{1.5, std::nullopt}, {std::nullopt, 2.5}};
  e.mean = {std::nullopt, 7.0 / 3.0};
  e.pass = true;
  e.worst = 1;
  c.probes = {{0.125, e}, {0.75, SloEvaluation{}}};
  c.simulations = 41;
  r.min_stable_replicas = 4;
  r.bound_gpus = 24;
  r.bound_cost_per_hour = 24 * 2.99;
  r.estimated_replicas = 5;
  r.replicas = 7;
  r.total_gpus = 42;
  r.per_seed_replicas = {7, 6, 7};
  r.min_gpus = 36;
  r.max_gpus = 42;
  r.verification = {{5, false}, {7, true}};
  r.cluster_prompts = 123456789012;
  r.at_target["p99_ttft_ms"] = SeedStat{{400.1, 410.2}, 405.15, 400.1, 410.2, 1.0 / 7.0};
  r.at_target["request_throughput"] = SeedStat{{}, 0, 0, 0, 0};
  r.price_per_gpu_hour = 2.99;
  r.cost_per_hour = 125.58;
  r.usd_per_million_output_tokens = 0.1 / 3.0;
  r.output_tokens_per_s_per_gpu = 1234.5678901234567;
  r.output_tokens_per_usd = std::numeric_limits<double>::max();
  r.goodput_rps = std::numeric_limits<double>::denorm_min();
  r.simulations = 99;
  return r;
}

bool same(const SloEvaluation& a, const SloEvaluation& b) {
  return a.per_seed == b.per_seed && a.mean == b.mean && a.pass == b.pass && a.worst == b.worst;
}

TEST_CASE("a candidate result survives the wire, field by field", "[plan_wire]") {
  const CandidateResult r = sample();
  const nlohmann::json sent = candidate_result_to_json(r);
  const CandidateResult b =
      candidate_result_from_json(nlohmann::json::from_cbor(nlohmann::json::to_cbor(sent)));
  CHECK(b.gpu == r.gpu);
  CHECK(b.catalog_model == r.catalog_model);
  CHECK(b.tensor_parallel_size == 2);
  CHECK(b.pipeline_parallel_size == 3);
  CHECK(b.status == CandidateStatus::kUnverified);
  CHECK(b.reason == r.reason);
  CHECK(b.basis.label == r.basis.label);
  CHECK(b.basis.reason == r.basis.reason);
  CHECK(b.gpus_per_replica == 6);
  const CapacityResult& c = b.capacity;
  CHECK(c.saturation_rps == r.capacity.saturation_rps);  // exact: CBOR carries the double
  CHECK(c.feasible);
  CHECK(c.capped_at_saturation);
  CHECK(c.max_rate == r.capacity.max_rate);
  CHECK(c.min_failing_rate == r.capacity.min_failing_rate);
  CHECK(c.binding == r.capacity.binding);
  CHECK(c.per_seed_max_rate == r.capacity.per_seed_max_rate);
  CHECK(c.reason == "none");
  REQUIRE(c.probes.size() == 2);
  CHECK(c.probes[0].rate == 0.125);
  CHECK(same(c.probes[0].eval, r.capacity.probes[0].eval));
  CHECK(same(c.probes[1].eval, SloEvaluation{}));
  CHECK(c.simulations == 41);
  CHECK(b.min_stable_replicas == 4);
  CHECK(b.estimated_replicas == 5);
  CHECK(b.replicas == 7);
  CHECK(b.total_gpus == 42);
  CHECK(b.per_seed_replicas == r.per_seed_replicas);
  CHECK(b.min_gpus == 36);
  CHECK(b.max_gpus == 42);
  REQUIRE(b.verification.size() == 2);
  CHECK((b.verification[0].replicas == 5 && !b.verification[0].pass));
  CHECK((b.verification[1].replicas == 7 && b.verification[1].pass));
  CHECK(b.cluster_prompts == 123456789012);
  REQUIRE(b.at_target.size() == 2);
  const SeedStat& s = b.at_target.at("p99_ttft_ms");
  CHECK(s.values == r.at_target.at("p99_ttft_ms").values);
  CHECK((s.mean == 405.15 && s.min == 400.1 && s.max == 410.2 && s.ci95 == 1.0 / 7.0));
  CHECK(b.at_target.at("request_throughput").values.empty());
  CHECK(b.price_per_gpu_hour == 2.99);
  CHECK(b.cost_per_hour == 125.58);
  CHECK(b.usd_per_million_output_tokens == r.usd_per_million_output_tokens);
  CHECK(b.output_tokens_per_s_per_gpu == r.output_tokens_per_s_per_gpu);
  CHECK(b.output_tokens_per_usd == std::numeric_limits<double>::max());
  CHECK(b.goodput_rps == std::numeric_limits<double>::denorm_min());
  CHECK(b.simulations == 99);
  CHECK(b.bound_gpus == 24);
  CHECK(b.bound_cost_per_hour == 24 * 2.99);
  // Nothing else is sent: the keys are the member names, `candidate` stays behind.
  CHECK(sent.size() == 28);
  CHECK_FALSE(sent.contains("candidate"));
}

TEST_CASE("a wire result that lacks a field is refused, not defaulted", "[plan_wire]") {
  nlohmann::json sent = candidate_result_to_json(sample());
  sent.erase("total_gpus");
  CHECK_THROWS(candidate_result_from_json(sent));
  sent = candidate_result_to_json(sample());
  sent["capacity"].erase("probes");
  CHECK_THROWS(candidate_result_from_json(sent));
}

}  // namespace
}  // namespace servesim::planning
