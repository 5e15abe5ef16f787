// Parsing helpers shared by the readers of measured runs (sim/measured/readers.h): text and CSV
// files, numbers checked into range before a cast, request rates as files write them, and the
// per-request arrays and summary keys of vLLM and SGLang result files. Each throws ConfigError
// naming `where` (a file, a line or a field). Internal to sim/measured; the readers' interface is
// readers.h.
#ifndef SERVESIM_SIM_MEASURED_READER_HELPERS_H_
#define SERVESIM_SIM_MEASURED_READER_HELPERS_H_

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/measured/measured_run.h"

namespace servesim::measured::detail {

namespace fs = std::filesystem;
using nlohmann::json;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The whole file; ConfigError "<path>: cannot open file".
std::string read_text(const fs::path& path);

// Lines without their ends, read as LineReader (sim/base/line_reader.h) reads them: "\n", "\r\n"
// and a lone
// "\r" end a line; a UTF-8 byte-order mark is skipped, a UTF-16/32 one refused by name.
std::vector<std::string> read_lines(const fs::path& path);

// `s` without leading and trailing blanks, '\r' and quotes (CSV and YAML cells).
std::string trim(const std::string& s);

// `text`, all of it, as a finite number; ConfigError "<where>: '<text>' is not a finite number".
double to_double(const std::string& text, const std::string& where);

// An integer setting read as a number (a client flag, a YAML value, a CSV cell): a whole number
// in [lo, hi], so the cast is defined (a double beyond int64's range cast to it is undefined
// behaviour, and 1e300 or -1 read as a concurrency or a seed is not what the file meant).
int64_t whole_number(double v, int64_t lo, int64_t hi, const std::string& where);

// A token count or index read as a number: an integer in [0, 2^31 - 1], so the cast is defined.
int32_t token_count(double v, const std::string& where);

// A request rate as files write it: a number, or "inf" / "Infinity" (also after
// parse_python_json). null = unknown, taken as inf.
double rate_of(const json& v, const std::string& where);

// Per-request arrays shared by vLLM and SGLang result files (seconds).
void read_request_arrays(const json& j, MeasuredRun& run, const std::string& where);

// Copies "<stat>_<metric>_ms" summary keys (stat: mean, median, std, pNN) for `metric` named
// `file_metric` in the file.
void read_summaries(const json& j, MeasuredRun& run, const std::string& file_metric,
                    const std::string& metric);

// The mean input and output lengths of a vLLM or SGLang result saved without per-request arrays:
// its token totals over `completed` (both tools write all three); left at 0 when none completed.
void read_mean_lengths(const json& j, MeasuredRun& run, const std::string& where);

// The cells of a CSV line (split_csv, sim/base/line_reader.h: RFC 4180 quotes, an empty last cell
// after a trailing comma).
std::vector<std::string> split_csv_line(const std::string& line);

// The cells of data line `line` (at = "file:line") of a table whose columns `col` names (from
// csv_columns); ConfigError when it lacks a cell a column points at. The width is the largest
// index + 1, not col.size(): a header naming one column twice maps fewer names than positions.
std::vector<std::string> csv_row(const std::string& line, const std::map<std::string, size_t>& col,
                                 const std::string& at);

// Column name -> index of a CSV header; ConfigError naming `path` for a missing required one.
std::map<std::string, size_t> csv_columns(const std::string& header, const std::string& path,
                                          std::initializer_list<const char*> required);

// The id of the n-th run of a file that holds several: "<path>#<n>".
std::string join_index(const std::string& path, int64_t n);

}  // namespace servesim::measured::detail

#endif  // SERVESIM_SIM_MEASURED_READER_HELPERS_H_
