// The scheduler-policy registry: vLLM's names give the built-in policies, an unknown name is
// refused by name, and a name is registered once.
#include "sim/replica/scheduler_policy.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sim/base/error.h"
#include "sim/replica/fcfs_policy.h"

namespace servesim::sim {
namespace {

TEST_CASE("the registry makes the built-in policies by vLLM's names",
          "[replica][scheduler_policy]") {
  REQUIRE(make_scheduler_policy("fcfs")->arrival_order());
  REQUIRE_FALSE(make_scheduler_policy("priority")->arrival_order());
  const auto names = scheduler_policy_names();
  REQUIRE(std::find(names.begin(), names.end(), "fcfs") != names.end());
  REQUIRE(std::find(names.begin(), names.end(), "priority") != names.end());
}

TEST_CASE("an unknown scheduler policy is refused with the known names",
          "[replica][scheduler_policy]") {
  try {
    make_scheduler_policy("lifo");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    REQUIRE(what.find("'lifo'") != std::string::npos);
    REQUIRE(what.find("fcfs") != std::string::npos);
    REQUIRE(what.find("priority") != std::string::npos);
  }
}

TEST_CASE("a policy name is registered once", "[replica][scheduler_policy]") {
  REQUIRE_THROWS_AS(
      register_scheduler_policy("fcfs", [] { return std::make_unique<FcfsPolicy>(); }),
      InternalError);
}

}  // namespace
}  // namespace servesim::sim
