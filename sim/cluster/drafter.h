// The drafter of speculative decoding (sim/replica/spec_decode.h) as a cost model, and the
// result file's speculative-decoding summary.
//
// What the drafter is, per method (vLLM's proposers, vllm/v1/spec_decode/):
//   eagle, eagle3  the EAGLE head: one decoder layer of the target's shape (dense, its attention
//                  and MLP widths) and an LM head of the target's vocabulary (EagleProposer; an
//                  EAGLE-3 head's fused 3h → h input projection and its smaller draft vocabulary
//                  are not modelled);
//   mtp            one of the target's multi-token-prediction layers: a target layer (MoE where
//                  the target's are) with its LM head;
//   draft_model    the --speculative-config model from the catalog (or an HF config.json), on
//                  draft_tensor_parallel_size GPUs (1 or the target's TP; default the target's);
//   ngram          none on the GPU: the lookup runs on the host and is not timed.
// Each is costed by the same cost model as the target (roofline, calibration and kernel tables
// of the deployment): an estimate, not a measurement of a drafter. Its weights and KV are not
// taken from the KV cache's memory.
#ifndef SERVESIM_SIM_CLUSTER_DRAFTER_H_
#define SERVESIM_SIM_CLUSTER_DRAFTER_H_

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "models/deployment.h"
#include "sim/replica/replica.h"
#include "sim/replica/spec_decode.h"

namespace servesim::sim {

// The drafter's deployment for `spec` next to `target` (REQUIRES: spec.enabled() and not ngram).
// Throws ConfigError naming --speculative-config for a draft model that cannot be loaded or a
// draft_tensor_parallel_size other than 1 or the target's TP.
models::Deployment drafter_deployment(const SpecDecode& spec, const models::Deployment& target);

// Null when speculative decoding is off or the method has no GPU drafter (ngram).
std::unique_ptr<models::CostModel> make_drafter_cost(const SpecDecode& spec,
                                                     const models::Deployment& target);

// One line: what the drafter is and how it is costed.
std::string drafter_description(const SpecDecode& spec, const std::string& kernel_source);

// The result summary's "speculative_decoding": the configuration, where the acceptance comes
// from, and the run's counters summed over `stats`: mean acceptance length (1 + accepted drafts
// per verify row with drafts, vLLM's definition), tokens per verify row, the acceptance per
// draft position's closed form next to it, and the drafter's share of busy time.
nlohmann::json spec_decode_summary(const SpecDecode& spec, const std::vector<ReplicaStats>& stats,
                                   const std::string& kernel_source);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_DRAFTER_H_
