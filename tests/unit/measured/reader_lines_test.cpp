// The measured-run readers' lines and CSV cells (sim/measured/reader_helpers.h) come from the
// project's CSV reader (sim/base/line_reader.h): the same line ends, byte-order marks, quoting
// and refusals as the dataset and trace readers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured::detail {
namespace {

using Lines = std::vector<std::string>;

std::filesystem::path write_bytes(const std::string& name, const std::string& bytes) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

TEST_CASE("measured readers: LF, CRLF, lone CR and a UTF-8 byte-order mark give the same lines",
          "[measured][csv]") {
  const Lines want = {"rate,ttft", "1,20", "", "2,25"};
  CHECK(read_lines(write_bytes("servesim_rl_lf.csv", "rate,ttft\n1,20\n\n2,25\n")) == want);
  CHECK(read_lines(write_bytes("servesim_rl_crlf.csv", "rate,ttft\r\n1,20\r\n\r\n2,25\r\n")) ==
        want);
  CHECK(read_lines(write_bytes("servesim_rl_cr.csv", "rate,ttft\r1,20\r\r2,25")) == want);
  CHECK(read_lines(write_bytes("servesim_rl_bom.csv", "\xEF\xBB\xBFrate,ttft\n1,20\n\n2,25\n")) ==
        want);
}

TEST_CASE("measured readers: a UTF-16 file is refused by name, as by the dataset readers",
          "[measured][csv]") {
  const auto p = write_bytes("servesim_rl_utf16.csv", std::string("\xFF\xFE", 2) + "r\0\n\0");
  REQUIRE_THROWS_WITH(read_lines(p), Catch::Contains("servesim_rl_utf16.csv:1: the file is "
                                                     "UTF-16 text") &&
                                         Catch::Contains("save it as CSV UTF-8"));
}

TEST_CASE("measured readers: CSV cells follow RFC 4180 quoting, a trailing comma is an empty cell",
          "[measured][csv]") {
  CHECK(split_csv_line("a,b,") == Lines{"a", "b", ""});
  CHECK(split_csv_line("\"x,y\",2") == Lines{"x,y", "2"});
  CHECK(split_csv_line("") == Lines{""});
}

}  // namespace
}  // namespace servesim::measured::detail
