// Resource guards: refuse, with a clear message, an input that would need more memory than this
// machine has (a KV cache of 1e9 blocks, 1e5 replicas, a measured file claiming 1e15 requests)
// instead of being killed for memory half-way through a run.
#ifndef SERVESIM_SIM_BASE_RESOURCE_LIMITS_H_
#define SERVESIM_SIM_BASE_RESOURCE_LIMITS_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/base/error.h"

namespace servesim {

// Half the machine's physical memory: what one run may plan to use (the rest is for the OS and
// for what a guard does not count). 16 GiB when the OS does not say. $SERVESIM_MEMORY_BUDGET_MB
// (a positive integer) replaces it: for a container or job whose memory limit is below the
// machine's, and for the fuzzers, whose RSS limit is far below it (tests/fuzz).
inline uint64_t memory_budget_bytes() {
  if (const char* env = std::getenv("SERVESIM_MEMORY_BUDGET_MB"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(env, &end, 10);
    if (*end == '\0' && mb > 0 && mb < (uint64_t{1} << 40)) return mb << 20;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{16} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

// The most items of `bytes_each` bytes that fit in the memory budget.
inline int64_t max_items_in_memory(uint64_t bytes_each) {
  return static_cast<int64_t>(memory_budget_bytes() / (bytes_each == 0 ? 1 : bytes_each));
}

// Throws ConfigError "<what>: <count> <items> need about X GiB; ..." when `count` items of
// `bytes_each` bytes exceed the budget. `what` names the flag or file field.
inline void check_fits_in_memory(const std::string& what, int64_t count, const std::string& items,
                                 uint64_t bytes_each) {
  const int64_t most = max_items_in_memory(bytes_each);
  if (count <= most) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                ": %lld %s would need about %.3g GiB, more than this machine can hold (%.3g GiB "
                "budget, half its memory); expected at most %lld",
                static_cast<long long>(count), items.c_str(),
                static_cast<double>(count) * static_cast<double>(bytes_each) / (1u << 30),
                static_cast<double>(memory_budget_bytes()) / (1u << 30),
                static_cast<long long>(most));
  throw ConfigError(what + buf);
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_RESOURCE_LIMITS_H_
