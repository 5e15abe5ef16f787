#include "workloads/line_reader.h"

#include <charconv>
#include <cmath>
#include <string>

#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/number_text.h"

namespace servesim::workloads {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_value(const LineReader& reader, std::string_view column,
                            std::string_view text, const std::string& expected) {
  reader.fail("column '" + std::string(column) + "' has value '" + std::string(text) +
              "'; expected " + expected);
}

}  // namespace

LineReader::LineReader(const std::string& path, const std::string& flag) : path_(path) {
  check_input_file(path, flag, 0);  // streamed: no size limit
  in_.open(path, std::ios::binary);
  if (!in_) throw ConfigError(flag + ": cannot open '" + path + "'");
}

bool LineReader::next(std::string& line) {
  if (!std::getline(in_, line)) return false;
  ++line_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

void LineReader::fail(const std::string& what) const {
  throw ConfigError(path_ + ":" + std::to_string(line_) + ": " + what);
}

void split_csv(std::string_view line, std::vector<std::string>& out) {
  // Fields are assigned into out's existing strings: a streamed trace reuses their capacity
  // instead of allocating every field of every row.
  size_t n = 0;
  if (line.find('"') == std::string_view::npos) {
    // No quotes (every trace row we know): whole fields between commas, assigned at once.
    for (;;) {
      const size_t comma = line.find(',');
      if (n == out.size()) out.emplace_back();
      out[n++].assign(line.substr(0, comma));
      if (comma == std::string_view::npos) break;
      line.remove_prefix(comma + 1);
    }
    out.resize(n);
    return;
  }
  auto field = [&]() -> std::string& {
    if (n == out.size()) out.emplace_back();
    std::string& f = out[n];
    f.clear();
    return f;
  };
  std::string* f = &field();
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        *f += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        *f += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      ++n;
      f = &field();
    } else {
      *f += c;
    }
  }
  out.resize(n + 1);
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  split_csv(line, out);
  return out;
}

int find_column(const std::vector<std::string>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (trim(header[i]) == name) return static_cast<int>(i);
  }
  return -1;
}

int64_t parse_int_field(const LineReader& reader, std::string_view column, std::string_view text) {
  const std::string_view t = trim(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc() && ptr == t.data() + t.size() && !t.empty()) return v;
  // Some files write integer counts as "12.0".
  const double d = parse_double_field(reader, column, text);
  if (d != std::floor(d) || std::fabs(d) > 9.0e15) bad_value(reader, column, text, "an integer");
  return static_cast<int64_t>(d);
}

double parse_double_field(const LineReader& reader, std::string_view column,
                          std::string_view text) {
  const std::optional<double> v = parse_finite_double(std::string(trim(text)));
  if (!v) bad_value(reader, column, text, "a finite number");
  return *v;
}

int64_t parse_seconds_ns_field(const LineReader& reader, std::string_view column,
                               std::string_view text) {
  const std::string_view t = trim(text);
  // Exact path: [digits][.digits] with at most 9 fractional digits.
  const size_t dot = t.find('.');
  const std::string_view whole = t.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  auto all_digits = [](std::string_view s) {
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (!t.empty() && whole.size() <= 9 && frac.size() <= 9 && all_digits(whole) &&
      all_digits(frac) && !(whole.empty() && frac.empty())) {
    int64_t s = 0;
    for (char c : whole) s = s * 10 + (c - '0');
    int64_t ns = 0;
    for (size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < frac.size() ? frac[i] - '0' : 0);
    return s * 1'000'000'000 + ns;
  }
  const double v = parse_double_field(reader, column, text);
  if (v < 0 || v > 9.0e9) bad_value(reader, column, text, "seconds in [0, 9e9]");
  return std::llround(v * 1e9);
}

}  // namespace servesim::workloads
