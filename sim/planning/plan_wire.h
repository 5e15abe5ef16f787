// A candidate's result as it travels between processes (executor.h: MPI ranks, shards): to and
// from JSON, sent as CBOR.
//
// Contract: candidate_result_from_json(candidate_result_to_json(r)) equals r in every field but
// `candidate`, which stays behind (every process has it); doubles are exact (CBOR).
#ifndef SERVESIM_SIM_PLANNING_PLAN_WIRE_H_
#define SERVESIM_SIM_PLANNING_PLAN_WIRE_H_

#include <nlohmann/json.hpp>

#include "sim/planning/plan.h"

namespace servesim::planning {

nlohmann::json candidate_result_to_json(const CandidateResult& r);
CandidateResult candidate_result_from_json(const nlohmann::json& j);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_WIRE_H_
