// Capacity search: the highest request rate one replica sustains while meeting every SLO.
//
// Contract:
//  - bisect_max_passing(lo, hi, rel_tol, passes) finds the boundary of a predicate that is true at
//    low values and false at high ones (monotone). It probes hi, then geometric midpoints √(a·b)
//    of the bracket [a passing, b failing], starting from [lo, hi], until b ≤ a·(1 + rel_tol);
//    lo itself only when the first midpoint √(lo·hi) fails (when it passes, lo would too: the
//    probe at lo, a near-empty server and the slowest run to simulate, is skipped). Geometric,
//    because the bracket spans two decades (1% of saturation up to saturation) and the tolerance
//    is relative: ⌈log2(ln(hi/lo) / ln(1 + rel_tol))⌉ + 1 probes when the boundary is above the
//    first midpoint, one more below it; 10 and 11 for 100× at 1%. The brackets, and so the
//    results, are those of probing lo first. If lo fails: low_fails, max_pass = 0,
//    min_fail = lo. If hi passes: high_passes, max_pass = hi (one probe). Otherwise
//    max_pass/min_fail are the final bracket. Deterministic.
//  - evaluate_slos() judges runs of several seeds: an SLO holds when the MEAN over seeds of its
//    metric holds (not the worst seed: the mean estimates the metric of the deployment, while the
//    worst of k seeds drifts towards the tail as k grows, so the answer would depend on --seeds;
//    the seed-to-seed spread is reported separately as a confidence interval). A metric missing
//    in any seed (no completed request, TPOT of one-token outputs) fails the SLO.
//  - find_replica_capacity() for one replica (num_replicas forced to 1) of a prepared deployment:
//      1. saturation throughput S = mean over seeds of request_throughput with every request sent
//         at t = 0 (--request-rate inf): the most the replica can serve;
//      2. bisection on the Poisson rate (the config's arrival process and burstiness) in
//         [S·low_load_fraction, S] with `seeds` runs per probe, seeds config.seed + 0..seeds−1,
//         each of config.workload.num_prompts requests; the same seeds at every rate (common
//         random numbers: the curve is smooth in the rate, so the bisection is stable);
//      3. per seed, the same search on that seed alone, starting from the bracket the joint
//         probes already give it (its independent capacity estimate, for confidence intervals);
//         a seed that failed at every joint probe is probed alone at the bottom of the bracket
//         when the joint search did not probe it.
//    A rate above S is never reported: it is not sustainable however long the run, so when S
//    itself passes the result is capped (binding "saturation"). When the lowest rate fails, the
//    deployment cannot meet the SLOs at any load: feasible = false with the reason.
//  - Every simulation is a pure function of (config, rate, seed), so results do not depend on
//    `jobs` or `share` (threads used for the seeds of one probe, and for the per-seed searches,
//    which run side by side: each counts its own simulations).
#ifndef SERVESIM_SIM_PLANNING_CAPACITY_H_
#define SERVESIM_SIM_PLANNING_CAPACITY_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/parallel.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/slo.h"

namespace servesim::planning {

struct Bisection {
  double max_pass = 0;  // highest value that passed (0 when low_fails)
  double min_fail = 0;  // lowest value that failed (hi when high_passes)
  bool low_fails = false;
  bool high_passes = false;
  int probes = 0;
};

// REQUIRES: 0 < lo < hi, rel_tol > 0.
Bisection bisect_max_passing(double lo, double hi, double rel_tol,
                             const std::function<bool(double)>& passes);

// Bisection inside a bracket already known: `pass_at` passed and `fail_at` failed.
// REQUIRES: 0 < pass_at; returns at once when fail_at <= pass_at·(1 + rel_tol).
Bisection bisect_between(double pass_at, double fail_at, double rel_tol,
                         const std::function<bool(double)>& passes);

struct SloEvaluation {
  std::vector<std::vector<std::optional<double>>> per_seed;  // [seed][slo]
  std::vector<std::optional<double>> mean;                   // [slo], over seeds
  bool pass = false;                                         // every SLO holds on the mean
  int worst = -1;  // SLO with the largest violation on the mean (−1 when all hold)

  // Every SLO holds on seed `s` alone.
  bool seed_pass(size_t s, const std::vector<Slo>& slos) const;
};

SloEvaluation evaluate_slos(const std::vector<metrics::BenchmarkMetrics>& per_seed,
                            const std::vector<Slo>& slos);

// Calls fn(i) for i in [0, n): on `share` when given (this thread and any helping thread),
// else on `jobs` threads.
void for_each_seed(int64_t n, int jobs, WorkShare* share, const std::function<void(int64_t)>& fn);

// Runs `config` once per seed (config.workload.seed + s for s in `seeds`), through
// for_each_seed(seeds.size(), jobs, share, ...).
std::vector<metrics::BenchmarkMetrics> run_seeds(const sim::SimulationConfig& config,
                                                 const sim::PreparedDeployment& prepared,
                                                 const std::vector<int>& seeds, int jobs,
                                                 WorkShare* share = nullptr);

struct CapacityOptions {
  std::vector<Slo> slos;
  int seeds = 3;
  double rel_tol = 0.01;            // bisection stops at 1% of the rate
  double low_load_fraction = 0.01;  // bottom of the bracket, as a fraction of saturation
  int jobs = 1;                     // threads for the seeds of one probe
  WorkShare* share = nullptr;       // instead of `jobs`: threads shared with other candidates
  // Step 1's result when the caller already measured it (saturation_throughput() of the same
  // config and seeds): step 1 is not run again and its simulations are not counted here.
  std::optional<double> saturation_rps;
  // Asked with the saturation throughput before every later simulation; true stops the search
  // at once (result.abandoned; the other fields then mean nothing). Plan's pruning.
  std::function<bool(double saturation_rps)> abandon;
};

struct CapacityProbe {
  double rate = 0;
  SloEvaluation eval;
};

struct CapacityResult {
  double saturation_rps = 0;
  bool feasible = false;
  bool capped_at_saturation = false;
  double max_rate = 0;          // per-replica max rate meeting every SLO (0 when infeasible)
  double min_failing_rate = 0;  // lowest rate that failed (the top of the final bracket)
  std::string binding;          // SLO text violated most at min_failing_rate, or "saturation"
  std::vector<double> per_seed_max_rate;  // each seed's own estimate (0 = fails at low load)
  std::string reason;                     // why it is infeasible (empty when feasible)
  std::vector<CapacityProbe> probes;      // joint probes in the order they ran
  int64_t simulations = 0;
  bool abandoned = false;  // options.abandon stopped the search
};

// Step 1 alone: the mean over seeds 0 … seeds−1 of request_throughput with every request sent at
// t = 0 (for one replica: num_replicas forced to 1).
double saturation_throughput(const sim::SimulationConfig& config,
                             const sim::PreparedDeployment& prepared, int seeds, int jobs,
                             WorkShare* share = nullptr);

// Throws ConfigError for load errors (same for every rate, e.g. bad --warmup-requests).
CapacityResult find_replica_capacity(const sim::SimulationConfig& config,
                                     const sim::PreparedDeployment& prepared,
                                     const CapacityOptions& options);

// "p99_ttft_ms = 612.3" style text of one SLO's mean value at a probe.
std::string describe_value(const Slo& slo, const std::optional<double>& value);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_CAPACITY_H_
