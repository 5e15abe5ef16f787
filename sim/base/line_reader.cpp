#include "sim/base/line_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/number_text.h"
#include "sim/base/printable.h"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_value(const LineReader& reader, std::string_view column,
                            std::string_view text, const std::string& expected) {
  reader.fail("column '" + excerpt(column) + "' has value '" + excerpt(text) + "'; expected " +
              expected);
}

}  // namespace

LineReader::LineReader(const std::string& path, const std::string& flag) : path_(path) {
  check_input_file(path, flag, 0);  // streamed: no size limit
  in_.open(path, std::ios::binary);
  if (!in_) throw ConfigError(flag + ": cannot open '" + path + "'");
}

bool LineReader::fill() {
  constexpr size_t kBlock = 64 * 1024;
  buf_.resize(kBlock);
  in_.read(buf_.data(), static_cast<std::streamsize>(kBlock));
  pos_ = 0;
  end_ = static_cast<size_t>(in_.gcount());
  return end_ > 0;
}

bool LineReader::next(std::string& line) {
  line.clear();
  bool any = false;  // a character or a line end was read: there is a line to return
  for (;;) {
    if (pos_ == end_ && !fill()) break;
    if (after_cr_) {  // "\r\n" is one line end, also when a block boundary splits it
      after_cr_ = false;
      if (buf_[pos_] == '\n') {
        ++pos_;
        continue;
      }
    }
    const char* begin = buf_.data() + pos_;
    const char* end = buf_.data() + end_;
    const char* stop = std::find_if(begin, end, [](char c) { return c == '\n' || c == '\r'; });
    line.append(begin, stop);
    any = true;
    pos_ = static_cast<size_t>(stop - buf_.data());
    if (stop != end) {
      after_cr_ = *stop == '\r';
      ++pos_;
      break;
    }
  }
  if (!any) return false;
  ++line_;
  if (line_ == 1) {
    // The byte-order marks of UTF-8 (skipped, as pandas and Python's "utf-8-sig" do) and of
    // UTF-16/32 (refused: the text would be read as bytes with NULs between the characters).
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) {
      line.erase(0, 3);
    } else if (line.rfind(std::string("\xFF\xFE\0\0", 4), 0) == 0 ||
               line.rfind(std::string("\0\0\xFE\xFF", 4), 0) == 0) {
      fail("the file is UTF-32 text (it starts with a UTF-32 byte-order mark); expected UTF-8");
    } else if (line.rfind("\xFF\xFE", 0) == 0 || line.rfind("\xFE\xFF", 0) == 0) {
      fail(
          "the file is UTF-16 text (it starts with a UTF-16 byte-order mark, as Excel's "
          "\"Unicode text\" writes); expected UTF-8: save it as CSV UTF-8");
    }
  }
  // Text has no NUL byte; a compressed or binary file (or UTF-16 without a mark) does.
  const size_t nul = line.find('\0');
  if (nul != std::string::npos) {
    fail("binary data (a NUL byte at column " + std::to_string(nul + 1) +
         "); expected a UTF-8 text file (a compressed trace must be decompressed first)");
  }
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

std::vector<std::string> split_csv_header(const LineReader& reader, const std::string& line) {
  std::vector<std::string> header = split_csv(line);
  if (header.size() == 1) {
    for (const auto& [sep, name] : {std::pair{';', "';'"}, std::pair{'\t', "tabs"}}) {
      if (line.find(sep) != std::string::npos) {
        reader.fail("header '" + excerpt(line) + "' has its columns separated by " + name +
                    "; expected a comma-separated file (CSV)");
      }
    }
  }
  return header;
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

}  // namespace servesim
