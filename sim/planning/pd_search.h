// Aggregated and disaggregated prefill/decode candidates in one plan (`plan --pd-ratios`).
//
// A P/D candidate is one unit of the two pools, P prefill and D decode instances (plan.h scales
// it by whole units, so the P:D ratio is kept); aggregated candidates are the same deployment
// with no pools. The pool flags (--prefill-/--decode-tensor-parallel-size, --prefill-/
// --decode-gpu, --kv-transfer-link, --pd-local-prefill-threshold) describe the P/D candidates
// only, so they are cleared from the aggregated ones, which would otherwise be refused
// (check_pd_flags_need_pools).
#ifndef SERVESIM_SIM_PLANNING_PD_SEARCH_H_
#define SERVESIM_SIM_PLANNING_PD_SEARCH_H_

#include <string>
#include <vector>

#include "sim/cluster/simulation.h"

namespace servesim::planning {

struct PdRatio {
  int prefill = 1;  // P: prefill instances per unit
  int decode = 1;   // D: decode instances per unit
};

// Reads "P:D" items (comma- or space-separated, e.g. "1:1,1:2,2:3"), each part an integer in
// [1, 64], in the order given. Errors (ConfigError naming `flag`, the item and what is
// expected): an empty list, a malformed item, a part out of range, a ratio given twice, or the
// same ratio in other terms (2:2 after 1:1: a unit of 2:2 is two units of 1:1, the same
// candidate with a coarser count).
std::vector<PdRatio> parse_pd_ratios(const std::string& flag,
                                     const std::vector<std::string>& items);

// The aggregated deployment of `config`: its P/D pool counts and pool flags cleared.
sim::SimulationConfig aggregated_of(const sim::SimulationConfig& config);

// One P:D unit of `config`: the pools set to the ratio, the pool flags kept.
sim::SimulationConfig pd_unit_of(const sim::SimulationConfig& config, const PdRatio& ratio);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PD_SEARCH_H_
