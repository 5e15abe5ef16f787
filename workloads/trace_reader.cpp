#include "workloads/trace_reader.h"
#include "workloads/request_spec.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/line_reader.h"
#include "sim/base/printable.h"

namespace servesim::workloads {
namespace {

using nlohmann::json;

int32_t tokens(const LineReader& r, std::string_view column, int64_t v, int64_t min) {
  if (v < min || v > kMaxTokens) {
    r.fail("column '" + std::string(column) + "' has value " + std::to_string(v) +
           "; expected an integer in [" + std::to_string(min) + ", " + std::to_string(kMaxTokens) +
           "]");
  }
  return static_cast<int32_t>(v);
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fffffffff]" to ns since the epoch (the zone is irrelevant: only
// differences are used).
int64_t parse_datetime_ns(const LineReader& r, std::string_view text) {
  auto bad = [&]() {
    r.fail("column 'TIMESTAMP' has value '" + excerpt(text) +
           "'; expected YYYY-MM-DD HH:MM:SS.fffffff");
  };
  auto num = [&](size_t pos, size_t len) {
    if (pos + len > text.size()) bad();
    int64_t v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (text[i] < '0' || text[i] > '9') bad();
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    bad();
  }
  const int64_t y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  const int64_t h = num(11, 2), mi = num(14, 2), s = num(17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) bad();
  // Nanoseconds since 1970 fit an int64 until April 2262; from 1970 on they are >= 0, so the
  // differences the replay takes cannot overflow either. (Year 1011 overflowed the product below.)
  if (y < 1970 || y > 2261) {
    r.fail("column 'TIMESTAMP' has value '" + excerpt(text) +
           "'; expected a year in [1970, 2261] (times are kept as int64 nanoseconds)");
  }
  int64_t frac_ns = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20 || text.size() > 29) bad();
    const size_t digits = text.size() - 20;
    frac_ns = num(20, digits);
    for (size_t i = digits; i < 9; ++i) frac_ns *= 10;
  }
  const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return secs * 1'000'000'000 + frac_ns;
}

// Shared by the CSV formats: header-named columns, one row per line.
class CsvTrace final : public TraceReader {
 public:
  enum class Time { kDatetime, kSeconds };
  CsvTrace(const std::string& path, const char* format, const char* time_col, Time time,
           const char* prompt_col, const char* output_col, bool skip_failed)
      : reader_(path, "--trace"), time_(time), skip_failed_(skip_failed) {
    std::string line;
    if (!reader_.next(line)) reader_.fail("empty file; expected a CSV header");
    header_ = split_csv_header(reader_, line);
    names_[0] = time_col;
    names_[1] = prompt_col;
    names_[2] = output_col;
    for (int i = 0; i < 3; ++i) {
      cols_[i] = find_column(header_, names_[i]);
      if (cols_[i] < 0) {
        reader_.fail("header '" + excerpt(line) + "' has no column '" + names_[i] +
                     "'; expected the " + format + " columns " + time_col + "," + prompt_col + "," +
                     output_col);
      }
    }
    session_col_ = find_column(header_, "session_id");
    lora_col_ = find_column(header_, "lora_adapter");
  }

  bool has_sessions() const override { return session_col_ >= 0; }
  bool has_lora_adapters() const override { return lora_col_ >= 0; }

  bool next(TraceRow& row) override {
    std::string& line = line_;
    std::vector<std::string>& f = fields_;
    while (reader_.next(line)) {
      if (line.empty()) continue;
      split_csv(line, f);
      if (f.size() != header_.size()) {
        reader_.fail(std::to_string(f.size()) + " fields; expected " +
                     std::to_string(header_.size()) + " as in the header");
      }
      const int64_t t = time_ == Time::kDatetime
                            ? parse_datetime_ns(reader_, f[cols_[0]])
                            : parse_seconds_ns_field(reader_, names_[0], f[cols_[0]]);
      const int64_t out = parse_int_field(reader_, names_[2], f[cols_[2]]);
      if (t < last_ns_) {
        reader_.fail("column '" + std::string(names_[0]) + "' goes back in time (" +
                     excerpt(f[cols_[0]]) +
                     " after an earlier row's later time); expected rows in arrival order");
      }
      last_ns_ = t;
      if (skip_failed_ && out == 0) continue;
      row.arrival_ns = t;
      row.prompt_tokens =
          tokens(reader_, names_[1], parse_int_field(reader_, names_[1], f[cols_[1]]), 1);
      row.output_tokens = tokens(reader_, names_[2], out, 1);
      row.hash_ids.clear();
      if (session_col_ >= 0) row.session = f[static_cast<size_t>(session_col_)];
      if (lora_col_ >= 0) row.lora_adapter = f[static_cast<size_t>(lora_col_)];
      return true;
    }
    return false;
  }

