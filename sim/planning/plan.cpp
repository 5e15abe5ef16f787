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
#include "sim/base/parallel.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/planning/compare_stats.h"
#include "sim/planning/csv_cell.h"
#include "sim/planning/error_band.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Above this many replicas a candidate is not verified (the estimate alone is reported).
constexpr int kMaxReplicas = 4096;

std::string fixed(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// Rates and counts as a person writes them: 100, 2.5, 0.125.
std::string short_num(double v) {
  std::ostringstream os;
  os << std::setprecision(6) << v;
  return os.str();
}

// The key of the metric at a target: "p50_ttft_ms" … reported for every candidate.
const std::vector<std::string>& report_keys() {
  static const std::vector<std::string> keys = {"p50_ttft_ms", "p99_ttft_ms", "p50_tpot_ms",
                                                "p99_tpot_ms", "p50_e2el_ms", "p99_e2el_ms"};
  return keys;
}

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

namespace {

std::string gpu_range(const CandidateResult& c) {
  if (c.min_gpus == c.max_gpus) return std::to_string(c.min_gpus);
  return std::to_string(c.min_gpus) + "–" + std::to_string(c.max_gpus);
}

std::string shape(const CandidateResult& c) {
  const sim::SimulationConfig& k = c.candidate.config;
  if (sim::pd_enabled(k)) {  // replicas are units of the P/D pools (set_replicas)
    return std::to_string(c.replicas) + (c.replicas == 1 ? " unit" : " units") + " of " +
           std::to_string(k.prefill_replicas) + "P:" + std::to_string(k.decode_replicas) + "D, " +
           std::to_string(c.replicas * k.prefill_replicas) + " prefill + " +
           std::to_string(c.replicas * k.decode_replicas) + " decode instances";
  }
  std::string s = std::to_string(c.replicas) + (c.replicas == 1 ? " replica" : " replicas") +
                  " × TP" + std::to_string(c.tensor_parallel_size);
  if (c.pipeline_parallel_size > 1) s += " × PP" + std::to_string(c.pipeline_parallel_size);
  const int dp = c.candidate.config.data_parallel_size;
  if (dp > 1) s += " × DP" + std::to_string(dp);
  return s;
}

json seed_stat_json(const SeedStat& s) {
  return json{
      {"mean", s.mean}, {"min", s.min}, {"max", s.max}, {"ci95", s.ci95}, {"values", s.values}};
}

std::string csv_num(double v) {
  std::ostringstream os;
  os << std::setprecision(17) << v;
  // Shortest round-trip text.
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream t;
    t << std::setprecision(p) << v;
    if (std::stod(t.str()) == v) return t.str();
  }
  return os.str();
}

// A candidate's result as it travels between processes (executor.h); `candidate` stays behind
// (every process has it). Doubles are exact (CBOR).
json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> opt_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

json eval_to_json(const SloEvaluation& e) {
  json per_seed = json::array();
  for (const auto& row : e.per_seed) {
    json r = json::array();
    for (const auto& v : row) r.push_back(opt_json(v));
    per_seed.push_back(r);
  }
  json mean = json::array();
  for (const auto& v : e.mean) mean.push_back(opt_json(v));
  return json{{"per_seed", per_seed}, {"mean", mean}, {"pass", e.pass}, {"worst", e.worst}};
}

SloEvaluation eval_from_json(const json& j) {
  SloEvaluation e;
  for (const json& row : j.at("per_seed")) {
    std::vector<std::optional<double>> r;
    for (const json& v : row) r.push_back(opt_from(v));
    e.per_seed.push_back(r);
  }
  for (const json& v : j.at("mean")) e.mean.push_back(opt_from(v));
  e.pass = j.at("pass").get<bool>();
  e.worst = j.at("worst").get<int>();
  return e;
}

json candidate_result_to_json(const CandidateResult& r) {
  const CapacityResult& c = r.capacity;
  json probes = json::array();
  for (const CapacityProbe& p : c.probes)
    probes.push_back({{"rate", p.rate}, {"eval", eval_to_json(p.eval)}});
  json verification = json::array();
  for (const VerificationStep& v : r.verification) verification.push_back({v.replicas, v.pass});
  json at_target = json::object();
  for (const auto& [k, st] : r.at_target) {
    at_target[k] = {{"values", st.values},
                    {"mean", st.mean},
                    {"min", st.min},
                    {"max", st.max},
                    {"ci95", st.ci95}};
  }
  return json{{"gpu", r.gpu},
              {"catalog_model", r.catalog_model},
              {"tp", r.tensor_parallel_size},
              {"pp", r.pipeline_parallel_size},
              {"status", static_cast<int>(r.status)},
              {"reason", r.reason},
              {"gpus_per_replica", r.gpus_per_replica},
              {"capacity",
               {{"saturation_rps", c.saturation_rps},
                {"feasible", c.feasible},
                {"capped", c.capped_at_saturation},
                {"max_rate", c.max_rate},
                {"min_failing_rate", c.min_failing_rate},
                {"binding", c.binding},
                {"per_seed_max_rate", c.per_seed_max_rate},
                {"reason", c.reason},
                {"probes", probes},
                {"simulations", c.simulations}}},
              {"min_stable_replicas", r.min_stable_replicas},
              {"estimated_replicas", r.estimated_replicas},
              {"replicas", r.replicas},
              {"total_gpus", r.total_gpus},
              {"per_seed_replicas", r.per_seed_replicas},
              {"min_gpus", r.min_gpus},
              {"max_gpus", r.max_gpus},
              {"verification", verification},
              {"cluster_prompts", r.cluster_prompts},
              {"at_target", at_target},
              {"price_per_gpu_hour", r.price_per_gpu_hour},
              {"cost_per_hour", r.cost_per_hour},
              {"usd_per_million_output_tokens", r.usd_per_million_output_tokens},
              {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
              {"output_tokens_per_usd", r.output_tokens_per_usd},
              {"goodput_rps", r.goodput_rps},
              {"basis", {r.basis.label, r.basis.reason}},
              {"simulations", r.simulations}};
}

CandidateResult candidate_result_from_json(const json& j) {
  CandidateResult r;
  r.gpu = j.at("gpu").get<std::string>();
  r.catalog_model = j.at("catalog_model");
  r.tensor_parallel_size = j.at("tp").get<int>();
  r.pipeline_parallel_size = j.at("pp").get<int>();
  r.status = static_cast<CandidateStatus>(j.at("status").get<int>());
  r.reason = j.at("reason").get<std::string>();
  r.gpus_per_replica = j.at("gpus_per_replica").get<int>();
  const json& c = j.at("capacity");
  r.capacity.saturation_rps = c.at("saturation_rps").get<double>();
  r.capacity.feasible = c.at("feasible").get<bool>();
  r.capacity.capped_at_saturation = c.at("capped").get<bool>();
  r.capacity.max_rate = c.at("max_rate").get<double>();
  r.capacity.min_failing_rate = c.at("min_failing_rate").get<double>();
  r.capacity.binding = c.at("binding").get<std::string>();
  r.capacity.per_seed_max_rate = c.at("per_seed_max_rate").get<std::vector<double>>();
  r.capacity.reason = c.at("reason").get<std::string>();
  for (const json& p : c.at("probes")) {
    r.capacity.probes.push_back({p.at("rate").get<double>(), eval_from_json(p.at("eval"))});
  }
  r.capacity.simulations = c.at("simulations").get<int64_t>();
  r.min_stable_replicas = j.at("min_stable_replicas").get<int>();
  r.estimated_replicas = j.at("estimated_replicas").get<int>();
  r.replicas = j.at("replicas").get<int>();
  r.total_gpus = j.at("total_gpus").get<int>();
  r.per_seed_replicas = j.at("per_seed_replicas").get<std::vector<int>>();
  r.min_gpus = j.at("min_gpus").get<int>();
  r.max_gpus = j.at("max_gpus").get<int>();
  for (const json& v : j.at("verification")) {
    r.verification.push_back({v.at(0).get<int>(), v.at(1).get<bool>()});
  }
  r.cluster_prompts = j.at("cluster_prompts").get<int64_t>();
  for (const auto& [k, st] : j.at("at_target").items()) {
    SeedStat s;
    s.values = st.at("values").get<std::vector<double>>();
    s.mean = st.at("mean").get<double>();
    s.min = st.at("min").get<double>();
    s.max = st.at("max").get<double>();
    s.ci95 = st.at("ci95").get<double>();
    r.at_target[k] = s;
  }
  r.price_per_gpu_hour = j.at("price_per_gpu_hour").get<double>();
  r.cost_per_hour = j.at("cost_per_hour").get<double>();
  r.usd_per_million_output_tokens = j.at("usd_per_million_output_tokens").get<double>();
  r.output_tokens_per_s_per_gpu = j.at("output_tokens_per_s_per_gpu").get<double>();
  r.output_tokens_per_usd = j.at("output_tokens_per_usd").get<double>();
  r.goodput_rps = j.at("goodput_rps").get<double>();
  r.basis.label = j.at("basis").at(0).get<std::string>();
  r.basis.reason = j.at("basis").at(1).get<std::string>();
  r.simulations = j.at("simulations").get<int64_t>();
  return r;
}

}  // namespace

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
  int pass_at = 0,
      fail_at = floor - 1;  // fail_at < answer <= pass_at; floor − 1 fails by definition
  if (p(start)) {
    pass_at = start;
    if (start == floor || p(floor)) return floor;
    fail_at = floor;
  } else {
    fail_at = start;
    int step = 1;
    while (fail_at < cap) {
      const int m = std::min(cap, fail_at + step);
      if (p(m)) {
        pass_at = m;
        break;
      }
      fail_at = m;
      step *= 2;
    }
    if (pass_at == 0) return 0;
  }
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
    auto tp = [&](int pool) { return pool > 0 ? pool : c.tensor_parallel_size; };
    return c.prefill_replicas * tp(c.prefill_tensor_parallel_size) +
           c.decode_replicas * tp(c.decode_tensor_parallel_size);
  }
  // A replica of a data-parallel deployment is its DP ranks (one router target).
  return c.tensor_parallel_size * c.pipeline_parallel_size * std::max(1, c.data_parallel_size);
}

