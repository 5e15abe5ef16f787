// split_csv: the unquoted fast path and the quoted path give the fields RFC 4180 gives.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "workloads/line_reader.h"

using servesim::workloads::split_csv;
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
