#include "sim/planning/plan_wire.h"

#include <optional>

// The wire structs' JSON: nlohmann's type macros, one line per struct, the keys the member names.
// A std::optional travels as its value or null (nlohmann 3.11.2 has no serializer for it).
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& v) {
    v = j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
  }
};
}  // namespace nlohmann

namespace servesim::calibration {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PredictionBasis, label, reason)
}  // namespace servesim::calibration

namespace servesim::planning {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SloEvaluation, per_seed, mean, pass, worst)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CapacityProbe, rate, eval)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CapacityResult, saturation_rps, feasible, capped_at_saturation,
                                   max_rate, min_failing_rate, binding, per_seed_max_rate, reason,
                                   probes, simulations)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SeedStat, values, mean, min, max, ci95)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(VerificationStep, replicas, pass)
// Every field but `candidate`, which every process has.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CandidateResult, gpu, catalog_model, tensor_parallel_size,
                                   pipeline_parallel_size, status, reason, basis, gpus_per_replica,
                                   capacity, min_stable_replicas, bound_gpus, bound_cost_per_hour,
                                   estimated_replicas, replicas, total_gpus, per_seed_replicas,
                                   min_gpus, max_gpus, verification, cluster_prompts, at_target,
                                   price_per_gpu_hour, cost_per_hour, usd_per_million_output_tokens,
                                   output_tokens_per_s_per_gpu, output_tokens_per_usd, goodput_rps,
                                   simulations)

nlohmann::json candidate_result_to_json(const CandidateResult& r) { return r; }

CandidateResult candidate_result_from_json(const nlohmann::json& j) {
  return j.get<CandidateResult>();
}

}  // namespace servesim::planning
