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
//
// Routing skew (--moe-routing-skew s, a what-if with no measured default): expert i (0-based)
// has popularity (i + 1)^-s, and each token picks the top k of log popularity + a standard
// Gumbel draw (a softmax router with per-token noise: the Plackett-Luce model). s = 0 is the
// uniform router above. The hot experts are the lowest ids, which vLLM's expert placement
// without EPLB puts together on rank 0 (contiguous E / g ids per rank): the case EPLB exists to
// fix. Expert i's inclusion probability is exact (one integral over the Gumbel threshold):
//   pi_i = ∫_0^∞ e^-t · P(fewer than k of the other experts beat t / w_i) dt,
// where expert j beats u with probability 1 − exp(−w_j u). Group r then gets a share
// q_r = Σ_{i in r} pi_i / k of each token's k picks; its rows are approximately normal with mean
// T·k·q_r and variance T·k·q_r(1 − q_r)(E − k)/(E − 1) (the uniform formula's at s = 0), and the
// busiest group's expected rows are E[max_r X_r] = ∫_0^cap (1 − Π_r Φ((x − mean_r) / sd_r)) dx
// for independent X_r. Tested against a Monte Carlo of that router
// (tests/unit/models/moe_routing_test.cpp).
#ifndef SERVESIM_MODELS_MOE_ROUTING_H_
#define SERVESIM_MODELS_MOE_ROUTING_H_

#include <vector>

namespace servesim::models {

// Expected rows on the busiest of `groups` equal expert groups when `tokens` tokens route
// top-`top_k` over `experts` experts. groups = 1 gives tokens·top_k. REQUIRES: tokens >= 0,
// 1 <= top_k <= experts, groups >= 1 dividing nothing in particular (experts / groups may be
// fractional for the formula).
double expected_max_group_rows(double tokens, double top_k, double experts, int groups);

// The probability that each of `experts` experts is among a token's top-`top_k` picks under the
// skewed router above (sums to top_k). skew = 0 gives top_k / experts each. REQUIRES:
// 1 <= top_k <= experts, skew >= 0.
std::vector<double> skewed_inclusion_probabilities(int top_k, int experts, double skew);

// Each of `groups` contiguous equal expert groups' expected share of a token's picks
// (Σ over its experts of the inclusion probability, / top_k; sums to 1). REQUIRES: groups
// divides experts.
std::vector<double> skewed_group_shares(int top_k, int experts, int groups, double skew);

// Expected rows on the busiest group for `tokens` tokens when group r receives share
// group_shares[r] of each token's top_k picks (skewed_group_shares). With equal shares this is
// not expected_max_group_rows (independent groups vs. the order statistic); callers use that
// one at skew 0.
double expected_max_group_rows(double tokens, double top_k, double experts,
                               const std::vector<double>& group_shares);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MOE_ROUTING_H_
