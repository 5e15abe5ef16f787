#include "sim/planning/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/base/number_format.h"
#include "sim/base/parallel.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/planning/compare_stats.h"
#include "sim/planning/error_band.h"
#include "sim/planning/plan_prune.h"
#include "sim/planning/plan_wire.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Above this many replicas a candidate is not verified (the estimate alone is reported).
constexpr int kMaxReplicas = 4096;

std::map<std::string, SeedStat> stats_at(const std::vector<metrics::BenchmarkMetrics>& runs,
                                         const std::vector<Slo>& slos) {
  std::vector<std::string> keys = report_keys();
  // Each workload class's p50/p99 TTFT, TPOT and E2E too, so the plan reports every class.
  if (!runs.empty()) {
    const std::vector<std::string> pooled = report_keys();
    for (const metrics::ClassMetrics& c : runs.front().classes) {
      for (const std::string& k : pooled) keys.push_back(c.name + "/" + k);
    }
  }
  for (const Slo& s : slos) {
    if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
  }
  for (const char* k :
       {"request_throughput", "output_throughput", "total_token_throughput", "request_goodput"}) {
    keys.push_back(k);
  }
  std::map<std::string, SeedStat> out;
  for (const std::string& key : keys) {
    std::vector<double> values;
    for (const auto& m : runs) {
      const auto v = metric_value(m, key);
      if (!v) break;
      values.push_back(*v);
    }
    if (values.size() == runs.size() && !values.empty()) out[key] = seed_stat(values);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& report_keys() {
  static const std::vector<std::string> keys = {"p50_ttft_ms", "p99_ttft_ms", "p50_tpot_ms",
                                                "p99_tpot_ms", "p50_e2el_ms", "p99_e2el_ms"};
  return keys;
}

void add_window_throughputs(const std::vector<metrics::BenchmarkMetrics>& runs, double rate,
                            bool multi_turn, std::map<std::string, SeedStat>* at_target) {
  std::vector<double> out_tps, goodput;
  for (const metrics::BenchmarkMetrics& m : runs) {
    const double sent = static_cast<double>(m.completed + m.failed);
    if (multi_turn || sent <= 0) {
      // The rate counts conversations, not requests: the run's own throughputs.
      out_tps.push_back(m.output_throughput);
      if (m.request_goodput) goodput.push_back(*m.request_goodput);
      continue;
    }
    out_tps.push_back(rate * static_cast<double>(m.total_output_tokens) / sent);
    // request_goodput = good / duration_s (vLLM's), so good = request_goodput · duration_s.
    if (m.request_goodput)
      goodput.push_back(rate * std::round(*m.request_goodput * m.duration_s) / sent);
  }
  if (!runs.empty()) (*at_target)["window_output_throughput"] = seed_stat(out_tps);
  if (!runs.empty() && goodput.size() == runs.size()) {
    (*at_target)["window_request_goodput"] = seed_stat(goodput);
  }
}

SeedStat seed_stat(const std::vector<double>& values) {
  SeedStat s;
  s.values = values;
  if (values.empty()) return s;
  const double k = double(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / k;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  if (values.size() > 1) {
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    const double sd = std::sqrt(ss / (k - 1));
    s.ci95 = student_t_quantile(0.975, k - 1) * sd / std::sqrt(k);
  }
  return s;
}

const char* status_name(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kOk:
      return "ok";
    case CandidateStatus::kPruned:
      return "pruned";
    case CandidateStatus::kUnverified:
      return "unverified";
    case CandidateStatus::kInfeasible:
      return "infeasible";
    case CandidateStatus::kSkipped:
      return "skipped";
  }
  return "skipped";
}

int smallest_passing(int start, int floor, int cap, const std::function<bool(int)>& passes) {
  floor = std::max(1, floor);
  if (cap < floor) return 0;
  start = std::clamp(start, floor, cap);
  std::map<int, bool> memo;
  auto p = [&](int n) {
    const auto it = memo.find(n);
    if (it != memo.end()) return it->second;
    return memo[n] = passes(n);
  };
  // From the floor up: pooling usually brings the answer to the floor or just above it, and a
  // count near the floor is the cheapest to simulate. fail_at < answer <= pass_at.
  if (p(floor)) return floor;
  int fail_at = floor, pass_at = 0, step = 1;
  while (fail_at < cap) {
    int m = fail_at + step;
    if (fail_at < start) m = std::min(m, start);  // the estimate is tried before any count above it
    m = std::min(m, cap);
    if (p(m)) {
      pass_at = m;
      break;
    }
    // Above the estimate, steps restart from it: 1, 2, 4, ...
    step = m == start ? 1 : 2 * step;
    fail_at = m;
  }
  if (pass_at == 0) return 0;
  while (pass_at - fail_at > 1) {
    const int mid = fail_at + (pass_at - fail_at) / 2;
    if (p(mid)) {
      pass_at = mid;
    } else {
      fail_at = mid;
    }
  }
  return pass_at;
}

// n replicas of `unit`: of a disaggregated prefill/decode candidate, n units of its pools
// (n × prefill_replicas prefill and n × decode_replicas decode instances, the candidate's P:D
// ratio); otherwise --num-replicas n.
void set_replicas(sim::SimulationConfig& c, const sim::SimulationConfig& unit, int n) {
  if (sim::pd_enabled(unit)) {
    c.prefill_replicas = unit.prefill_replicas * n;
    c.decode_replicas = unit.decode_replicas * n;
  } else {
    c.num_replicas = n;
  }
}

// GPUs of one replica: TP × PP × DP, or a P/D unit's prefill and decode GPUs.
int gpus_per_replica(const sim::SimulationConfig& c) {
  if (sim::pd_enabled(c)) {
    return c.prefill_replicas * c.prefill_tp() + c.decode_replicas * c.decode_tp();
  }
  // A replica of a data-parallel deployment is its DP ranks (one router target).
  return c.tensor_parallel_size * c.pipeline_parallel_size * std::max(1, c.data_parallel_size);
}

namespace {

// A candidate ready to simulate: its result's fixed fields, its runs' config and deployment;
// not `ready` when it cannot start (r.status kSkipped, vLLM's reason).
struct CandidateSetup {
  bool ready = false;
  CandidateResult r;
  sim::SimulationConfig config;
  sim::PreparedDeployment prepared;
};

// The prediction basis of the candidate's deployment at `rate` (its config carries none).
calibration::PredictionBasis basis_at(const sim::SimulationConfig& config,
                                      const sim::PreparedDeployment& prepared, double rate) {
  sim::SimulationConfig at = config;
  at.workload.request_rate = rate;
  return sim::prediction_basis(prepared, sim::prediction_query(at, prepared));
}

// Step 1, the basis at the target, the price. Throws ConfigError only for load errors of all.
CandidateSetup setup_candidate(const PlanCandidate& candidate, const PlanOptions& options) {
  CandidateSetup setup;
  CandidateResult& r = setup.r;
  r.candidate = candidate;
  r.gpu = candidate.config.gpu;
  r.tensor_parallel_size = candidate.config.tensor_parallel_size;
  r.pipeline_parallel_size = candidate.config.pipeline_parallel_size;
  r.gpus_per_replica = gpus_per_replica(candidate.config);

  sim::SimulationConfig& config = setup.config;
  config = candidate.config;
  config.num_replicas = 1;
  require_slo_metrics(config.metrics, options.slos);
  // The plan reads its SLOs, report_keys() (TTFT, TPOT, E2E) and the throughputs, nothing else:
  // ITL and the two peaks are computed only when an SLO names them.
  leave_out_unread_metrics(config.metrics, options.slos);
  for (double p : {50.0, 99.0}) {
    auto& ps = config.metrics.metric_percentiles;
    if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
  }
  if (config.metrics.goodput_slo_ms.empty()) {
    config.metrics.goodput_slo_ms = goodput_from_slos(options.slos);
  }

  try {
    setup.prepared = sim::prepare_deployment(config);
  } catch (const ConfigError& e) {
    r.status = CandidateStatus::kSkipped;
    r.reason = e.what();
    return setup;
  }
  r.gpu = setup.prepared.deployment.gpu.name;
  r.catalog_model = sim::catalog_model_json(setup.prepared);
  // The basis at the target load (refined to each replica's share once the count is known).
  r.basis = basis_at(config, setup.prepared, options.target_qps);
  const auto price = options.gpu_price.find(r.gpu);
  r.price_per_gpu_hour = price != options.gpu_price.end()
                             ? price->second
                             : setup.prepared.deployment.gpu.price_per_hour_usd;
  setup.ready = true;
  return setup;
}

// ceil(x) with a guard against 2.0000000001 from rounding in a division; at least 1.
int ceil_ratio(double x) { return std::max(1, static_cast<int>(std::ceil(x * (1 - 1e-12)))); }

// The stability bound n_s = ceil(load / S) (kMaxReplicas + 1 at most: no more is ever verified).
int stability_bound(double load, double saturation_rps) {
  const double x = load / saturation_rps;
  return x > kMaxReplicas ? kMaxReplicas + 1 : ceil_ratio(x);
}

// The stability bound's cost per hour at saturation throughput S: the same product as
// cost_per_hour, so a verified cost is never below it.
double bound_cost(const CandidateResult& r, double load, double saturation_rps) {
  return r.price_per_gpu_hour * (stability_bound(load, saturation_rps) * r.gpus_per_replica);
}

struct Excluded {};  // thrown out of the verification when the incumbent excludes the candidate

}  // namespace

CandidateResult evaluate_candidate(const PlanCandidate& candidate, const PlanOptions& options,
                                   int jobs, WorkShare* share, const CandidatePruning& pruning) {
  CandidateSetup setup = setup_candidate(candidate, options);
  CandidateResult& r = setup.r;
  if (!setup.ready) return r;
  const sim::SimulationConfig& config = setup.config;
  const sim::PreparedDeployment& prepared = setup.prepared;
  const double load = options.target_qps * (1 + options.headroom);

  // Whether the incumbent now excludes the candidate, at saturation throughput s.
  const double band = widest_cost_band(r.basis.label);  // the basis at the target, not refined
  auto excluded = [&](double s) {
    if (pruning.rule == nullptr || pruning.incumbent == nullptr) return false;
    const std::optional<CostAndBand> best = pruning.incumbent->best();
    return best && pruning.rule->excludes(bound_cost(r, load, s), band, best->cost, best->band);
  };

  CapacityOptions co;
  co.slos = options.slos;
  co.seeds = options.seeds;
  co.rel_tol = options.rel_tol;
  co.jobs = jobs;
  co.share = share;
  co.saturation_rps = pruning.saturation_rps;
  if (pruning.rule != nullptr) co.abandon = excluded;
  r.capacity = find_replica_capacity(config, prepared, co);
  // The saturation probes count where they ran: in the pre-pass, on this candidate's behalf.
  if (pruning.saturation_rps) r.capacity.simulations += options.seeds;
  r.simulations = r.capacity.simulations;
  if (r.capacity.saturation_rps > 0) {
    r.bound_gpus = stability_bound(load, r.capacity.saturation_rps) * r.gpus_per_replica;
    r.bound_cost_per_hour = bound_cost(r, load, r.capacity.saturation_rps);
  }
  if (r.capacity.abandoned) {
    r.status = CandidateStatus::kPruned;
    return r;
  }
  if (!r.capacity.feasible) {
    r.status = CandidateStatus::kInfeasible;
    r.reason = r.capacity.reason;
    return r;
  }

  const double ratio = load / r.capacity.max_rate;
  if (ratio > kMaxReplicas) {
    r.status = CandidateStatus::kUnverified;
    r.estimated_replicas = kMaxReplicas;
    r.reason = "would need more than " + std::to_string(kMaxReplicas) + " replicas (" +
               short_number(r.capacity.max_rate) + " req/s each); not verified";
    return r;
  }
  // Fewer than L / S replicas cannot serve the load at all (S = one replica's saturation
  // throughput): such counts fail without a run, however a finite run would look.
  r.min_stable_replicas = ceil_ratio(load / r.capacity.saturation_rps);
  r.estimated_replicas = std::max(r.min_stable_replicas, ceil_ratio(ratio));
  const int64_t per_probe = config.workload.num_prompts;
  r.cluster_prompts = std::max<int64_t>(
      per_probe, std::min<int64_t>(per_probe * r.estimated_replicas, options.max_cluster_prompts));

  sim::SimulationConfig cluster = config;
  cluster.workload.num_prompts = r.cluster_prompts;
  cluster.warmup_requests = config.warmup_requests * r.cluster_prompts / per_probe;
  std::vector<int> seeds(static_cast<size_t>(options.seeds));
  std::iota(seeds.begin(), seeds.end(), 0);

  std::map<int, std::vector<metrics::BenchmarkMetrics>> runs_at;
  std::map<int, SloEvaluation> evals;
  auto eval = [&](int n) -> const SloEvaluation& {
    const auto it = evals.find(n);
    if (it != evals.end()) return it->second;
    if (excluded(r.capacity.saturation_rps)) throw Excluded{};
    sim::SimulationConfig c = cluster;
    set_replicas(c, config, n);
    c.workload.request_rate = load;
    runs_at[n] = run_seeds(c, prepared, seeds, jobs, share);
    r.simulations += options.seeds;
    const SloEvaluation& e = evals[n] = evaluate_slos(runs_at[n], options.slos);
    r.verification.push_back({n, e.pass});
    return e;
  };
  const int cap =
      std::min(kMaxReplicas, std::max(4 * r.estimated_replicas, r.estimated_replicas + 8));
  try {
    r.replicas = smallest_passing(r.estimated_replicas, r.min_stable_replicas, cap,
                                  [&](int n) { return eval(n).pass; });
    if (r.replicas == 0) {
      r.status = CandidateStatus::kUnverified;
      r.reason = "the cluster missed the SLOs at " + short_number(load) + " req/s with up to " +
                 std::to_string(cap) + " replicas (estimate " +
                 std::to_string(r.estimated_replicas) + " from " +
                 short_number(r.capacity.max_rate) + " req/s per replica)";
      return r;
    }
    // Each seed's own minimum (a seed that never passes up to the cap counts as the cap).
    for (int s = 0; s < options.seeds; ++s) {
      const int n = smallest_passing(r.replicas, r.min_stable_replicas, cap, [&](int m) {
        return eval(m).seed_pass(static_cast<size_t>(s), options.slos);
      });
      r.per_seed_replicas.push_back(n == 0 ? cap : n);
    }
  } catch (const Excluded&) {
    r.status = CandidateStatus::kPruned;
    return r;
  }
  r.total_gpus = r.replicas * r.gpus_per_replica;
  r.basis = basis_at(config, prepared, options.target_qps / r.replicas);  // the router spreads it
  const auto [lo, hi] = std::minmax_element(r.per_seed_replicas.begin(), r.per_seed_replicas.end());
  r.min_gpus = *lo * r.gpus_per_replica;
  r.max_gpus = *hi * r.gpus_per_replica;

  // Latencies and throughputs at the target rate itself.
  std::vector<metrics::BenchmarkMetrics> at_target;
  if (options.headroom == 0) {
    at_target = runs_at.at(r.replicas);
  } else {
    sim::SimulationConfig c = cluster;
    set_replicas(c, config, r.replicas);
    c.workload.request_rate = options.target_qps;
    at_target = run_seeds(c, prepared, seeds, jobs, share);
    r.simulations += options.seeds;
  }
  r.at_target = stats_at(at_target, options.slos);
  add_window_throughputs(at_target, options.target_qps, cluster.workload.multi_turn, &r.at_target);
  const double out_tps = r.at_target.count("window_output_throughput")
                             ? r.at_target.at("window_output_throughput").mean
                             : 0.0;
  r.cost_per_hour = r.price_per_gpu_hour * r.total_gpus;
  r.output_tokens_per_s_per_gpu = out_tps / r.total_gpus;
  if (out_tps > 0) r.usd_per_million_output_tokens = r.cost_per_hour / (out_tps * 3600) * 1e6;
  if (r.cost_per_hour > 0) r.output_tokens_per_usd = out_tps * 3600 / r.cost_per_hour;
  if (r.at_target.count("window_request_goodput")) {
    r.goodput_rps = r.at_target.at("window_request_goodput").mean;
  }
  r.status = CandidateStatus::kOk;
  return r;
}

PlanResult run_plan(const std::vector<PlanCandidate>& candidates, const PlanOptions& options,
                    ProgressBar* progress, const std::atomic<bool>* cancel) {
  if (!(options.target_qps > 0) || !std::isfinite(options.target_qps)) {
    throw ConfigError("--target-qps: " + short_number(options.target_qps) +
                      " is invalid; expected a rate > 0 in requests/s");
  }
  if (!(options.headroom >= 0) || !std::isfinite(options.headroom)) {
    throw ConfigError("--headroom: " + short_number(options.headroom) +
                      " is invalid; expected a fraction >= 0 such as 0.2");
  }
  if (options.seeds < 1) {
    throw ConfigError("--seeds: " + std::to_string(options.seeds) +
                      " is invalid; expected an integer >= 1");
  }
  if (options.slos.empty()) {
    throw ConfigError("--slo: at least one SLO is required, e.g. --slo 'p99_ttft_ms<=500'");
  }
  if (candidates.empty()) throw ConfigError("plan: no candidate deployment to evaluate");
  for (const auto& c : candidates) {
    if (c.config.max_concurrency > 0) {
      throw ConfigError(
          "--max-concurrency: plan sizes a deployment for an open-loop request "
          "rate (--target-qps); a client concurrency cap does not apply");
    }
  }

  const int64_t n = static_cast<int64_t>(candidates.size());
  const int jobs = options.jobs > 0 ? options.jobs : default_jobs();
  int inner = std::max(1, jobs / static_cast<int>(std::min<int64_t>(jobs, n)));
  if (options.executor != nullptr && options.executor->distributed()) {
    inner = options.jobs > 0 ? options.jobs : 1;  // the ranks fill the cores; --jobs per rank
  }
  // Threads of this process: `jobs` threads share every candidate's simulations, so a thread
  // whose candidates are done helps with the others' seeds instead of idling.
  WorkShare share;
  WorkShare* const local_share = options.executor == nullptr ? &share : nullptr;
  std::vector<CandidateResult> results(static_cast<size_t>(n));
  std::vector<char> done(static_cast<size_t>(n), 0);

  // Pruning (plan.h, plan_prune.h): with local threads, every bound first, then cheapest bound
  // first with early stops; under MPI and shards, input order and no early stop.
  PruneRule rule;
  std::vector<CostAndBand> bounds;
  std::vector<std::optional<double>> saturation(static_cast<size_t>(n));
  std::vector<int64_t> job_order(static_cast<size_t>(n));
  std::iota(job_order.begin(), job_order.end(), 0);
  if (options.prune && options.executor == nullptr) {
    std::vector<CostAndBand> bound(static_cast<size_t>(n),
                                   {std::numeric_limits<double>::infinity(), 0.0});
    std::vector<char> unpriced(static_cast<size_t>(n), 0);
    const double load = options.target_qps * (1 + options.headroom);
    parallel_for(n, jobs, [&](int64_t i) {
      const CandidateSetup setup = setup_candidate(candidates[size_t(i)], options);
      if (!setup.ready) return;
      unpriced[size_t(i)] = !(setup.r.price_per_gpu_hour > 0);
      const double s = saturation_throughput(setup.config, setup.prepared, options.seeds, 1);
      saturation[size_t(i)] = s;
      if (s > 0) {
        bound[size_t(i)] = {bound_cost(setup.r, load, s), widest_cost_band(setup.r.basis.label)};
      }
    });
    for (const CostAndBand& b : bound) {
      if (std::isfinite(b.cost)) bounds.push_back(b);
    }
    rule.on = std::find(unpriced.begin(), unpriced.end(), 1) == unpriced.end();
    std::stable_sort(job_order.begin(), job_order.end(), [&](int64_t a, int64_t b) {
      return bound[size_t(a)].cost < bound[size_t(b)].cost;
    });
  }
  Incumbent incumbent(std::move(bounds));
  int64_t simulations_run = 0;
  // One job per candidate: its capacity and replica searches, the same wherever it runs.
  JobLoop loop;
  loop.n = n;
  loop.compute = [&](int64_t k) {
    const int64_t i = job_order[size_t(k)];
    CandidatePruning pruning;
    pruning.saturation_rps = saturation[size_t(i)];
    if (rule.on) {
      pruning.rule = &rule;
      pruning.incumbent = &incumbent;
    }
    const CandidateResult r =
        evaluate_candidate(candidates[size_t(i)], options, inner, local_share, pruning);
    if (r.status == CandidateStatus::kOk) incumbent.offer(r.cost_per_hour);
    return to_job_bytes(candidate_result_to_json(r));
  };
  loop.accept = [&](int64_t k, std::string&& bytes) {
    const int64_t i = job_order[size_t(k)];
    results[size_t(i)] = candidate_result_from_json(from_job_bytes(bytes));
    results[size_t(i)].candidate = candidates[size_t(i)];
    simulations_run += results[size_t(i)].simulations;
    done[size_t(i)] = 1;
  };
  if (progress != nullptr) loop.tick = [progress] { progress->advance(); };
  if (options.executor != nullptr) {
    options.executor->run(loop, cancel);
  } else {
    ThreadExecutor local(jobs, local_share);
    local.run(loop, cancel);
  }

  PlanResult plan;
  plan.simulations_run = simulations_run;
  for (int64_t i = 0; i < n; ++i) {
    if (!done[static_cast<size_t>(i)]) {
      CandidateResult& r = results[static_cast<size_t>(i)];
      r.candidate = candidates[static_cast<size_t>(i)];
      r.gpu = r.candidate.config.gpu;
      r.tensor_parallel_size = r.candidate.config.tensor_parallel_size;
      r.pipeline_parallel_size = r.candidate.config.pipeline_parallel_size;
      r.status = CandidateStatus::kSkipped;
      r.reason = "not evaluated (interrupted)";
      plan.interrupted = true;
    }
  }
  if (options.prune) prune_results(options, &results);
  std::vector<size_t> order(results.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank_key = [&](size_t i) {
    const CandidateResult& r = results[i];
    const bool ok = r.status == CandidateStatus::kOk;
    const double cost =
        ok ? r.cost_per_hour
           : (r.status == CandidateStatus::kPruned ? r.bound_cost_per_hour
                                                   : std::numeric_limits<double>::infinity());
    return std::tuple(static_cast<int>(r.status), cost, ok ? r.total_gpus : 0, i);
  };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return rank_key(a) < rank_key(b); });
  std::vector<CandidateResult> ranked;
  for (size_t i : order) ranked.push_back(std::move(results[i]));
  resolve_ties(std::move(ranked), &plan);
  return plan;
}

void resolve_ties(std::vector<CandidateResult> ranked, PlanResult* plan) {
  plan->ties.clear();
  plan->unjudged.clear();
  plan->cheapest_passed_over = false;
  size_t n_ok = 0;
  while (n_ok < ranked.size() && ranked[n_ok].status == CandidateStatus::kOk) ++n_ok;
  // Cost when every candidate has a price, else GPU count (what the ranking then rests on).
  bool by_cost = true;
  for (size_t i = 0; i < n_ok; ++i) by_cost = by_cost && ranked[i].cost_per_hour > 0;
  auto measure = [&](const CandidateResult& c) {
    return by_cost ? c.cost_per_hour : static_cast<double>(c.total_gpus);
  };
  auto band_of = [](const CandidateResult& c) {
    return cost_band(c.basis.label, c.capacity.binding);
  };
  // |a − b| / the smaller, and whether that is within the two candidates' combined band.
  auto apart = [&](const CandidateResult& a, const CandidateResult& b) {
    const double x = measure(a), y = measure(b);
    return std::abs(x - y) / std::min(x, y);
  };
  std::vector<size_t> tied = {0};
  if (n_ok >= 2) {
    const std::optional<double> b0 = band_of(ranked[0]);
    for (size_t i = 1; i < n_ok; ++i) {
      const std::optional<double> bi = band_of(ranked[i]);
      if (!b0 || !bi) {
        plan->unjudged.push_back(ranked[i].candidate.label);
      } else if (apart(ranked[0], ranked[i]) < combined_band(*b0, *bi)) {
        tied.push_back(i);
      }
    }
  }
  // The best-founded of the tied; the cheaper (earlier) on equal basis.
  size_t best = 0;
  for (size_t i : tied) {
    if (basis_rank(ranked[i].basis.label) < basis_rank(ranked[best].basis.label)) best = i;
  }
  if (best != 0) {
    std::rotate(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(best),
                ranked.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    plan->cheapest_passed_over = true;
    // Indices before `best` moved one down.
    for (size_t& i : tied) i = i < best ? i + 1 : (i == best ? 0 : i);
  }
  // Listed: those of the tie set that also tie with the answer itself.
  if (tied.size() > 1) {
    const std::optional<double> ba = band_of(ranked[0]);
    std::sort(tied.begin(), tied.end());
    for (size_t i : tied) {
      if (i == 0) continue;
      const double band = combined_band(*ba, *band_of(ranked[i]));
      const double d = apart(ranked[0], ranked[i]);
      if (d < band)
        plan->ties.push_back({ranked[i].candidate.label, ranked[i].basis.label, d, band});
    }
  }
  plan->candidates = std::move(ranked);
}

}  // namespace servesim::planning
