#include "sim/cluster/router.h"

#include <algorithm>

#include "sim/base/error.h"

namespace servesim::sim {

const std::vector<std::string>& router_policy_names() {
  static const std::vector<std::string> names = {"round-robin", "least-outstanding",
                                                 "prefix-aware"};
  return names;
}

RouterPolicy parse_router_policy(const std::string& name) {
  if (name == "round-robin") return RouterPolicy::kRoundRobin;
  if (name == "least-outstanding") return RouterPolicy::kLeastOutstanding;
  if (name == "prefix-aware") return RouterPolicy::kPrefixAware;
  throw ConfigError("--router: '" + name +
                    "' is not a routing policy; expected round-robin, least-outstanding or "
                    "prefix-aware");
}

std::string router_policy_name(RouterPolicy policy) {
  switch (policy) {
    case RouterPolicy::kRoundRobin:
      return "round-robin";
    case RouterPolicy::kLeastOutstanding:
      return "least-outstanding";
    case RouterPolicy::kPrefixAware:
      return "prefix-aware";
  }
  return "least-outstanding";
}

Router::Router(RouterPolicy policy, std::vector<Replica*> replicas, int64_t balance_threshold)
    : policy_(policy),
      replicas_(std::move(replicas)),
      balance_threshold_(balance_threshold),
      sent_(replicas_.size(), 0),
      chain_blocks_held_(replicas_.size(), 0) {
  SERVESIM_CHECK(!replicas_.empty(), "a router needs at least one replica");
  for (size_t i = 0; i < replicas_.size(); ++i) {
    SERVESIM_CHECK(replicas_[i]->id() == static_cast<int32_t>(i), "replica ids must be 0..N-1");
  }
}

void Router::set_down(int32_t replica, bool down) {
  SERVESIM_CHECK(replica >= 0 && replica < static_cast<int32_t>(replicas_.size()),
                 "no such replica");
  down_.resize(replicas_.size(), 0);
  char& d = down_[static_cast<size_t>(replica)];
  if ((d != 0) == down) return;
  d = down ? 1 : 0;
  num_down_ += down ? 1 : -1;
}

int32_t Router::least_outstanding() const {
  int32_t best = -1;
  int64_t best_load = 0;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (is_down(static_cast<int32_t>(i))) continue;
    const int64_t load = replicas_[i]->outstanding();
    if (best < 0 || load < best_load) {  // strict: ties keep the lowest id
      best = static_cast<int32_t>(i);
      best_load = load;
    }
  }
  return best;
}

int32_t Router::choose(const workloads::RequestSpec& spec) {
  const int64_t n = static_cast<int64_t>(replicas_.size());
  switch (policy_) {
    case RouterPolicy::kRoundRobin: {
      auto r = static_cast<int32_t>(next_rr_++ % n);
      while (is_down(r)) r = static_cast<int32_t>(next_rr_++ % n);
      return r;
    }
    case RouterPolicy::kLeastOutstanding:
      return least_outstanding();
    case RouterPolicy::kPrefixAware: {
      const int32_t least = least_outstanding();
      if (spec.prefix_chain != nullptr) return choose_by_chain(*spec.prefix_chain, least);
      if (spec.prefix_group < 0) return least;
      std::vector<int32_t>& holders = holders_[spec.prefix_group];
      int32_t best = -1;
      for (int32_t h : holders) {
        if (is_down(h)) continue;
        if (best < 0 || replicas_[h]->outstanding() < replicas_[best]->outstanding() ||
            (replicas_[h]->outstanding() == replicas_[best]->outstanding() && h < best)) {
          best = h;
        }
      }
      if (best >= 0 &&
          replicas_[best]->outstanding() <= replicas_[least]->outstanding() + balance_threshold_) {
        return best;
      }
      if (std::find(holders.begin(), holders.end(), least) == holders.end()) {
        holders.push_back(least);
      }
      return least;
    }
  }
  return 0;
}

int32_t Router::choose_by_chain(const std::vector<uint64_t>& chain, int32_t least) {
  // Longest match: walk the chain while some replica holds every block so far.
  std::vector<int32_t> best;  // the replicas with the longest match
  size_t matched = 0;         // its length in blocks
  for (size_t j = 0; j < chain.size(); ++j) {
    auto it = chain_holders_.find(chain[j]);
    if (it == chain_holders_.end()) break;
    std::vector<int32_t> next;
    for (int32_t h : it->second) {
      if (j == 0 || std::find(best.begin(), best.end(), h) != best.end()) next.push_back(h);
    }
    if (next.empty()) break;
    best = std::move(next);
    matched = j + 1;
  }
  int32_t pick = -1;
  if (static_cast<double>(matched) > kPrefixCacheThreshold * static_cast<double>(chain.size())) {
    for (int32_t h : best) {  // the least-outstanding holder of the match
      if (is_down(h)) continue;
      if (pick < 0 || replicas_[h]->outstanding() < replicas_[pick]->outstanding() ||
          (replicas_[h]->outstanding() == replicas_[pick]->outstanding() && h < pick)) {
        pick = h;
      }
    }
  } else {  // too little of the chain matches: the replica holding the fewest blocks
    pick = -1;
    for (size_t r = 0; r < replicas_.size(); ++r) {
      if (is_down(static_cast<int32_t>(r))) continue;
      if (pick < 0 || chain_blocks_held_[r] < chain_blocks_held_[static_cast<size_t>(pick)]) {
        pick = static_cast<int32_t>(r);
      }
    }
  }
  int32_t chosen = least;
  if (pick >= 0 &&
      replicas_[pick]->outstanding() <= replicas_[least]->outstanding() + balance_threshold_) {
    chosen = pick;
  }
  for (uint64_t key : chain) {
    std::vector<int32_t>& holders = chain_holders_[key];
    if (std::find(holders.begin(), holders.end(), chosen) == holders.end()) {
      holders.push_back(chosen);
      ++chain_blocks_held_[static_cast<size_t>(chosen)];
    }
  }
  return chosen;
}

void Router::send(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  const int32_t r = choose(spec);
  ++sent_[static_cast<size_t>(r)];
  if (!front_ends_.empty()) {
    front_ends_[static_cast<size_t>(r)]->send(sim, spec);
    return;
  }
  replicas_[static_cast<size_t>(r)]->add_request(sim, spec);
}

}  // namespace servesim::sim
