// The plan's outputs, from a ranked PlanResult (plan.h): the answer line, the ranked table, the
// plan file (JSON) and its CSV form.
//
// Contract: pure functions of the result and options; no wall-clock values, so the files are
// identical for any job, rank or shard count.
#ifndef SERVESIM_SIM_PLANNING_PLAN_REPORT_H_
#define SERVESIM_SIM_PLANNING_PLAN_REPORT_H_

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/planning/plan.h"

namespace servesim::planning {

// "Answer: 12 × h100-sxm (6 replicas × TP2) meets p99_ttft_ms<=500, p99_tpot_ms<=50 at 100 req/s;
// $35.40/h; 10–12 GPUs over 3 seeds", then its error band ("band ±12% TTFT, ±4.4% TPOT, …
// (transferred, docs/validation.md §6 …)"), the headroom, and any tie ("ties within ±30% with
// h200 TP4 (datasheet-only): the better-founded is preferred"); or "Answer: no candidate meets …
// (reason)".
std::string plan_answer(const PlanResult& result, const PlanOptions& options);

// The plan file: {"servesim_plan": {target_qps, headroom, verify_qps, slos, seeds, ...},
// "config": echo, "candidates": [{rank, label, catalog_model, gpu, ..., total_gpus, ...}],
// "answer": text}.
// Deterministic: no wall-clock values.
nlohmann::ordered_json plan_to_json(const PlanResult& result, const PlanOptions& options,
                                    const nlohmann::json& config_echo);

// One row per candidate, in rank order.
std::string plan_to_csv(const PlanResult& result);

// "At the answer, 100 req/s: P99 TTFT 125 ms, P99 TPOT 46.1 ms, P99 E2E 11834 ms (mean over
// seeds)": every P99 latency whether or not an SLO names it; "" without an answer.
std::string answer_latencies(const PlanResult& result, const PlanOptions& options);

// The ranked table, then the answer line and the latencies at the answer.
void print_plan_table(std::ostream& out, const PlanResult& result, const PlanOptions& options);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_REPORT_H_
