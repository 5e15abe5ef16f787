// LineReader: reads a text file one line at a time (streaming: memory independent of the file's
// size), counts lines, and formats errors as "FILE:LINE: what". Plus the small field parsers the
// dataset and trace readers share.
//
// Line ends and encoding as pandas.read_csv and Python's universal newlines read them: "\n",
// "\r\n" (the Azure traces) and a lone "\r" (old Mac and some Excel exports) each end a line, and a
// UTF-8 byte-order mark at the start of the file is skipped (Excel writes one). A UTF-16 or UTF-32
// byte-order mark is refused by name: the readers expect UTF-8 (or ASCII) text.
#ifndef SERVESIM_SIM_BASE_LINE_READER_H_
#define SERVESIM_SIM_BASE_LINE_READER_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

class LineReader {
 public:
  // Throws ConfigError "<flag>: cannot open FILE" when the file cannot be read.
  LineReader(const std::string& path, const std::string& flag);

  // The next line without its end-of-line characters; false at the end of the file.
  // Throws ConfigError naming the encoding when line 1 starts with a UTF-16/32 byte-order mark.
  bool next(std::string& line);
  int64_t line_number() const { return line_; }
  const std::string& path() const { return path_; }

  // Throws ConfigError "FILE:LINE: what".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  // Refills buf_ from the file; false at its end.
  bool fill();

  std::string path_;
  std::ifstream in_;
  int64_t line_ = 0;
  std::string buf_;  // bytes read from the file and not yet returned: [pos_, end_)
  size_t pos_ = 0;
  size_t end_ = 0;
  bool after_cr_ = false;  // the last line ended with '\r': a '\n' right after it belongs to it
};

// Splits a CSV line on commas. Fields may be double-quoted ("a,b" stays one field; "" is a quote).
std::vector<std::string> split_csv(std::string_view line);
// The same into `out` (resized to the field count), reusing its strings' storage.
void split_csv(std::string_view line, std::vector<std::string>& out);

// The fields of a CSV header line. A header that is one field holding ';' or a tab is refused by
// name (a spreadsheet's regional "CSV" or a TSV): otherwise its columns would be reported missing
// although the line names them. Throws ConfigError "FILE:LINE: ...".
std::vector<std::string> split_csv_header(const LineReader& reader, const std::string& line);

// Column index of `name` in a CSV header (exact match after trimming spaces), or -1.
int find_column(const std::vector<std::string>& header, std::string_view name);

// Strict parsers: the whole field must be the number. On failure they call reader.fail naming
// the column, the value and what was expected.
int64_t parse_int_field(const LineReader& reader, std::string_view column, std::string_view text);
double parse_double_field(const LineReader& reader, std::string_view column, std::string_view text);
// Decimal seconds ("4.314579", "12", "1e3") to integer nanoseconds. Plain decimals with at most
// nine fractional digits convert exactly (no binary rounding); anything else through double.
int64_t parse_seconds_ns_field(const LineReader& reader, std::string_view column,
                               std::string_view text);

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_LINE_READER_H_
