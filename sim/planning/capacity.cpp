#include "sim/planning/capacity.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/parallel.h"

namespace servesim::planning {
namespace {

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << v;
  return os.str();
}

// Significant digits for rates and metric values in messages.
std::string sig(double v) {
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

std::string unit_of(const std::string& key) {
  if (key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0) return " ms";
  if (key.find("throughput") != std::string::npos || key == "request_goodput") return " /s";
  if (key == "duration") return " s";
  return "";
}

}  // namespace

Bisection bisect_between(double pass_at, double fail_at, double rel_tol,
                         const std::function<bool(double)>& passes) {
  Bisection b;
  b.max_pass = pass_at;
  b.min_fail = fail_at;
  while (b.min_fail > b.max_pass * (1 + rel_tol)) {
    const double mid = std::sqrt(b.max_pass * b.min_fail);
    ++b.probes;
    if (passes(mid)) {
      b.max_pass = mid;
    } else {
      b.min_fail = mid;
    }
  }
  return b;
}

Bisection bisect_max_passing(double lo, double hi, double rel_tol,
                             const std::function<bool(double)>& passes) {
  SERVESIM_CHECK(lo > 0 && hi > lo && rel_tol > 0, "bisection needs 0 < lo < hi and a tolerance");
  Bisection b;
  b.probes = 1;
  if (passes(hi)) {
    b.high_passes = true;
    b.max_pass = hi;
    b.min_fail = hi;
    return b;
  }
  // The bracket's first midpoint before lo (the same √(lo·hi) bisect_between takes first): when
  // it passes, lo would pass too (monotone) and is not probed.
  double pass_at = lo, fail_at = hi;
  if (hi > lo * (1 + rel_tol)) {
    const double mid = std::sqrt(lo * hi);
    ++b.probes;
    if (passes(mid)) {
      Bisection inner = bisect_between(mid, hi, rel_tol, passes);
      inner.probes += b.probes;
      return inner;
    }
    fail_at = mid;
  }
  ++b.probes;
  if (!passes(lo)) {
    b.low_fails = true;
    b.min_fail = lo;
    return b;
  }
  Bisection inner = bisect_between(pass_at, fail_at, rel_tol, passes);
  inner.probes += b.probes;
  return inner;
}

bool SloEvaluation::seed_pass(size_t s, const std::vector<Slo>& slos) const {
  for (size_t i = 0; i < slos.size(); ++i) {
    const auto& v = per_seed.at(s).at(i);
    if (!v || !slos[i].holds(*v)) return false;
  }
  return true;
}

SloEvaluation evaluate_slos(const std::vector<metrics::BenchmarkMetrics>& per_seed,
                            const std::vector<Slo>& slos) {
  SloEvaluation e;
  for (const auto& m : per_seed) {
    std::vector<std::optional<double>> row;
    for (const Slo& slo : slos) row.push_back(metric_value(m, slo.key));
    e.per_seed.push_back(std::move(row));
  }
  e.pass = true;
  double worst_violation = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < slos.size(); ++i) {
    std::optional<double> mean = 0.0;
    for (const auto& row : e.per_seed) {
      if (!row[i]) {
        mean.reset();
        break;
      }
      *mean += *row[i];
    }
    if (mean && !e.per_seed.empty()) *mean /= double(e.per_seed.size());
    e.mean.push_back(mean);
    const bool ok = mean && slos[i].holds(*mean);
    if (!ok) e.pass = false;
    const double v = mean ? slos[i].violation(*mean) : std::numeric_limits<double>::infinity();
    if (!ok && v > worst_violation) {
      worst_violation = v;
      e.worst = static_cast<int>(i);
    }
  }
  return e;
}

void for_each_seed(int64_t n, int jobs, WorkShare* share, const std::function<void(int64_t)>& fn) {
  if (share != nullptr) {
    share->run(n, fn);
  } else {
    parallel_for(n, std::max(1, jobs), fn);
  }
}

