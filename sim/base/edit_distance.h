// Edit distance between names, for "did you mean" suggestions (unknown flags and config keys).
#ifndef SERVESIM_SIM_BASE_EDIT_DISTANCE_H_
#define SERVESIM_SIM_BASE_EDIT_DISTANCE_H_

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace servesim {

// Levenshtein distance: the fewest single-character insertions, deletions and substitutions that
// turn `a` into `b`.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The candidate nearest to `name`, or "" when none is near enough to be a likely typo: within a
// third of the name's length (at least 2 edits), or one that contains the name or that the name
// contains (`num-seqs` -> `max-num-seqs`) when the shorter is at least 4 characters. Ties go to
// the first candidate, so the order of `candidates` decides (stable output).
inline std::string nearest_name(const std::string& name,
                                const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  for (const std::string& c : candidates) {
    const std::string& shorter = c.size() < name.size() ? c : name;
    const std::string& longer = c.size() < name.size() ? name : c;
    if (shorter.size() >= 4 && longer.find(shorter) != std::string::npos) return c;
  }
  return "";
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_EDIT_DISTANCE_H_
