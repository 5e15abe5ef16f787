// Numbers read from text: flag values, CSV cells, strings in config files.
#ifndef SERVESIM_SIM_BASE_NUMBER_TEXT_H_
#define SERVESIM_SIM_BASE_NUMBER_TEXT_H_

#include <cmath>
#include <exception>
#include <optional>
#include <string>

namespace servesim {

// The whole of `text` as a finite double (what std::stod reads: leading blanks, decimal,
// exponent and hex forms), or nullopt when `text` is empty, has anything after the number, or is
// inf or nan. One rule for every reader; each caller words its own error (flag, file, column).
inline std::optional<double> parse_finite_double(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;  // no number at all, or out of double's range
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_NUMBER_TEXT_H_
