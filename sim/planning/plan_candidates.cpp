#include "sim/planning/plan_candidates.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace servesim::planning {
namespace {

// The candidate `config` on `gpu` at TP `tp` with the --vary point applied, and its label:
// "h100-sxm TP2 max-num-seqs=64", or for a P/D unit "1P h100-sxm TP2 : 2D h100-sxm TP4 ...".
PlanCandidate make_candidate(const sim::SimulationConfig& config, const std::string& gpu, int tp,
                             const VaryPoint& vp, const ApplyVarySettings& apply) {
  PlanCandidate c;
  c.config = config;
  c.config.gpu = gpu;
  c.config.tensor_parallel_size = tp;
  apply(c.config, vp.settings);
  c.vary = vp.settings;
  c.label = gpu + " TP" + std::to_string(tp);
  if (sim::pd_enabled(c.config)) {  // one unit of the P/D pools (plan.h, set_replicas)
    const sim::SimulationConfig& k = c.config;
    auto pool = [&](int n, const char* side, const std::string& g, int t) {
      return std::to_string(n) + side + " " + (g.empty() ? gpu : g) + " TP" + std::to_string(t);
    };
    c.label = pool(k.prefill_replicas, "P", k.prefill_gpu, k.prefill_tp()) + " : " +
              pool(k.decode_replicas, "D", k.decode_gpu, k.decode_tp());
  }
  if (c.config.pipeline_parallel_size > 1) {
    c.label += " PP" + std::to_string(c.config.pipeline_parallel_size);
  }
  if (c.config.data_parallel_size > 1) {
    c.label += " DP" + std::to_string(c.config.data_parallel_size);
  }
  if (c.config.enable_expert_parallel) c.label += " EP";
  if (!vp.label.empty()) c.label += " " + vp.label;
  return c;
}

// `vp` without the knobs of the P/D pools (pd_search.h): an aggregated candidate's settings.
VaryPoint without_pool_knobs(const VaryPoint& vp) {
  static const std::set<std::string> pool_keys = {"prefill_tensor_parallel_size",
                                                  "decode_tensor_parallel_size",
                                                  "prefill_gpu",
                                                  "decode_gpu",
                                                  "kv_transfer_link",
                                                  "pd_local_prefill_threshold"};
  VaryPoint out;
  std::set<std::string> dropped;
  for (const auto& item : vp.settings.items()) {
    if (pool_keys.count(item.key()) > 0) {
      std::string flag = item.key();
      std::replace(flag.begin(), flag.end(), '_', '-');
      dropped.insert(flag);
    } else {
      out.settings[item.key()] = item.value();
    }
  }
  std::istringstream words(vp.label);  // "knob=value knob=value", in axis order
  std::string w;
  while (words >> w) {
    if (dropped.count(w.substr(0, w.find('='))) == 0) {
      out.label += (out.label.empty() ? "" : " ") + w;
    }
  }
  return out;
}

}  // namespace

std::vector<PlanCandidate> plan_candidates(const sim::SimulationConfig& base,
                                           const std::vector<std::string>& gpus,
                                           const std::vector<int>& tps,
                                           const std::vector<VaryPoint>& points,
                                           const std::vector<PdRatio>& ratios,
                                           const ApplyVarySettings& apply) {
  std::vector<PlanCandidate> candidates;
  std::set<std::string> aggregated_seen;
  for (const std::string& gpu : gpus) {
    for (int tp : tps) {
      for (const VaryPoint& vp : points) {
        std::vector<std::pair<sim::SimulationConfig, VaryPoint>> kinds;
        if (ratios.empty()) {
          kinds.push_back({base, vp});
        } else {
          VaryPoint agg = without_pool_knobs(vp);
          if (aggregated_seen.insert(gpu + " " + std::to_string(tp) + " " + agg.settings.dump())
                  .second) {
            kinds.push_back({aggregated_of(base), agg});
          }
          for (const PdRatio& ratio : ratios) kinds.push_back({pd_unit_of(base, ratio), vp});
        }
        for (const auto& [kind, point] : kinds) {
          candidates.push_back(make_candidate(kind, gpu, tp, point, apply));
        }
      }
    }
  }
  return candidates;
}

}  // namespace servesim::planning
