#include "sim/planning/plan_wire.h"

#include <optional>

namespace servesim::planning {
namespace {

using nlohmann::json;

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> opt_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

json eval_to_json(const SloEvaluation& e) {
  json per_seed = json::array();
  for (const auto& row : e.per_seed) {
    json r = json::array();
    for (const auto& v : row) r.push_back(opt_json(v));
    per_seed.push_back(r);
  }
  json mean = json::array();
  for (const auto& v : e.mean) mean.push_back(opt_json(v));
  return json{{"per_seed", per_seed}, {"mean", mean}, {"pass", e.pass}, {"worst", e.worst}};
}

SloEvaluation eval_from_json(const json& j) {
  SloEvaluation e;
  for (const json& row : j.at("per_seed")) {
    std::vector<std::optional<double>> r;
    for (const json& v : row) r.push_back(opt_from(v));
    e.per_seed.push_back(r);
  }
  for (const json& v : j.at("mean")) e.mean.push_back(opt_from(v));
  e.pass = j.at("pass").get<bool>();
  e.worst = j.at("worst").get<int>();
  return e;
}

}  // namespace

json candidate_result_to_json(const CandidateResult& r) {
  const CapacityResult& c = r.capacity;
  json probes = json::array();
  for (const CapacityProbe& p : c.probes)
    probes.push_back({{"rate", p.rate}, {"eval", eval_to_json(p.eval)}});
  json verification = json::array();
  for (const VerificationStep& v : r.verification) verification.push_back({v.replicas, v.pass});
  json at_target = json::object();
  for (const auto& [k, st] : r.at_target) {
    at_target[k] = {{"values", st.values},
                    {"mean", st.mean},
                    {"min", st.min},
                    {"max", st.max},
                    {"ci95", st.ci95}};
  }
  return json{{"gpu", r.gpu},
              {"catalog_model", r.catalog_model},
              {"tp", r.tensor_parallel_size},
              {"pp", r.pipeline_parallel_size},
              {"status", static_cast<int>(r.status)},
              {"reason", r.reason},
              {"gpus_per_replica", r.gpus_per_replica},
              {"capacity",
               {{"saturation_rps", c.saturation_rps},
                {"feasible", c.feasible},
                {"capped", c.capped_at_saturation},
                {"max_rate", c.max_rate},
                {"min_failing_rate", c.min_failing_rate},
                {"binding", c.binding},
                {"per_seed_max_rate", c.per_seed_max_rate},
                {"reason", c.reason},
                {"probes", probes},
                {"simulations", c.simulations}}},
              {"min_stable_replicas", r.min_stable_replicas},
              {"estimated_replicas", r.estimated_replicas},
              {"replicas", r.replicas},
              {"total_gpus", r.total_gpus},
              {"per_seed_replicas", r.per_seed_replicas},
              {"min_gpus", r.min_gpus},
              {"max_gpus", r.max_gpus},
              {"verification", verification},
              {"cluster_prompts", r.cluster_prompts},
              {"at_target", at_target},
              {"price_per_gpu_hour", r.price_per_gpu_hour},
              {"cost_per_hour", r.cost_per_hour},
              {"usd_per_million_output_tokens", r.usd_per_million_output_tokens},
              {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
              {"output_tokens_per_usd", r.output_tokens_per_usd},
              {"goodput_rps", r.goodput_rps},
              {"basis", {r.basis.label, r.basis.reason}},
              {"simulations", r.simulations}};
}

CandidateResult candidate_result_from_json(const json& j) {
  CandidateResult r;
  r.gpu = j.at("gpu").get<std::string>();
  r.catalog_model = j.at("catalog_model");
  r.tensor_parallel_size = j.at("tp").get<int>();
  r.pipeline_parallel_size = j.at("pp").get<int>();
  r.status = static_cast<CandidateStatus>(j.at("status").get<int>());
  r.reason = j.at("reason").get<std::string>();
  r.gpus_per_replica = j.at("gpus_per_replica").get<int>();
  const json& c = j.at("capacity");
  r.capacity.saturation_rps = c.at("saturation_rps").get<double>();
  r.capacity.feasible = c.at("feasible").get<bool>();
  r.capacity.capped_at_saturation = c.at("capped").get<bool>();
  r.capacity.max_rate = c.at("max_rate").get<double>();
  r.capacity.min_failing_rate = c.at("min_failing_rate").get<double>();
  r.capacity.binding = c.at("binding").get<std::string>();
  r.capacity.per_seed_max_rate = c.at("per_seed_max_rate").get<std::vector<double>>();
  r.capacity.reason = c.at("reason").get<std::string>();
  for (const json& p : c.at("probes")) {
    r.capacity.probes.push_back({p.at("rate").get<double>(), eval_from_json(p.at("eval"))});
  }
  r.capacity.simulations = c.at("simulations").get<int64_t>();
  r.min_stable_replicas = j.at("min_stable_replicas").get<int>();
  r.estimated_replicas = j.at("estimated_replicas").get<int>();
  r.replicas = j.at("replicas").get<int>();
  r.total_gpus = j.at("total_gpus").get<int>();
  r.per_seed_replicas = j.at("per_seed_replicas").get<std::vector<int>>();
  r.min_gpus = j.at("min_gpus").get<int>();
  r.max_gpus = j.at("max_gpus").get<int>();
  for (const json& v : j.at("verification")) {
    r.verification.push_back({v.at(0).get<int>(), v.at(1).get<bool>()});
  }
  r.cluster_prompts = j.at("cluster_prompts").get<int64_t>();
  for (const auto& [k, st] : j.at("at_target").items()) {
    SeedStat s;
    s.values = st.at("values").get<std::vector<double>>();
    s.mean = st.at("mean").get<double>();
    s.min = st.at("min").get<double>();
    s.max = st.at("max").get<double>();
    s.ci95 = st.at("ci95").get<double>();
    r.at_target[k] = s;
  }
  r.price_per_gpu_hour = j.at("price_per_gpu_hour").get<double>();
  r.cost_per_hour = j.at("cost_per_hour").get<double>();
  r.usd_per_million_output_tokens = j.at("usd_per_million_output_tokens").get<double>();
  r.output_tokens_per_s_per_gpu = j.at("output_tokens_per_s_per_gpu").get<double>();
  r.output_tokens_per_usd = j.at("output_tokens_per_usd").get<double>();
  r.goodput_rps = j.at("goodput_rps").get<double>();
  r.basis.label = j.at("basis").at(0).get<std::string>();
  r.basis.reason = j.at("basis").at(1).get<std::string>();
  r.simulations = j.at("simulations").get<int64_t>();
  return r;
}

}  // namespace servesim::planning
