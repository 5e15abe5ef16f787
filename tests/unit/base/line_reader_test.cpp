// split_csv: the unquoted fast path and the quoted path give the fields RFC 4180 gives.
// LineReader: the line ends and encodings a CSV or JSONL file arrives with.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/line_reader.h"

using servesim::split_csv;
using Fields = std::vector<std::string>;

TEST_CASE("split_csv: unquoted rows, empty fields at either end and in the middle", "[csv]") {
  CHECK(split_csv("2023-11-16 18:15:46.6805900,4808,10") ==
        Fields{"2023-11-16 18:15:46.6805900", "4808", "10"});
  CHECK(split_csv("") == Fields{""});
  CHECK(split_csv(",") == Fields{"", ""});
  CHECK(split_csv("a,,b,") == Fields{"a", "", "b", ""});
  CHECK(split_csv(",a") == Fields{"", "a"});
}

TEST_CASE("split_csv: quoted fields keep commas, a doubled quote is one quote", "[csv]") {
  CHECK(split_csv(R"("a,b",c)") == Fields{"a,b", "c"});
  CHECK(split_csv(R"(x,"say ""hi""",)") == Fields{"x", R"(say "hi")", ""});
  CHECK(split_csv(R"("")") == Fields{""});
}

TEST_CASE("split_csv into a reused vector: a shorter row after a longer one has only its fields",
          "[csv]") {
  Fields out;
  split_csv("1,2,3,4", out);
  CHECK(out == Fields{"1", "2", "3", "4"});
  split_csv("5,6", out);
  CHECK(out == Fields{"5", "6"});
  split_csv(R"("7,8",9,10)", out);
  CHECK(out == Fields{"7,8", "9", "10"});
  split_csv("", out);
  CHECK(out == Fields{""});
}

namespace {

// The lines LineReader returns for a file holding `bytes`.
std::vector<std::string> lines_of(const std::string& bytes) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("servesim_line_reader_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path, std::ios::binary) << bytes;
  servesim::LineReader reader(path, "--trace");
  std::vector<std::string> out;
  std::string line;
  while (reader.next(line)) out.push_back(line);
  CHECK(reader.line_number() == static_cast<int64_t>(out.size()));
  std::filesystem::remove(path);
  return out;
}

std::string error_of(const std::string& bytes) {
  try {
    lines_of(bytes);
  } catch (const servesim::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("LineReader: LF, CRLF and a lone CR each end a line, as pandas and Python read them",
          "[csv]") {
  const Fields want = {"a,b", "1,2", "3,4"};
  CHECK(lines_of("a,b\n1,2\n3,4\n") == want);
  CHECK(lines_of("a,b\r\n1,2\r\n3,4\r\n") == want);
  CHECK(lines_of("a,b\r1,2\r3,4\r") == want);    // CR only: was one line holding the whole file
  CHECK(lines_of("a,b\r\n1,2\r3,4\n") == want);  // mixed
  CHECK(lines_of("a,b\n1,2\n3,4") == want);      // no end on the last line
  // Empty lines stay lines ("\r\r" is two line ends, "\r\n" one); an empty file has none.
  CHECK(lines_of("a\r\rb") == Fields{"a", "", "b"});
  CHECK(lines_of("a\n\nb\r\n") == Fields{"a", "", "b"});
  CHECK(lines_of("").empty());
  CHECK(lines_of("\n") == Fields{""});
}

TEST_CASE("LineReader: a CRLF split by the 64 KiB read block is one line end", "[csv]") {
  // Line 1 is 65535 bytes + '\r' so that the '\n' is the first byte of the second block.
  const std::string first(65535, 'x');
  const Fields got = lines_of(first + "\r\nsecond\r\nthird");
  REQUIRE(got.size() == 3);
  CHECK(got[0] == first);
  CHECK(got[1] == "second");
  CHECK(got[2] == "third");
  // A line longer than a block is returned whole.
  const std::string longer(200000, 'y');
  CHECK(lines_of(longer + "\nz") == Fields{longer, "z"});
}

TEST_CASE(
    "LineReader: a UTF-8 byte-order mark is skipped, UTF-16/32 and binary data are refused "
    "by name",
    "[csv]") {
  CHECK(lines_of("\xEF\xBB\xBF"
                 "arrival_s,prompt_tokens\n1,2\n") == Fields{"arrival_s,prompt_tokens", "1,2"});
  // Only at the start of the file: elsewhere it is content.
  CHECK(lines_of("a\n\xEF\xBB\xBF"
                 "b\n")[1] ==
        "\xEF\xBB\xBF"
        "b");
  CHECK_THAT(error_of(std::string("\xFF\xFE"
                                  "a\0,\0b\0\n\0",
                                  10)),
             Catch::Contains(":1: the file is UTF-16 text"));
  CHECK_THAT(error_of(std::string("\xFE\xFF\0a", 4)), Catch::Contains("UTF-16"));
  CHECK_THAT(error_of(std::string("\xFF\xFE\0\0a\0\0\0", 8)), Catch::Contains("UTF-32"));
  CHECK_THAT(error_of(std::string("\x1f\x8b\x08\0\0\0", 6)),
             Catch::Contains(":1: binary data (a NUL byte at column 4)"));
  CHECK_THAT(error_of(std::string("a,b\n1,\0\n", 8)), Catch::Contains(":2: binary data"));
}
