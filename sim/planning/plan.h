// Plan: the cheapest deployment that meets every SLO at a target load (DESIGN.md §5).
//
// Per candidate (GPU × tensor-parallel size × --vary knob values), run_plan():
//  1. prepares the deployment; a candidate that cannot start (model does not fit, TP does not
//     divide the heads, max-model-len too long for its KV cache) is skipped with vLLM's reason;
//  2. finds the per-replica max rate R meeting every SLO (capacity.h: bisection with seeds);
//     none at any load → infeasible, with the reason;
//  3. estimates replicas n0 = max(n_s, ceil(L / R)) with L = target_qps·(1 + headroom), where
//     n_s = ceil(L / S) is the stability bound (S = one replica's saturation throughput: fewer
//     replicas cannot serve L at all, so they count as failing without a run);
//  4. verifies: simulates the whole cluster (n replicas behind config.router) at rate L and
//     finds the smallest n >= n_s that passes (same SLO rule: mean over seeds): n_s first
//     (pooling behind a load-aware router often brings the answer down to it, and the fewest
//     replicas are the cheapest run), then n_s + 1, + 3, + 7, ... (n0 tried before any count
//     above it) until one passes, then the last gap is bisected (smallest_passing). A bursty
//     workload may push n above n0. Searched up to max(4·n0, n0 + 8) replicas, else
//     "unverified".
//     Cluster runs send N_c = clamp(num_prompts·n0, num_prompts, max_cluster_prompts) requests
//     (about as many per replica as a capacity probe, capped for speed), the same for every n
//     and seed-matched, so the comparison between counts is paired; --warmup-requests scales by
//     N_c / num_prompts.
//  5. confidence interval: each seed alone gets its own minimum count (the same search on that
//     seed's results); the GPU range is min–max of replicas_s·GPUs per replica over seeds;
//  6. reports P50/P99 TTFT, TPOT and E2E at the target rate (not L) with the chosen count: mean
//     over seeds with min–max and a 95% Student-t half-width, plus cost and throughput views.
// A disaggregated prefill/decode candidate (config.prefill_replicas and decode_replicas > 0,
// sim/cluster/pd_simulation.h): its "replica" is one unit of its pools, n replicas are n × each
// pool, and its GPUs per replica are P·TP_p + D·TP_d.
//
// Pruning (options.prune, plan_prune.h): when every candidate has a price, a candidate whose
// stability bound (n_s replicas, the fewest any verification could give) costs at least the
// cheapest verified candidate's cost × (1 + the widest combined band) can neither be the answer
// nor tie with it; it is reported "pruned" with that bound and not verified. With the local
// threads, run_plan first measures every candidate's saturation throughput (step 2's first
// simulation, which the candidate then reuses) and evaluates the candidates cheapest bound first,
// so the cheapest are verified early; a candidate stops as soon as the least cost verified so far
// excludes it. The same rule is applied to every candidate at the end against the final
// cheapest, so which candidates are pruned, and every file, do not depend on the order, the
// timing, --jobs, MPI ranks or shards (under MPI and shards, candidates run in input order and
// are pruned only at the end). The answer, its ties and every verified candidate's numbers are
// those of the search without pruning.
// Ranking: candidates that meet the SLOs by cost per hour (GPUs × price), then fewer GPUs, then
// input order; after them the pruned (by their bound's cost), then the unverified, then the
// infeasible, then the skipped ones, each group in input order. Then the tie rule (resolve_ties,
// error_band.h): the candidates whose cost (GPU count when a price is 0) lies within the combined
// error band of the cheapest's tie with it, and the best-founded of them (calibrated > transferred
// > datasheet-only; the cheaper on equal basis) is ranked first — the answer. Determinism: every
// simulation is a pure function of its config and seed; candidates run in parallel, one job each on
// the executor (executor.h: `jobs` threads sharing every candidate's simulations through a
// WorkShare, so no thread idles while one candidate's search is left; or MPI ranks; or shards), so
// the result and its files are identical for any `jobs`, rank count or shard count. The plan's
// outputs (answer line, table, plan file, CSV) are plan_report.h's.
#ifndef SERVESIM_SIM_PLANNING_PLAN_H_
#define SERVESIM_SIM_PLANNING_PLAN_H_

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/executor.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/capacity.h"
#include "sim/planning/progress.h"
#include "sim/planning/slo.h"