CandidateResult evaluate_candidate(const PlanCandidate& candidate, const PlanOptions& options,
                                   int jobs, WorkShare* share) {
  CandidateResult r;
  r.candidate = candidate;
  r.gpu = candidate.config.gpu;
  r.tensor_parallel_size = candidate.config.tensor_parallel_size;
  r.pipeline_parallel_size = candidate.config.pipeline_parallel_size;
  r.gpus_per_replica = gpus_per_replica(candidate.config);

  sim::SimulationConfig config = candidate.config;
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

  sim::PreparedDeployment prepared;
  try {
    prepared = sim::prepare_deployment(config);
  } catch (const ConfigError& e) {
    r.status = CandidateStatus::kSkipped;
    r.reason = e.what();
    return r;
  }
  r.gpu = prepared.deployment.gpu.name;
  r.catalog_model = sim::catalog_model_json(prepared);
  // The basis at the target load (refined below to each replica's share once the count is
  // known): the candidate's config carries no rate of its own.
  auto basis_at = [&](double rate) {
    sim::SimulationConfig at = config;
    at.workload.request_rate = rate;
    return sim::prediction_basis(prepared, sim::prediction_query(at, prepared));
  };
  r.basis = basis_at(options.target_qps);
  const auto price = options.gpu_price.find(r.gpu);
  r.price_per_gpu_hour =
      price != options.gpu_price.end() ? price->second : prepared.deployment.gpu.price_per_hour_usd;

  CapacityOptions co;
  co.slos = options.slos;
  co.seeds = options.seeds;
  co.rel_tol = options.rel_tol;
  co.jobs = jobs;
  co.share = share;
  r.capacity = find_replica_capacity(config, prepared, co);
  r.simulations = r.capacity.simulations;
  if (!r.capacity.feasible) {
    r.status = CandidateStatus::kInfeasible;
    r.reason = r.capacity.reason;
    return r;
  }

  const double load = options.target_qps * (1 + options.headroom);
  const double ratio = load / r.capacity.max_rate;
  if (ratio > kMaxReplicas) {
    r.status = CandidateStatus::kUnverified;
    r.estimated_replicas = kMaxReplicas;
    r.reason = "would need more than " + std::to_string(kMaxReplicas) + " replicas (" +
               short_num(r.capacity.max_rate) + " req/s each); not verified";
    return r;
  }
  // ceil with a guard against 2.0000000001 from rounding in the division.
  auto ceil_ratio = [](double x) {
    return std::max(1, static_cast<int>(std::ceil(x * (1 - 1e-12))));
  };
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
  r.replicas = smallest_passing(r.estimated_replicas, r.min_stable_replicas, cap,
                                [&](int n) { return eval(n).pass; });
  if (r.replicas == 0) {
    r.status = CandidateStatus::kUnverified;
    r.reason = "the cluster missed the SLOs at " + short_num(load) + " req/s with up to " +
               std::to_string(cap) + " replicas (estimate " + std::to_string(r.estimated_replicas) +
               " from " + short_num(r.capacity.max_rate) + " req/s per replica)";
    return r;
  }
  r.total_gpus = r.replicas * r.gpus_per_replica;
  r.basis = basis_at(options.target_qps / r.replicas);  // the router spreads the load evenly

  // Each seed's own minimum (a seed that never passes up to the cap counts as the cap).
  for (int s = 0; s < options.seeds; ++s) {
    const int n = smallest_passing(r.replicas, r.min_stable_replicas, cap, [&](int m) {
      return eval(m).seed_pass(static_cast<size_t>(s), options.slos);
    });
    r.per_seed_replicas.push_back(n == 0 ? cap : n);
  }
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
    throw ConfigError("--target-qps: " + short_num(options.target_qps) +
                      " is invalid; expected a rate > 0 in requests/s");
  }
  if (!(options.headroom >= 0) || !std::isfinite(options.headroom)) {
    throw ConfigError("--headroom: " + short_num(options.headroom) +
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
  // One job per candidate: its capacity bisection and replica search run inside the job, each
  // round pruned by the one before (capacity.h), so the search is the same wherever it runs.
  JobLoop loop;
  loop.n = n;
  loop.compute = [&](int64_t i) {
    return to_job_bytes(candidate_result_to_json(
        evaluate_candidate(candidates[size_t(i)], options, inner, local_share)));
  };
  loop.accept = [&](int64_t i, std::string&& bytes) {
    results[size_t(i)] = candidate_result_from_json(from_job_bytes(bytes));
    results[size_t(i)].candidate = candidates[size_t(i)];
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
  std::vector<size_t> order(results.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank_key = [&](size_t i) {
    const CandidateResult& r = results[i];
    const bool ok = r.status == CandidateStatus::kOk;
    const double cost = ok ? r.cost_per_hour : std::numeric_limits<double>::infinity();
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

namespace {

std::string headroom_text(const PlanOptions& options) {
  if (options.headroom == 0) return "with no headroom (--headroom 0)";
  return "with " + short_num(options.headroom * 100) + "% headroom (verified at " +
         short_num(options.target_qps * (1 + options.headroom)) + " req/s)";
}

json band_json(const std::string& basis) {
  const std::optional<ErrorBand> b = error_band(basis);
  if (!b) return "unknown";
  return json{{"basis", b->basis},
              {"ttft", b->ttft},
              {"tpot", b->tpot},
              {"e2e", b->e2e},
              {"source", b->source}};
}

}  // namespace

std::string plan_answer(const PlanResult& result, const PlanOptions& options) {
  const std::string load = short_num(options.target_qps) + " req/s " + headroom_text(options);
  if (!result.found()) {
    std::string why;
    for (const auto& c : result.candidates) {
      if (c.status == CandidateStatus::kInfeasible || c.status == CandidateStatus::kUnverified) {
        why = c.candidate.label + ": " + c.reason;
        break;
      }
    }
    if (why.empty() && !result.candidates.empty()) {
      why = result.candidates[0].candidate.label + ": " + result.candidates[0].reason;
    }
    return "Answer: no candidate meets " + slos_text(options.slos) + " at " + load +
           (why.empty() ? "" : " — " + why);
  }
  const CandidateResult& c = result.candidates[0];
  std::string s = "Answer: " + std::to_string(c.total_gpus) + " × " + c.gpu + " (" + shape(c) + ")";
  if (!c.candidate.vary.empty()) {
    std::string knobs;
    for (const auto& [k, v] : c.candidate.vary.items()) {
      std::string flag = k;
      std::replace(flag.begin(), flag.end(), '_', '-');
      knobs += (knobs.empty() ? "" : " ") + flag + "=" +
               (v.is_string() ? v.get<std::string>() : v.dump());
    }
    s += " with " + knobs;
  }
  s += " meets " + slos_text(options.slos) + " at " + load;
  if (c.price_per_gpu_hour > 0) s += "; $" + fixed(c.cost_per_hour, 2) + "/h";
  s += "; " + gpu_range(c) + (c.max_gpus == 1 ? " GPU" : " GPUs") + " over " +
       std::to_string(options.seeds) + (options.seeds == 1 ? " seed" : " seeds");
  s += "; band " + band_text(c.basis.label);
  for (const PlanTie& t : result.ties) {
    s += "; " + c.candidate.label + " and " + t.label + " tie within ±" + percent_text(t.band) +
         " (" + percent_text(t.relative_difference) + " apart, " + c.basis.label + " vs " +
         t.basis + ")";
  }
  if (result.cheapest_passed_over) {
    s += ": the better-founded is the answer, not the cheapest";
  } else if (!result.ties.empty()) {
    bool equal = true;
    for (const PlanTie& t : result.ties) {
      equal = equal && basis_rank(t.basis) == basis_rank(c.basis.label);
    }
    s += equal ? ": none of them is better-founded"
               : ": the answer is the cheaper and the better-founded";
  }
  if (!result.unjudged.empty()) {
    std::string list;
    for (const std::string& u : result.unjudged) list += (list.empty() ? "" : ", ") + u;
    s += "; not compared within a band (no measured error for a basis): " + list;
  }
  return s;
}

std::string answer_latencies(const PlanResult& result, const PlanOptions& options) {
  if (!result.found()) return "";
  const CandidateResult& c = result.candidates[0];
  auto get = [&](const std::string& k) {
    const auto it = c.at_target.find(k);
    return it == c.at_target.end() ? std::string("-")
                                   : fixed(it->second.mean, it->second.mean < 100 ? 1 : 0);
  };
  std::string unnamed;
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"p99_ttft_ms", "P99 TTFT"}, {"p99_tpot_ms", "P99 TPOT"}, {"p99_e2el_ms", "P99 E2E"}}) {
    bool named = false;
    for (const Slo& s : options.slos) named = named || s.key == key;
    if (!named) unnamed += (unnamed.empty() ? "" : ", ") + name;
  }
  return "At the answer, " + short_num(options.target_qps) + " req/s (mean over " +
         std::to_string(options.seeds) + (options.seeds == 1 ? " seed" : " seeds") +
         "): TTFT p50/p99 " + get("p50_ttft_ms") + "/" + get("p99_ttft_ms") + " ms, TPOT p50/p99 " +
         get("p50_tpot_ms") + "/" + get("p99_tpot_ms") + " ms, E2E p50/p99 " + get("p50_e2el_ms") +
         "/" + get("p99_e2el_ms") + " ms" + (unnamed.empty() ? "" : " (no SLO on " + unnamed + ")");
}

ordered_json plan_to_json(const PlanResult& result, const PlanOptions& options,
                          const json& config_echo) {
  ordered_json j;
  ordered_json head;
  head["version"] = "0.1";
  head["target_qps"] = options.target_qps;
  head["headroom"] = options.headroom;
  head["verify_qps"] = options.target_qps * (1 + options.headroom);
  json slos = json::array();
  for (const Slo& s : options.slos) slos.push_back(s.text());
  head["slos"] = slos;
  head["seeds"] = options.seeds;
  head["rel_tol"] = options.rel_tol;
  head["max_cluster_prompts"] = options.max_cluster_prompts;
  head["slo_rule"] = "mean over seeds";
  j["servesim_plan"] = head;
  j["config"] = config_echo;
  ordered_json cands = ordered_json::array();
  int rank = 0;
  for (const CandidateResult& c : result.candidates) {
    ordered_json o;
    const bool ok = c.status == CandidateStatus::kOk;
    o["rank"] = ok ? json(++rank) : json(nullptr);
    o["label"] = c.candidate.label;
    o["catalog_model"] = c.catalog_model;
    o["gpu"] = c.gpu;
    o["tensor_parallel_size"] = c.tensor_parallel_size;
    o["pipeline_parallel_size"] = c.pipeline_parallel_size;
    o["vary"] = c.candidate.vary;
    o["status"] = status_name(c.status);
    o["reason"] = c.reason.empty() ? json(nullptr) : json(c.reason);
    o["prediction_basis"] = c.basis.label.empty() ? json(nullptr) : json(c.basis.label);
    o["prediction_basis_reason"] = c.basis.reason.empty() ? json(nullptr) : json(c.basis.reason);
    // Median |error| of the basis (fractions; "unknown" without a measured one), and the band
    // on this candidate's cost: that of the metric that sets its count (error_band.h).
    o["error_band"] = c.basis.label.empty() ? json(nullptr) : band_json(c.basis.label);
    const std::optional<double> cb = cost_band(c.basis.label, c.capacity.binding);
    o["cost_band"] = ok && cb ? json(*cb) : (ok ? json("unknown") : json(nullptr));
    o["gpus_per_replica"] = c.gpus_per_replica;
    o["total_gpus"] = ok ? json(c.total_gpus) : json(nullptr);
    o["total_gpus_range"] = ok ? json::array({c.min_gpus, c.max_gpus}) : json(nullptr);
    o["replicas"] = ok ? json(c.replicas) : json(nullptr);
    o["estimated_replicas"] = c.estimated_replicas > 0 ? json(c.estimated_replicas) : json(nullptr);
    o["min_stable_replicas"] =
        c.min_stable_replicas > 0 ? json(c.min_stable_replicas) : json(nullptr);
    const bool measured = c.status != CandidateStatus::kSkipped || c.capacity.saturation_rps > 0;
    o["saturation_qps_per_replica"] = measured ? json(c.capacity.saturation_rps) : json(nullptr);
    o["per_replica_max_qps"] = c.capacity.feasible ? json(c.capacity.max_rate) : json(nullptr);
    o["per_replica_max_qps_per_seed"] = c.capacity.per_seed_max_rate;
    o["binding_slo"] = c.capacity.binding.empty() ? json(nullptr) : json(c.capacity.binding);
    o["replicas_per_seed"] = c.per_seed_replicas;
    o["price_per_gpu_hour_usd"] = c.price_per_gpu_hour;
    o["cost_per_hour_usd"] = ok ? json(c.cost_per_hour) : json(nullptr);
    o["usd_per_million_output_tokens"] = ok && c.usd_per_million_output_tokens > 0
                                             ? json(c.usd_per_million_output_tokens)
                                             : json(nullptr);
    o["output_tokens_per_s_per_gpu"] = ok ? json(c.output_tokens_per_s_per_gpu) : json(nullptr);
    o["output_tokens_per_usd"] =
        ok && c.output_tokens_per_usd > 0 ? json(c.output_tokens_per_usd) : json(nullptr);
    o["goodput_rps"] =
        ok && c.at_target.count("request_goodput") ? json(c.goodput_rps) : json(nullptr);
    ordered_json at = ordered_json::object();
    for (const auto& [k, s] : c.at_target) at[k] = seed_stat_json(s);
    o["at_target"] = at;
    json verification = json::array();
    for (const auto& v : c.verification) {
      verification.push_back(json{{"replicas", v.replicas}, {"pass", v.pass}});
    }
    o["verification"] = verification;
    o["cluster_prompts"] = c.cluster_prompts;
    json probes = json::array();
    for (const auto& p : c.capacity.probes) {
      json means = json::object();
      for (size_t i = 0; i < options.slos.size() && i < p.eval.mean.size(); ++i) {
        means[options.slos[i].key] = p.eval.mean[i] ? json(*p.eval.mean[i]) : json(nullptr);
      }
      probes.push_back(json{{"rate", p.rate}, {"pass", p.eval.pass}, {"mean", means}});
    }
    o["capacity_probes"] = probes;
    o["simulations"] = c.simulations;
    cands.push_back(o);
  }
  j["candidates"] = cands;
  j["interrupted"] = result.interrupted;
  j["answer"] = plan_answer(result, options);
  j["answer_band"] = result.found() ? band_json(result.candidates[0].basis.label) : json(nullptr);
  json ties = json::array();
  for (const PlanTie& t : result.ties) {
    ties.push_back(json{{"label", t.label},
                        {"prediction_basis", t.basis},
                        {"relative_difference", t.relative_difference},
                        {"band", t.band}});
  }
  j["ties"] = ties;
  j["cheapest_passed_over"] = result.cheapest_passed_over;
  j["not_compared_within_band"] = result.unjudged;
  j["answer_latencies"] = result.found() ? json(answer_latencies(result, options)) : json(nullptr);
  return j;
}

std::string plan_to_csv(const PlanResult& result) {
  std::ostringstream os;
  os << "rank,label,gpu,tensor_parallel_size,pipeline_parallel_size,status,total_gpus,"
        "total_gpus_min,total_gpus_max,replicas,estimated_replicas,per_replica_max_qps,"
        "binding_slo,p50_ttft_ms,p99_ttft_ms,p50_tpot_ms,p99_tpot_ms,p50_e2el_ms,p99_e2el_ms,"
        "cost_per_hour_usd,usd_per_million_output_tokens,output_tokens_per_s_per_gpu,"
        "output_tokens_per_usd,goodput_rps,prediction_basis,reason\n";
  int rank = 0;
  for (const CandidateResult& c : result.candidates) {
    const bool ok = c.status == CandidateStatus::kOk;
    os << (ok ? std::to_string(++rank) : "") << "," << csv_cell(c.candidate.label) << ","
       << csv_cell(c.gpu) << "," << c.tensor_parallel_size << "," << c.pipeline_parallel_size << ","
       << status_name(c.status) << ",";
    if (ok) {
      os << c.total_gpus << "," << c.min_gpus << "," << c.max_gpus << "," << c.replicas;
    } else {
      os << ",,,";
    }
    os << "," << (c.estimated_replicas > 0 ? std::to_string(c.estimated_replicas) : "") << ","
       << (c.capacity.feasible ? csv_num(c.capacity.max_rate) : "") << ","
       << csv_cell(c.capacity.binding);
    for (const std::string& k : report_keys()) {
      os << ",";
      if (ok && c.at_target.count(k)) os << csv_num(c.at_target.at(k).mean);
    }
    os << ",";
    if (ok) {
      os << csv_num(c.cost_per_hour) << "," << csv_num(c.usd_per_million_output_tokens) << ","
         << csv_num(c.output_tokens_per_s_per_gpu) << "," << csv_num(c.output_tokens_per_usd) << ","
         << (c.at_target.count("request_goodput") ? csv_num(c.goodput_rps) : "");
    } else {
      os << ",,,,";
    }
    os << "," << csv_cell(c.basis.label) << "," << csv_cell(c.reason) << "\n";
  }
  return os.str();
}

void print_plan_table(std::ostream& out, const PlanResult& result, const PlanOptions& options) {
  const double load = options.target_qps * (1 + options.headroom);
  out << "Plan: " << short_num(options.target_qps) << " req/s";
  if (options.headroom > 0) {
    out << " (+" << short_num(options.headroom * 100) << "% headroom: clusters verified at "
        << short_num(load) << " req/s)";
  } else {
    out << " (no headroom: clusters verified at the target itself)";
  }
  out << ", SLOs " << slos_text(options.slos) << " (mean of " << options.seeds << " seeds)\n";
  size_t label_w = 9;
  for (const CandidateResult& c : result.candidates) {
    if (c.status == CandidateStatus::kOk) label_w = std::max(label_w, c.candidate.label.size());
  }
  const int lw = static_cast<int>(label_w);
  char line[1024];
  std::snprintf(line, sizeof line,
                "%-4s %-*s %-13s %-8s %-9s %-22s %-15s %-13s %-9s %-9s %-8s %-9s %s\n", "Rank", lw,
                "Candidate", "GPUs", "Replicas", "QPS/rep", "Binding SLO", "TTFT p50/p99",
                "TPOT p50/p99", "E2E p99", "$/hour", "$/M tok", "tok/s/GPU", "Basis");
  out << line;
  out << std::string(std::strlen(line) - 1, '-') << "\n";
  int rank = 0;
  auto ms = [](const CandidateResult& c, const std::string& k) {
    return c.at_target.count(k)
               ? fixed(c.at_target.at(k).mean, c.at_target.at(k).mean < 100 ? 1 : 0)
               : std::string("-");
  };
  std::vector<const CandidateResult*> others;
  for (const CandidateResult& c : result.candidates) {
    if (c.status != CandidateStatus::kOk) {
      others.push_back(&c);
      continue;
    }
    const std::string gpus =
        std::to_string(c.total_gpus) + (c.min_gpus != c.max_gpus ? " (" + gpu_range(c) + ")" : "");
    std::snprintf(
        line, sizeof line, "%-4d %-*s %-13s %-8d %-9s %-22s %-15s %-13s %-9s %-9s %-8s %-9s %s\n",
        ++rank, lw, c.candidate.label.c_str(), gpus.c_str(), c.replicas,
        fixed(c.capacity.max_rate, c.capacity.max_rate < 10 ? 2 : 1).c_str(),
        c.capacity.binding.c_str(), (ms(c, "p50_ttft_ms") + "/" + ms(c, "p99_ttft_ms")).c_str(),
        (ms(c, "p50_tpot_ms") + "/" + ms(c, "p99_tpot_ms")).c_str(), ms(c, "p99_e2el_ms").c_str(),
        c.price_per_gpu_hour > 0 ? fixed(c.cost_per_hour, 2).c_str() : "-",
        c.usd_per_million_output_tokens > 0 ? fixed(c.usd_per_million_output_tokens, 2).c_str()
                                            : "-",
        fixed(c.output_tokens_per_s_per_gpu, 0).c_str(), c.basis.label.c_str());
    out << line;
  }
  for (const CandidateResult* c : others) {
    out << "-    " << c->candidate.label << ": " << status_name(c->status) << " — " << c->reason
        << "\n";
  }
  // Why each candidate's prediction is calibrated, transferred or datasheet-only.
  for (const CandidateResult& c : result.candidates) {
    if (c.status == CandidateStatus::kOk && !c.basis.label.empty()) {
      out << "Basis of " << c.candidate.label << ": " << c.basis.label << " — " << c.basis.reason
          << "\n";
    }
  }
  out << "GPUs: verified minimum (range over seeds, each seed searched alone). Latencies in ms at "
      << short_num(options.target_qps) << " req/s, mean over seeds.\n";
  // Workload classes: each class's latencies at the answer, next to its SLOs.
  if (result.found()) {
    const CandidateResult& best = result.candidates.front();
    std::set<std::string> classes;
    for (const auto& [k, st] : best.at_target) {
      const auto slash = k.find('/');
      if (slash != std::string::npos) classes.insert(k.substr(0, slash));
    }
    for (const std::string& c : classes) {
      const auto get = [&](const std::string& k) {
        const auto it = best.at_target.find(c + "/" + k);
        return it == best.at_target.end() ? std::string("-")
                                          : fixed(it->second.mean, it->second.mean < 100 ? 1 : 0);
      };
      out << "Class " << c << " at the answer: TTFT p50/p99 " << get("p50_ttft_ms") << "/"
          << get("p99_ttft_ms") << ", TPOT p50/p99 " << get("p50_tpot_ms") << "/"
          << get("p99_tpot_ms") << ", E2E p99 " << get("p99_e2el_ms");
      std::string slos;
      for (const Slo& s : options.slos) {
        if (s.key.rfind(c + "/", 0) == 0) slos += (slos.empty() ? "" : ", ") + s.text();
      }
      out << (slos.empty() ? "" : "; SLOs " + slos) << "\n";
    }
  }
  out << plan_answer(result, options) << "\n";
  if (result.found()) out << answer_latencies(result, options) << "\n";
}

}  // namespace servesim::planning