 private:
  LineReader reader_;
  Time time_;
  bool skip_failed_;
  std::vector<std::string> header_;
  std::string line_;  // the current row and its fields, kept to reuse storage
  std::vector<std::string> fields_;
  const char* names_[3] = {};
  int cols_[3] = {};
  int session_col_ = -1;  // the optional session_id column
  int lora_col_ = -1;     // the optional lora_adapter column
  int64_t last_ns_ = std::numeric_limits<int64_t>::min();
};

class MooncakeTrace final : public TraceReader {
 public:
  explicit MooncakeTrace(const std::string& path) : reader_(path, "--trace") {}

  int32_t block_tokens() const override { return 512; }

  bool next(TraceRow& row) override {
    std::string line;
    while (reader_.next(line)) {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      json j;
      try {
        j = json::parse(line);
      } catch (const json::exception& e) {
        reader_.fail(std::string("not a JSON object (") + e.what() + ")");
      }
      if (!j.is_object()) reader_.fail("expected a JSON object");
      auto integer = [&](const char* key, int64_t min) {
        auto it = j.find(key);
        if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < min) {
          reader_.fail(std::string("field '") + key + "' is " +
                       (it == j.end() ? std::string("missing") : excerpt(it->dump())) +
                       "; expected an integer >= " + std::to_string(min));
        }
        return it->get<int64_t>();
      };
      const int64_t t_ms = integer("timestamp", 0);
      if (t_ms > 9'000'000'000'000) reader_.fail("field 'timestamp' is out of range (ms)");
      const int64_t t = t_ms * 1'000'000;
      if (t < last_ns_) {
        reader_.fail("field 'timestamp' goes back in time (" + std::to_string(t_ms) +
                     " ms); expected rows in arrival order");
      }
      last_ns_ = t;
      row.arrival_ns = t;
      row.prompt_tokens = tokens(reader_, "input_length", integer("input_length", 1), 1);
      row.output_tokens = tokens(reader_, "output_length", integer("output_length", 1), 1);
      auto h = j.find("hash_ids");
      if (h == j.end() || !h->is_array())
        reader_.fail("field 'hash_ids' is missing; expected a list");
      row.hash_ids.clear();
      for (const json& id : *h) {
        if (!id.is_number_integer())
          reader_.fail("field 'hash_ids' holds " + excerpt(id.dump()) + "; expected integers");
        row.hash_ids.push_back(id.get<int64_t>());
      }
      const int64_t blocks = (row.prompt_tokens + 511) / 512;
      if (static_cast<int64_t>(row.hash_ids.size()) != blocks) {
        reader_.fail("field 'hash_ids' has " + std::to_string(row.hash_ids.size()) +
                     " ids for input_length " + std::to_string(row.prompt_tokens) +
                     "; expected ceil(input_length / 512) = " + std::to_string(blocks));
      }
      return true;
    }
    return false;
  }

 private:
  LineReader reader_;
  int64_t last_ns_ = 0;
};