std::vector<metrics::BenchmarkMetrics> run_seeds(const sim::SimulationConfig& config,
                                                 const sim::PreparedDeployment& prepared,
                                                 const std::vector<int>& seeds, int jobs,
                                                 WorkShare* share) {
  std::vector<metrics::BenchmarkMetrics> out(seeds.size());
  for_each_seed(static_cast<int64_t>(seeds.size()), jobs, share, [&](int64_t i) {
    sim::SimulationConfig c = config;
    c.track_ideal_busy = false;  // only the metrics are read
    c.workload.seed = config.workload.seed + static_cast<uint64_t>(seeds[static_cast<size_t>(i)]);
    out[static_cast<size_t>(i)] = sim::run_simulation(c, prepared).metrics;
  });
  return out;
}

double saturation_throughput(const sim::SimulationConfig& config,
                             const sim::PreparedDeployment& prepared, int seeds, int jobs,
                             WorkShare* share) {
  sim::SimulationConfig c = config;
  c.num_replicas = 1;
  c.workload.request_rate = std::numeric_limits<double>::infinity();
  // A trace's "inf" is its recorded timing; all at once is time scale 0 (trace_replay.h).
  if (c.workload.dataset_name == "trace") c.workload.trace_time_scale = 0;
  std::vector<int> all_seeds(static_cast<size_t>(seeds));
  std::iota(all_seeds.begin(), all_seeds.end(), 0);
  const auto runs = run_seeds(c, prepared, all_seeds, jobs, share);
  double sum = 0;
  for (const auto& m : runs) sum += m.request_throughput;
  return sum / double(runs.size());
}

std::string describe_value(const Slo& slo, const std::optional<double>& value) {
  if (!value) return slo.key + " has no value";
  return slo.key + " = " + sig(*value) + unit_of(slo.key);
}

