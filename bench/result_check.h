// result_check: a hash of every metric and counter of a simulation result, so that two builds
// whose checks are equal simulated the same thing (the benchmarks' "check" column).
#ifndef SERVESIM_BENCH_RESULT_CHECK_H_
#define SERVESIM_BENCH_RESULT_CHECK_H_

#include <cstddef>
#include <cstdint>

#include "sim/cluster/simulation.h"

namespace servesim::bench {

// FNV-1a over the bytes of the values that a simulation change would move.
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void add(double x) { add(&x, sizeof x); }
  void add(int64_t x) { add(&x, sizeof x); }
};

inline uint64_t result_check(const servesim::sim::SimulationResult& r) {
  Hasher h;
  const auto& m = r.metrics;
  h.add(m.completed);
  h.add(m.failed);
  h.add(m.duration_s);
  h.add(m.max_output_tokens_per_s);
  h.add(m.max_concurrent_requests);
  for (const auto& [name, s] : m.summaries) {
    h.add(name.data(), name.size());
    h.add(s.mean_ms);
    h.add(s.median_ms);
    h.add(s.std_ms);
    for (const auto& [p, v] : s.percentiles_ms) h.add(v);
  }
  for (const auto& s : r.replica_stats) {
    h.add(s.steps);
    h.add(s.busy_ns);
    h.add(s.preemptions);
    h.add(s.prefix_hit_tokens);
    h.add(s.peak_used_blocks);
    h.add(s.ideal_busy_s);
  }
  return h.h;
}

}  // namespace servesim::bench

#endif  // SERVESIM_BENCH_RESULT_CHECK_H_
