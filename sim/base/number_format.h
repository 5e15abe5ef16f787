// Numbers written for people: in answers, tables and error messages. (Result files write numbers
// through nlohmann::json; numbers read from text are number_text.h's.)
#ifndef SERVESIM_SIM_BASE_NUMBER_FORMAT_H_
#define SERVESIM_SIM_BASE_NUMBER_FORMAT_H_

#include <iomanip>
#include <sstream>
#include <string>

namespace servesim {

// Rates and counts as a person writes them, 6 significant digits: 100, 2.5, 0.125, 1e+07.
inline std::string short_number(double v) {
  std::ostringstream os;
  os << std::setprecision(6) << v;
  return os.str();
}

// `prec` digits after the point: fixed_number(35.4, 2) = "35.40".
inline std::string fixed_number(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_NUMBER_FORMAT_H_
