// Speculative decoding end to end (sim/cluster/drafter.h, docs/deployment-modes.md): the drafter
// each method puts on the GPU, and a run's reported acceptance against the closed form.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "sim/base/error.h"
#include "sim/cluster/drafter.h"
#include "sim/cluster/simulation.h"
#include "sim/replica/speculative_config.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {
namespace {

SimulationConfig spec_config(const std::string& model, int tp, const std::string& spec) {
  SimulationConfig c;
  c.model = model;
  c.gpu = "h100-sxm";
  c.tensor_parallel_size = tp;
  c.engine.max_model_len = 4096;
  c.engine.spec = parse_speculative_config(nlohmann::json(spec), "--speculative-config");
  c.workload.num_prompts = 200;
  c.workload.request_rate = 2.0;
  c.workload.random_input_len = 512;
  c.workload.random_output_len = 256;
  return c;
}

TEST_CASE("spec decode drafter: EAGLE head and MTP layer are one layer of the target",
          "[spec][drafter]") {
  const PreparedDeployment p = prepare_deployment(spec_config(
      "llama-3.1-70b", 4,
      R"({"method": "eagle3", "model": "h", "num_speculative_tokens": 3, "acceptance_length": 2})"));
  const models::Deployment head = drafter_deployment(p.engine.spec, p.deployment);
  CHECK(head.model.num_layers == 1);
  CHECK(head.model.hidden_size == p.deployment.model.hidden_size);
  CHECK(head.tensor_parallel_size == 4);
  REQUIRE(p.drafter != nullptr);
  // The speculative run is synchronous (async scheduling is not modelled with it), and its
  // calibration and prediction basis are the sync host line's, though vLLM 0.19's default is async.
  CHECK(p.engine.async_scheduling == 0);
  const calibration::PredictionQuery q = prediction_query(
      spec_config("llama-3.1-70b", 4,
                  R"({"method": "eagle3", "model": "h", "num_speculative_tokens": 3,
                      "acceptance_length": 2})"),
      p);
  CHECK(q.host_line == vllm_minor_version(p.engine.vllm_version) + " sync");
  SimulationConfig plain =
      spec_config("llama-3.1-70b", 4,
                  R"({"method": "ngram", "num_speculative_tokens": 3, "acceptance_length": 2})");
  plain.engine.spec = SpecDecode{};
  CHECK(prediction_query(plain, prepare_deployment(plain)).host_line ==
        vllm_minor_version(p.engine.vllm_version) + " async");

  const PreparedDeployment ng = prepare_deployment(
      spec_config("llama-3.1-8b", 1,
                  R"({"method": "ngram", "num_speculative_tokens": 3, "acceptance_length": 2})"));
  CHECK(ng.drafter == nullptr);  // the lookup runs on the host
}

TEST_CASE("spec decode drafter: a draft model on TP 1 or the target's TP only", "[spec][drafter]") {
  const PreparedDeployment p =
      prepare_deployment(spec_config("llama-3.1-70b", 4,
                                     R"({"model": "llama-3.1-8b", "num_speculative_tokens": 4,
                      "draft_tensor_parallel_size": 1, "acceptance_length": 2.5})"));
  CHECK(p.engine.spec.method == "draft_model");
  const models::Deployment d = drafter_deployment(p.engine.spec, p.deployment);
  CHECK(d.model.num_layers == 32);
  CHECK(d.tensor_parallel_size == 1);
  CHECK_THROWS_WITH(
      prepare_deployment(spec_config("llama-3.1-70b", 4,
                                     R"({"model": "llama-3.1-8b", "num_speculative_tokens": 4,
                                         "draft_tensor_parallel_size": 2,
                                         "acceptance_length": 2.5})")),
      Catch::Contains("draft_tensor_parallel_size 2 is invalid; expected 1 or the target's"));
}

TEST_CASE("spec decode run: reported acceptance length matches the closed form",
          "[spec][drafter]") {
  // 200 requests × 255 decode tokens at τ = 2.5, K = 3 (constant rate a): about 20,000 verify
  // rows. The accepted drafts per row have standard deviation below K / 2, so the mean
  // acceptance length lies within 5·1.5/sqrt(20000) ≈ 0.053 of 2.5 except with probability
  // < 1e-6 (the last chunk of each request is capped in tokens, not in accepted drafts).
  const SimulationConfig c = spec_config(
      "llama-3.1-8b", 1,
      R"({"method": "eagle", "model": "h", "num_speculative_tokens": 3, "acceptance_length": 2.5})");
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  CHECK(r.metrics.completed == 200);
  const nlohmann::json s = spec_decode_summary(p.engine.spec, r.replica_stats, p.kernel_source);
  CHECK(s["expected_acceptance_length"].get<double>() == Approx(2.5).margin(1e-12));
  CHECK(std::abs(s["mean_acceptance_length"].get<double>() - 2.5) < 0.053);
  CHECK(s["drafter_fraction_of_busy"].get<double>() > 0.0);
  // TPOT is per token, ITL per chunk: with ~2.5 tokens per chunk the mean ITL is well above TPOT.
  CHECK(r.metrics.summaries.at("itl").mean_ms > 1.5 * r.metrics.summaries.at("tpot").mean_ms);
}

}  // namespace
}  // namespace servesim::sim
