// sim/base/resource_limits.h: the memory budget and the guard's message.
#include "sim/base/resource_limits.h"

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <string>

namespace servesim {
namespace {

// Sets an environment variable for one scope and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
      had_ = true;
    }
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST_CASE("memory budget: half the machine, or $SERVESIM_MEMORY_BUDGET_MB", "[limits]") {
  {
    ScopedEnv env("SERVESIM_MEMORY_BUDGET_MB", "");
    CHECK(memory_budget_bytes() >= (uint64_t{64} << 20));  // any machine that runs the tests
  }
  ScopedEnv env("SERVESIM_MEMORY_BUDGET_MB", "3");
  CHECK(memory_budget_bytes() == 3u << 20);
  CHECK(max_items_in_memory(1024) == 3 * 1024);
  CHECK_NOTHROW(check_fits_in_memory("--n", 3 * 1024, "items", 1024));
  CHECK_THROWS_WITH(check_fits_in_memory("--n", 3 * 1024 + 1, "items", 1024),
                    Catch::StartsWith("--n: 3073 items would need about 0.00293 GiB, more than "
                                      "this machine can hold (0.00293 GiB budget") &&
                        Catch::EndsWith("expected at most 3072"));
  // Not a positive integer: ignored (the machine's half).
  for (const char* bad : {"0", "-5", "12x", "lots"}) {
    ScopedEnv other("SERVESIM_MEMORY_BUDGET_MB", bad);
    CAPTURE(bad);
    CHECK(memory_budget_bytes() != 3u << 20);
    CHECK(memory_budget_bytes() >= (uint64_t{64} << 20));
  }
}

}  // namespace
}  // namespace servesim