CapacityResult find_replica_capacity(const sim::SimulationConfig& config,
                                     const sim::PreparedDeployment& prepared,
                                     const CapacityOptions& options) {
  SERVESIM_CHECK(options.seeds >= 1, "at least one seed");
  CapacityResult result;
  sim::SimulationConfig base = config;
  base.num_replicas = 1;
  std::vector<int> all_seeds;
  for (int s = 0; s < options.seeds; ++s) all_seeds.push_back(s);

  // 1. Saturation throughput.
  if (options.saturation_rps) {
    result.saturation_rps = *options.saturation_rps;
  } else {
    result.saturation_rps =
        saturation_throughput(base, prepared, options.seeds, options.jobs, options.share);
    result.simulations += options.seeds;
  }
  if (!(result.saturation_rps > 0)) {
    result.reason =
        "no request completed even when all were sent at once (check --max-model-len "
        "against the request lengths)";
    return result;
  }

  // Pruning: asked before each simulation from here on (the per-seed searches run side by side,
  // hence the atomic); once true, every probe fails at once without a run.
  std::atomic<bool> stopped{false};
  auto stop = [&] {
    if (!stopped.load() && options.abandon && options.abandon(result.saturation_rps)) {
      stopped = true;
    }
    return stopped.load();
  };
  if (stop()) {
    result.abandoned = true;
    return result;
  }

  // 2. Joint bisection (mean over seeds). Every probe is remembered for the per-seed searches.
  std::map<double, SloEvaluation> evaluated;
  auto probe = [&](double rate) {
    if (stop()) return false;
    sim::SimulationConfig c = base;
    c.workload.request_rate = rate;
    const auto runs = run_seeds(c, prepared, all_seeds, options.jobs, options.share);
    result.simulations += static_cast<int64_t>(runs.size());
    SloEvaluation e = evaluate_slos(runs, options.slos);
    evaluated[rate] = e;
    result.probes.push_back({rate, e});
    return e.pass;
  };
  const double lo = result.saturation_rps * options.low_load_fraction;
  const double hi = result.saturation_rps;
  const Bisection b = bisect_max_passing(lo, hi, options.rel_tol, probe);
  if (stopped.load()) {
    result.abandoned = true;
    return result;
  }

  if (b.low_fails) {
    const SloEvaluation& e = evaluated.at(lo);
    std::string failing;
    for (size_t i = 0; i < options.slos.size(); ++i) {
      const auto& m = e.mean[i];
      if (m && options.slos[i].holds(*m)) continue;
      if (!failing.empty()) failing += "; ";
      failing += options.slos[i].text() + " (" + describe_value(options.slos[i], m) + ")";
    }
    result.reason = "cannot meet the SLOs at any load: even at " + sig(lo) + " req/s (" +
                    fmt(100 * options.low_load_fraction, 0) + "% of its " +
                    sig(result.saturation_rps) +
                    " req/s saturation throughput, no queueing) the mean over " +
                    std::to_string(options.seeds) + " seeds misses " + failing;
    // For TPOT/ITL SLOs, the floor a faster engine could not beat on this hardware.
    bool per_token = false;
    for (const Slo& s : options.slos) {
      per_token |=
          s.key.find("_tpot_") != std::string::npos || s.key.find("_itl_") != std::string::npos;
    }
    if (per_token && prepared.ideal_cost) {
      models::BatchShape d;
      d.decode_seqs = 1;
      d.decode_context_tokens = config.workload.random_input_len;
      d.sampled_seqs = 1;
      result.reason += "; one decode step on ideal hardware (100% of peak) takes " +
                       fmt(prepared.ideal_cost->estimate(d).total_s * 1e3, 2) + " ms";
    }
    return result;
  }
  result.feasible = true;
  result.max_rate = b.max_pass;
  result.min_failing_rate = b.min_fail;
  if (b.high_passes) {
    result.capped_at_saturation = true;
    result.binding = "saturation";
  } else {
    const SloEvaluation& e = evaluated.at(b.min_fail);
    result.binding = e.worst >= 0 ? options.slos[static_cast<size_t>(e.worst)].text() : "";
  }

  // 3. Per-seed capacities, each from the bracket its own results at the joint probes give. The
  // seeds' searches are independent: they run side by side, each into its own slot.
  result.per_seed_max_rate.assign(static_cast<size_t>(options.seeds), 0.0);
  std::vector<int64_t> seed_simulations(static_cast<size_t>(options.seeds), 0);
  for_each_seed(options.seeds, options.jobs, options.share, [&](int64_t si) {
    const int s = static_cast<int>(si);
    double pass_at = 0, fail_at = std::numeric_limits<double>::infinity();
    for (const auto& [rate, e] : evaluated) {
      if (e.seed_pass(static_cast<size_t>(s), options.slos)) {
        pass_at = std::max(pass_at, rate);
      } else {
        fail_at = std::min(fail_at, rate);
      }
    }
    auto seed_probe = [&](double rate) {
      if (stop()) return false;
      sim::SimulationConfig c = base;
      c.workload.request_rate = rate;
      const auto runs = run_seeds(c, prepared, {s}, 1);
      ++seed_simulations[static_cast<size_t>(s)];
      return evaluate_slos(runs, options.slos).pass;
    };
    // The joint search skipped lo (its first midpoint passed): a seed that failed everywhere it
    // was probed is probed there alone, as the joint probe at lo would have judged it.
    if (pass_at == 0 && evaluated.count(lo) == 0) {
      if (seed_probe(lo)) {
        pass_at = lo;
      } else {
        fail_at = std::min(fail_at, lo);
      }
    }
    double estimate = 0;
    if (pass_at == 0) {
      estimate = 0;  // fails at low load on its own
    } else if (std::isinf(fail_at)) {
      estimate = pass_at;  // passes everywhere probed, saturation included
    } else if (fail_at <= pass_at) {
      estimate = pass_at;  // not monotone on this seed: keep the highest pass seen
    } else {
      estimate = bisect_between(pass_at, fail_at, options.rel_tol, seed_probe).max_pass;
    }
    result.per_seed_max_rate[static_cast<size_t>(s)] = estimate;
  });
  for (const int64_t k : seed_simulations) result.simulations += k;
  result.abandoned = stopped.load();
  return result;
}

}  // namespace servesim::planning
