// `plan` over a disaggregated prefill/decode candidate (sim/planning/plan.cpp, set_replicas): a
// replica is one unit of the pools, so the verified cluster is n × each pool and its GPUs are
// n × (P·TP_p + D·TP_d).
#include <catch2/catch.hpp>

#include "sim/planning/plan.h"
#include "sim/planning/slo.h"

namespace servesim::planning {
namespace {

TEST_CASE("plan scales a P/D candidate by units of its pools", "[planning][plan][pd]") {
  // Unit 1P:2D of Llama-3.1-8B, prefill TP1 and decode TP2: 1·1 + 2·2 = 5 GPUs per unit.
  // Target 40 req/s of 2000/200-token requests with a P99 TTFT SLO: the answer is a whole number
  // of units, its GPUs replicas × 5, and its latencies meet the SLO.
  PlanCandidate cand;
  cand.label = "1P:2D";
  cand.config.model = "llama-3.1-8b";
  cand.config.calibration = "none";
  cand.config.prefill_replicas = 1;
  cand.config.decode_replicas = 2;
  cand.config.decode_tensor_parallel_size = 2;
  cand.config.kv_transfer_link = "infiniband-ndr";
  cand.config.workload.num_prompts = 400;
  cand.config.workload.random_input_len = 2000;
  cand.config.workload.random_output_len = 200;
  PlanOptions o;
  o.target_qps = 40;
  o.slos = {parse_slo("p99_ttft_ms<=2000")};
  o.seeds = 2;
  o.jobs = 1;
  o.max_cluster_prompts = 1200;
  const CandidateResult r = evaluate_candidate(cand, o, 1);
  REQUIRE(r.status == CandidateStatus::kOk);
  CHECK(r.gpus_per_replica == 5);
  CHECK(r.replicas >= 2);  // one unit cannot serve 40 req/s of 2000-token prefills
  CHECK(r.total_gpus == 5 * r.replicas);
  CHECK(r.at_target.at("p99_ttft_ms").mean <= 2000.0);
}

}  // namespace
}  // namespace servesim::planning
