#include "sim/planning/plan_report.h"

#include <iomanip>
#include <optional>
#include <sstream>

#include "sim/base/number_format.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/planning/csv_cell.h"
#include "sim/planning/error_band.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

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

std::string headroom_text(const PlanOptions& options) {
  if (options.headroom == 0) return "with no headroom (--headroom 0)";
  return "with " + short_number(options.headroom * 100) + "% headroom (verified at " +
         short_number(options.target_qps * (1 + options.headroom)) + " req/s)";
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
  const std::string load = short_number(options.target_qps) + " req/s " + headroom_text(options);
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
  if (c.price_per_gpu_hour > 0) s += "; $" + fixed_number(c.cost_per_hour, 2) + "/h";
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
                                   : fixed_number(it->second.mean, it->second.mean < 100 ? 1 : 0);
  };
  std::string unnamed;
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"p99_ttft_ms", "P99 TTFT"}, {"p99_tpot_ms", "P99 TPOT"}, {"p99_e2el_ms", "P99 E2E"}}) {
    bool named = false;
    for (const Slo& s : options.slos) named = named || s.key == key;
    if (!named) unnamed += (unnamed.empty() ? "" : ", ") + name;
  }
  return "At the answer, " + short_number(options.target_qps) + " req/s (mean over " +
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
    // The stability bound's GPUs and cost: no verification could give fewer (plan_prune.h).
    o["bound_gpus"] = c.bound_gpus > 0 ? json(c.bound_gpus) : json(nullptr);
    o["bound_cost_per_hour_usd"] =
        c.bound_gpus > 0 && c.price_per_gpu_hour > 0 ? json(c.bound_cost_per_hour) : json(nullptr);
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
  out << "Plan: " << short_number(options.target_qps) << " req/s";
  if (options.headroom > 0) {
    out << " (+" << short_number(options.headroom * 100) << "% headroom: clusters verified at "
        << short_number(load) << " req/s)";
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
               ? fixed_number(c.at_target.at(k).mean, c.at_target.at(k).mean < 100 ? 1 : 0)
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
        fixed_number(c.capacity.max_rate, c.capacity.max_rate < 10 ? 2 : 1).c_str(),
        c.capacity.binding.c_str(), (ms(c, "p50_ttft_ms") + "/" + ms(c, "p99_ttft_ms")).c_str(),
        (ms(c, "p50_tpot_ms") + "/" + ms(c, "p99_tpot_ms")).c_str(), ms(c, "p99_e2el_ms").c_str(),
        c.price_per_gpu_hour > 0 ? fixed_number(c.cost_per_hour, 2).c_str() : "-",
        c.usd_per_million_output_tokens > 0
            ? fixed_number(c.usd_per_million_output_tokens, 2).c_str()
            : "-",
        fixed_number(c.output_tokens_per_s_per_gpu, 0).c_str(), c.basis.label.c_str());
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
      << short_number(options.target_qps) << " req/s, mean over seeds.\n";
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
        return it == best.at_target.end()
                   ? std::string("-")
                   : fixed_number(it->second.mean, it->second.mean < 100 ? 1 : 0);
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
