#include "sim/cluster/drafter.h"

#include <algorithm>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/replica/replica_stats_merge.h"
#include "sim/replica/speculative_config.h"

namespace servesim::sim {

models::Deployment drafter_deployment(const SpecDecode& spec, const models::Deployment& target) {
  models::Deployment d = target;
  const int tp = spec.draft_tensor_parallel_size > 0 ? spec.draft_tensor_parallel_size
                                                     : target.tensor_parallel_size;
  if (tp != 1 && tp != target.tensor_parallel_size) {
    throw ConfigError("--speculative-config: draft_tensor_parallel_size " + std::to_string(tp) +
                      " is invalid; expected 1 or the target's tensor parallel size (" +
                      std::to_string(target.tensor_parallel_size) + "), as vLLM requires");
  }
  d.tensor_parallel_size = tp;
  d.pipeline_parallel_size = 1;
  d.data_parallel_size = 1;
  if (spec.method == "draft_model") {
    try {
      d.model = models::load_model(models::resolve_model(spec.model));
    } catch (const ConfigError& e) {  // the loader names the file; say which flag and key
      throw ConfigError(std::string("--speculative-config: key 'model' (the draft model): ") +
                        e.what());
    }
    d.model.dtype_bytes = target.model.dtype_bytes;
    if (d.model.num_heads % tp != 0) {
      throw ConfigError("--speculative-config: draft_tensor_parallel_size " + std::to_string(tp) +
                        " does not divide the " + std::to_string(d.model.num_heads) +
                        " attention heads of the draft model " + d.model.name);
    }
    if (d.model.is_moe() && d.enable_expert_parallel &&
        d.model.num_experts % d.moe_group_size() != 0) {
      d.enable_expert_parallel = false;
    }
    return d;
  }
  // eagle, eagle3, mtp: one layer of the target's shape.
  models::ModelSpec& m = d.model;
  m.name = spec.method == "mtp" ? target.model.name + " (MTP layer)" : spec.model;
  if (spec.method != "mtp" && m.is_moe()) {
    m.num_experts = 0;  // an EAGLE head is a dense layer
    m.experts_per_token = 0;
    m.moe_intermediate_size = 0;
    m.shared_expert_intermediate_size = 0;
    d.enable_expert_parallel = false;
  }
  m.num_layers = 1;
  m.num_dense_layers = 0;
  m.num_sliding_layers = 0;
  m.sliding_window = 0;
  m.num_mtp_layers = 0;
  return d;
}

std::unique_ptr<models::CostModel> make_drafter_cost(const SpecDecode& spec,
                                                     const models::Deployment& target) {
  if (!spec.enabled() || spec.method == "ngram") return nullptr;
  return models::make_cost_model(drafter_deployment(spec, target));
}

std::string drafter_description(const SpecDecode& spec, const std::string& kernel_source) {
  if (spec.method == "ngram") {
    return "n-gram lookup on the host (prompt_lookup_min " +
           std::to_string(spec.prompt_lookup_min) + ", max " +
           std::to_string(spec.prompt_lookup_max) + "): not timed";
  }
  const std::string what = spec.method == "mtp" ? "one MTP layer of the target"
                           : spec.method == "draft_model"
                               ? "the draft model " + spec.model
                               : "an EAGLE head (one decoder layer of the target's shape)";
  return what +
         ": one forward over the step's tokens, then K - 1 one-token forwards per "
         "sampling request, costed by the target's cost model (" +
         kernel_source + "); an estimate, not measured";
}

nlohmann::json spec_decode_summary(const SpecDecode& spec, const std::vector<ReplicaStats>& stats,
                                   const std::string& kernel_source) {
  const ReplicaStats t = total_replica_stats(stats);
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  nlohmann::json j;
  j["config"] = speculative_config_json(spec);
  j["num_speculative_tokens"] = spec.num_speculative_tokens;
  j["acceptance_rates"] = spec.acceptance_rates;
  j["acceptance_source"] =
      spec.acceptance_source + " (given in --speculative-config; not measured by servesim)";
  j["expected_acceptance_length"] =
      1.0 + mean_accepted(spec.acceptance_rates, spec.num_speculative_tokens);
  j["drafter"] = drafter_description(spec, kernel_source);
  j["verify_rows"] = t.spec_verify_rows;
  j["draft_tokens"] = t.spec_draft_tokens;
  j["accepted_tokens"] = t.spec_accepted_tokens;
  // vLLM's mean acceptance length: 1 + accepted / drafts (per request and step with drafts).
  j["mean_acceptance_length"] =
      1.0 + ratio(double(t.spec_accepted_tokens), double(t.spec_verify_rows));
  j["draft_acceptance_rate"] = ratio(double(t.spec_accepted_tokens), double(t.spec_draft_tokens));
  // Tokens a decoding request streams per step (one chunk): accepted + 1, capped by its output.
  j["tokens_per_verify_row"] = ratio(double(t.spec_emitted_tokens), double(t.spec_verify_rows));
  j["drafter_fraction_of_busy"] = ratio(t.spec_drafter_s, double(t.busy_ns) * 1e-9);
  return j;
}

}  // namespace servesim::sim
