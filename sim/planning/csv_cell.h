// One cell of the CSV files that `sweep` and `plan` write (--output *.csv).
#ifndef SERVESIM_SIM_PLANNING_CSV_CELL_H_
#define SERVESIM_SIM_PLANNING_CSV_CELL_H_

#include <string>

namespace servesim::planning {

// `s` as RFC 4180 writes a field: unchanged unless it holds a comma, a double quote or a newline;
// then quoted, with each double quote doubled (a knob value such as a model path may hold any).
inline std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_CSV_CELL_H_
