// The expert load an MoE layer's router gives the busiest GPU under expert parallelism
// (docs/cost_model.md §3.2.1).
//
// T tokens each pick k distinct experts of E uniformly at random (the routing servesim assumes
// everywhere: models::expected_experts_touched); the E experts are split into g equal groups, one
// per GPU (vLLM --enable-expert-parallel: E / EP experts per rank). The rows a group receives are
// a sum of T independent hypergeometric counts (k draws without replacement from E, E/g of them
// in the group): mean T·k/g, variance T·k·(1/g)(1 − 1/g)(E − k)/(E − 1). The GPU with the most rows
// sets the MoE layer's time (every rank waits for it at the combine). Its expected load is
// approximated by the normal order statistic with Blom's plotting position:
//   E[max] ≈ mean + sd · Φ⁻¹((g − 0.375) / (g + 0.25)),
// capped at T·min(k, E/g) (every token's picks in one group). Tested against a Monte Carlo of the
// router (tests/unit/models/moe_routing_test.cpp).
#ifndef SERVESIM_MODELS_MOE_ROUTING_H_
#define SERVESIM_MODELS_MOE_ROUTING_H_

namespace servesim::models {

// Expected rows on the busiest of `groups` equal expert groups when `tokens` tokens route
// top-`top_k` over `experts` experts. groups = 1 gives tokens·top_k. REQUIRES: tokens >= 0,
// 1 <= top_k <= experts, groups >= 1 dividing nothing in particular (experts / groups may be
// fractional for the formula).
double expected_max_group_rows(double tokens, double top_k, double experts, int groups);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MOE_ROUTING_H_
