// RngStream: a seeded random stream derived from (master seed, stream name).
//
// Every consumer of randomness gets its own named stream, passed explicitly; there is no global
// RNG. Streams with different names are independent, so adding a new consumer never shifts the
// numbers another consumer sees. The generator is std::mt19937_64, whose output sequence the C++
// standard fixes; the distributions below are written out by hand (not std::*_distribution,
// whose algorithms differ between standard libraries) so results are identical everywhere.
#ifndef SERVESIM_SIM_BASE_RNG_H_
#define SERVESIM_SIM_BASE_RNG_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>

namespace servesim {

class RngStream {
 public:
  RngStream(uint64_t master_seed, std::string_view stream_name)
      : gen_(mix(master_seed ^ fnv1a(stream_name))) {}

  // Uniform on [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: safe to take the log of.
  double uniform01_open0() { return 1.0 - uniform01(); }
  // Integer uniform on [lo, hi] inclusive. REQUIRES: lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<int64_t>(gen_());  // full 64-bit range
    // Rejection sampling removes modulo bias.
    const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do {
      x = gen_();
    } while (x >= limit);
    return lo + static_cast<int64_t>(x % span);
  }
  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(uniform01_open0()); }
  // Standard normal (Box-Muller; one value per call keeps the stream stateless).
  double normal() {
    const double u1 = uniform01_open0();
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Gamma(shape, scale) by Marsaglia-Tsang; shape < 1 via the boost u^(1/shape).
  double gamma(double shape, double scale) {
    if (shape < 1.0) {
      const double u = uniform01_open0();
      return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform01_open0();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * scale;
    }
  }
  uint64_t next_u64() { return gen_(); }

 private:
  static constexpr uint64_t fnv1a(std::string_view s) {
    uint64_t h = 1469598103934665603ull;
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
    return h;
  }
  // splitmix64 finaliser: spreads nearby seeds far apart.
  static constexpr uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::mt19937_64 gen_;
};

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_RNG_H_