namespace servesim::planning {

class Incumbent;  // plan_prune.h
struct PruneRule;

struct PlanCandidate {
  std::string label;                               // "h100-sxm TP2 max-num-seqs=64"
  nlohmann::json vary = nlohmann::json::object();  // --vary settings of this candidate
  sim::SimulationConfig config;                    // complete: gpu, TP, vary applied
};

struct PlanOptions {
  double target_qps = 0;
  double headroom = 0;  // verify at target_qps·(1 + headroom)
  std::vector<Slo> slos;
  int seeds = 3;
  int jobs = 0;  // 0 = all cores (under MPI: threads per rank for a candidate's seeds)
  JobExecutor* executor = nullptr;  // where candidates run (null: `jobs` threads here)
  double rel_tol = 0.01;            // capacity bisection tolerance (relative, on the rate)
  int64_t max_cluster_prompts = 10000;
  std::map<std::string, double> gpu_price;  // GPU catalog name → USD per GPU-hour (override)
  bool prune = true;  // pruning (above); false verifies every candidate (--no-prune)
};

// A metric over seeds: mean, min, max and the 95% Student-t half-width t(0.975, k−1)·s/√k
// (s the sample standard deviation of the k per-seed values; 0 with one seed).
struct SeedStat {
  std::vector<double> values;
  double mean = 0, min = 0, max = 0, ci95 = 0;
};
SeedStat seed_stat(const std::vector<double>& values);

enum class CandidateStatus { kOk, kPruned, kUnverified, kInfeasible, kSkipped };
// "ok", "pruned", "unverified", "infeasible", "skipped"
const char* status_name(CandidateStatus s);

struct VerificationStep {
  int replicas = 0;
  bool pass = false;
};

struct CandidateResult {
  PlanCandidate candidate;
  std::string gpu;  // resolved catalog name
  // The catalog entry the candidate's --model named (sim::catalog_model_json; null when a path).
  nlohmann::json catalog_model;
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  CandidateStatus status = CandidateStatus::kSkipped;
  std::string reason;  // why not ok
  // calibrated / transferred / datasheet-only, and why (sim::PreparedDeployment::basis).
  calibration::PredictionBasis basis;
  int gpus_per_replica = 1;
  CapacityResult capacity;
  int min_stable_replicas = 0;  // ceil(L / saturation throughput per replica)
  // The stability bound's GPUs (min_stable_replicas · gpus_per_replica) and their cost per hour:
  // no verification of this candidate could give fewer (0 until the saturation is measured).
  int bound_gpus = 0;
  double bound_cost_per_hour = 0;
  int estimated_replicas = 0;  // max(min_stable_replicas, ceil(L / per-replica max))
  int replicas = 0;            // verified minimum
  int total_gpus = 0;
  std::vector<int> per_seed_replicas;
  int min_gpus = 0, max_gpus = 0;  // over seeds
  std::vector<VerificationStep> verification;
  int64_t cluster_prompts = 0;
  // At the target rate with `replicas`: p50/p99 of ttft, tpot, e2el (ms), each SLO's key,
  // request_throughput, output_throughput, total_token_throughput, request_goodput (over the
  // run, as vLLM reports them), window_output_throughput, window_request_goodput (over the
  // arrival window: add_window_throughputs).
  std::map<std::string, SeedStat> at_target;
  double price_per_gpu_hour = 0;
  double cost_per_hour = 0;
  double usd_per_million_output_tokens = 0;
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_usd = 0;
  // Cost views at the target from window_output_throughput; goodput_rps is
  // window_request_goodput (goodput_from_slos thresholds).
  double goodput_rps = 0;
  int64_t simulations = 0;
};

// A candidate that ties with the answer within the combined error band (resolve_ties).
struct PlanTie {
  std::string label;
  std::string basis;
  double relative_difference = 0;  // |its cost − the answer's| / the cheaper of the two
  double band = 0;                 // combined band of the two (fraction)
};

struct PlanResult {
  std::vector<CandidateResult> candidates;  // ranked
  std::vector<PlanTie> ties;                // candidates tied with the answer, in rank order
  // Candidates the tie rule could not judge against the cheapest: a basis with no measured band.
  std::vector<std::string> unjudged;
  bool cheapest_passed_over = false;  // the tie rule put a better-founded candidate first
  bool interrupted = false;
  // Simulations this plan ran, those on candidates later pruned included (each pruned candidate
  // reports only its saturation probes, the simulations its bound rests on). Depends on timing.
  int64_t simulations_run = 0;
  bool found() const { return !candidates.empty() && candidates[0].status == CandidateStatus::kOk; }
};

// The latency keys reported at the target for every candidate: "p50_ttft_ms", "p99_ttft_ms",
// "p50_tpot_ms", "p99_tpot_ms", "p50_e2el_ms", "p99_e2el_ms".
const std::vector<std::string>& report_keys();

// Adds "window_output_throughput" and "window_request_goodput" (when the runs have goodput) to
// `at_target`: the throughputs over the arrival window N / rate of the N requests sent, not over
// the run, whose drain tail after the last arrival (the cluster finishing what is queued) would
// understate a sustained cluster's rate: output tok/s = rate · output tokens / N, goodput = rate ·
// good requests / N. For a stable cluster these are its long-run rates. Multi-turn runs (the rate
// counts conversations) keep the run's own throughputs. The plan's cost views use these.
void add_window_throughputs(const std::vector<metrics::BenchmarkMetrics>& runs, double rate,
                            bool multi_turn, std::map<std::string, SeedStat>* at_target);

// Smallest n in [floor, cap] with passes(n), for passes monotone in n (false … true …) and every
// n < floor failing by definition. Tries `floor` first; if it fails, steps up from it by 1, 2,
// 4, … (never past `start`, clamped to [floor, cap], before trying `start` itself; from `start`
// by 1, 2, 4, … again) until a count passes, then bisects the last gap. Returns 0 when nothing up
// to `cap` passes. Calls passes(n) at most once per n.
int smallest_passing(int start, int floor, int cap, const std::function<bool(int)>& passes);

// What run_plan hands a candidate for pruning: its saturation throughput when already measured
// (the pre-pass), and the rule and incumbent that may stop it (status kPruned, its bound set).
struct CandidatePruning {
  std::optional<double> saturation_rps;
  const PruneRule* rule = nullptr;
  const Incumbent* incumbent = nullptr;
};

// Evaluates one candidate (steps 1–6 above) with `jobs` threads for its seeds, or, with `share`,
// handing its simulations to threads shared with the other candidates. Throws ConfigError only
// for load errors common to every candidate.
CandidateResult evaluate_candidate(const PlanCandidate& candidate, const PlanOptions& options,
                                   int jobs, WorkShare* share = nullptr,
                                   const CandidatePruning& pruning = {});

// All candidates, ranked. Throws ConfigError when target_qps <= 0, headroom < 0, seeds < 1, no
// SLO or no candidate. `progress` (may be null) advances once per candidate; `cancel` stops
// starting candidates (those not run are "skipped: interrupted").
PlanResult run_plan(const std::vector<PlanCandidate>& candidates, const PlanOptions& options,
                    ProgressBar* progress, const std::atomic<bool>* cancel);

// Applies the tie rule to `ranked` (candidates ranked by cost, ok ones first): moves the
// best-founded candidate among those tied with the cheapest to the front, and fills `ties`,
// `unjudged` and `cheapest_passed_over` of `plan` (whose candidates are `ranked` afterwards).
void resolve_ties(std::vector<CandidateResult> ranked, PlanResult* plan);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PLAN_H_
