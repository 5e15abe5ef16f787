// Plan pruning: candidates that can neither be the answer nor tie with it are not verified.
//
// Contract:
//  - A candidate's bound is its stability bound (plan.h step 3): n_s = ceil(L / S) replicas, so
//    at least n_s · GPUs-per-replica GPUs, costing price × that many GPUs per hour. The verified
//    count is never below n_s (smallest_passing starts there), so whatever the candidate's
//    evaluation would give, its cost is at least the bound's. Its band is widest_cost_band() of
//    its basis (error_band.h): no cost band it could end with is wider.
//  - PruneRule::excludes(bound, band, best, best_band) holds when the rule is on (every candidate
//    of the plan has a price > 0, so the ranking and the tie rule compare costs: resolve_ties)
//    and the bound costs at least best × (1 + combined_band(best_band, band)), `best` the
//    cheapest verified cost and `best_band` at least that candidate's cost band: the candidate
//    then ranks after the cheapest and lies further from it than their combined band, so it is
//    neither the answer nor tied with the cheapest. A relative margin of 1e-9 keeps the tie
//    rule's rounded division on the safe side. Monotone: a lower best or a narrower best_band
//    excludes at least as much. With a price of 0 anywhere the rule is off (the tie rule then
//    compares GPU counts, on which a lower bound says nothing against a larger cheapest).
//  - Incumbent: the least verified cost this process has seen so far (offered by every candidate
//    that ends ok; thread-safe), with a band no narrower than the final cheapest's: the widest
//    band of the candidates whose bound is at most that cost (the final cheapest costs at most
//    the incumbent, and at least its own bound, so it is one of them). A candidate excluded
//    against the incumbent is therefore excluded against the final cheapest too. That is what
//    lets run_plan stop a candidate early, whatever the order or timing, and still write files
//    that depend on neither (it applies the rule once more at the end, with the final cheapest's
//    own cost band, to every candidate).
#ifndef SERVESIM_SIM_PLANNING_PLAN_PRUNE_H_
#define SERVESIM_SIM_PLANNING_PLAN_PRUNE_H_

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "sim/planning/plan.h"

namespace servesim::planning {

struct PruneRule {
  bool on = false;  // every candidate of the plan has a price > 0 (and pruning is asked for)

  bool excludes(double bound_cost, double band, double best_cost, double best_band) const;
};

struct CostAndBand {
  double cost = 0;
  double band = 0;
};

class Incumbent {
 public:
  Incumbent() = default;
  // Every candidate's bound cost and band (those not measured left out).
  explicit Incumbent(std::vector<CostAndBand> bounds);
  void offer(double verified_cost);
  // The least cost offered so far, with the band described above (nullopt before any offer).
  std::optional<CostAndBand> best() const;

 private:
  std::vector<CostAndBand> bounds_;  // by cost, each band the widest up to it
  mutable std::mutex mutex_;
  std::optional<double> best_;
};

// The final pruning, against the cheapest verified candidate of `results` and its own cost band
// (the widest of those at that cost):
// every candidate that ran and the rule excludes (its widest band, error_band.h), and every one
// stopped early (status kPruned), becomes its pruned record: its bound and the saturation probes
// it rests on (`simulations` = seeds), nothing that depends on how far its evaluation got, with
// the reason. Off when a candidate that started has no price; nothing when none is ok.
void prune_results(const PlanOptions& options, std::vector<CandidateResult>* results);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_PRUNE_H_
