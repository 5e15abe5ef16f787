#include "sim/replica/scheduler_policy.h"

#include <map>
#include <utility>

#include "sim/base/error.h"
#include "sim/replica/fcfs_policy.h"
#include "sim/replica/priority_policy.h"

namespace servesim::sim {
namespace {

std::map<std::string, SchedulerPolicyFactory>& registry() {
  // The built-in policies, by the name EngineConfig::scheduling_policy gives them (vLLM's).
  static std::map<std::string, SchedulerPolicyFactory> policies = {
      {"fcfs", [] { return std::make_unique<FcfsPolicy>(); }},
      {"priority", [] { return std::make_unique<PriorityPolicy>(); }},
  };
  return policies;
}

}  // namespace

std::unique_ptr<SchedulerPolicy> make_scheduler_policy(const std::string& name) {
  const auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const std::string& n : scheduler_policy_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError("no scheduler policy named '" + name + "' (known: " + known + ")");
  }
  return it->second();
}

bool register_scheduler_policy(const std::string& name, SchedulerPolicyFactory factory) {
  SERVESIM_CHECK(registry().count(name) == 0, "scheduler policy '" + name + "' registered twice");
  registry().emplace(name, std::move(factory));
  return true;
}

std::vector<std::string> scheduler_policy_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace servesim::sim