// vllm bench serve --save-detailed: whole-document JSON; rows sorted by start time (stable).
class VllmResultTrace final : public TraceReader {
 public:
  explicit VllmResultTrace(const std::string& path) {
    const json j = read_json_file(path, kMaxDataFileBytes);
    auto array = [&](const char* key) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_array()) {
        throw ConfigError(path + ": field '" + key +
                          "' is missing; expected a vllm bench serve result saved with "
                          "--save-detailed (input_lens, output_lens, start_times)");
      }
      return *it;
    };
    const json& in = array("input_lens");
    const json& out = array("output_lens");
    const json& start = array("start_times");
    if (in.size() != out.size() || in.size() != start.size()) {
      throw ConfigError(path + ": input_lens, output_lens and start_times have " +
                        std::to_string(in.size()) + ", " + std::to_string(out.size()) + " and " +
                        std::to_string(start.size()) + " entries; expected equal lengths");
    }
    double t0 = std::numeric_limits<double>::infinity();
    for (const json& s : start) {
      if (!s.is_number())
        throw ConfigError(path + ": start_times holds " + s.dump() + "; expected numbers (s)");
      t0 = std::min(t0, s.get<double>());
    }
    for (size_t i = 0; i < in.size(); ++i) {
      auto count = [&](const json& v, const char* key) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxTokens) {
          throw ConfigError(path + ": " + key + "[" + std::to_string(i) + "] is " + v.dump() +
                            "; expected an integer >= 1");
        }
        return static_cast<int32_t>(v.get<int64_t>());
      };
      TraceRow r;
      r.prompt_tokens = count(in[i], "input_lens");
      r.output_tokens = count(out[i], "output_lens");
      // Same bound as the CSV readers' seconds (sim/base/line_reader.h): the offset must convert to
      // int64 nanoseconds (llround of 1e300 s has no defined value).
      const double offset_s = start[i].get<double>() - t0;
      if (!(offset_s <= 9.0e9)) {
        throw ConfigError(path + ": start_times[" + std::to_string(i) + "] is " + start[i].dump() +
                          ", more than 9e9 s after the earliest start time; expected start times "
                          "within 9e9 s of each other");
      }
      r.arrival_ns = std::llround(offset_s * 1e9);
      rows_.push_back(std::move(r));
    }
    std::stable_sort(rows_.begin(), rows_.end(), [](const TraceRow& a, const TraceRow& b) {
      return a.arrival_ns < b.arrival_ns;
    });
  }

  bool next(TraceRow& row) override {
    if (next_ == rows_.size()) return false;
    row = rows_[next_++];
    return true;
  }

 private:
  std::vector<TraceRow> rows_;
  size_t next_ = 0;
};

}  // namespace

const std::vector<std::string>& trace_format_names() {
  static const std::vector<std::string> names = {"azure",     "mooncake",    "burstgpt", "vidur",
                                                 "splitwise", "vllm-result", "csv"};
  return names;
}

std::unique_ptr<TraceReader> open_trace(const std::string& path, const std::string& format) {
  using T = CsvTrace::Time;
  if (path.empty()) throw ConfigError("--trace: missing; --dataset-name trace needs a trace file");
  if (format == "azure") {
    return std::make_unique<CsvTrace>(path, "azure", "TIMESTAMP", T::kDatetime, "ContextTokens",
                                      "GeneratedTokens", false);
  }
  if (format == "mooncake") return std::make_unique<MooncakeTrace>(path);
  if (format == "burstgpt") {
    return std::make_unique<CsvTrace>(path, "burstgpt", "Timestamp", T::kSeconds, "Request tokens",
                                      "Response tokens", true);
  }
  if (format == "vidur") {
    return std::make_unique<CsvTrace>(path, "vidur", "arrived_at", T::kSeconds,
                                      "num_prefill_tokens", "num_decode_tokens", false);
  }
  if (format == "splitwise") {
    return std::make_unique<CsvTrace>(path, "splitwise", "arrival_timestamp", T::kSeconds,
                                      "prompt_size", "token_size", false);
  }
  if (format == "vllm-result") return std::make_unique<VllmResultTrace>(path);
  if (format == "csv") {
    return std::make_unique<CsvTrace>(path, "csv", "arrival_s", T::kSeconds, "prompt_tokens",
                                      "output_tokens", false);
  }
  std::string list;
  for (const std::string& n : trace_format_names()) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError("--trace-format: \"" + format + "\" is not supported; expected one of " + list);
}

}  // namespace servesim::workloads
