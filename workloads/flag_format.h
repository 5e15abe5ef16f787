// Internal helper: prints flag values the way a user typed them, for ConfigError messages
// ("--random-range-ratio: 1.5 is out of range; ..."), not std::to_string's "1.500000".
#ifndef SERVESIM_WORKLOADS_FLAG_FORMAT_H_
#define SERVESIM_WORKLOADS_FLAG_FORMAT_H_

#include <cmath>
#include <sstream>
#include <string>

namespace servesim::workloads::detail {

// Shortest readable form: 1.5, 0.25, 1e-09, inf, -inf, nan; integers without a decimal point.
inline std::string format_flag_value(double v) {
  if (std::isnan(v)) {
    return "nan";
  }
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

}  // namespace servesim::workloads::detail

#endif  // SERVESIM_WORKLOADS_FLAG_FORMAT_H_
