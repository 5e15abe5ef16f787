// parse_finite_double (sim/base/number_text.h): the one rule by which flags, CSV cells and config
// strings are read as numbers.
#include <catch2/catch.hpp>

#include "sim/base/number_text.h"

namespace servesim {
namespace {

TEST_CASE("parse_finite_double reads the whole text as a finite number", "[base][number_text]") {
  CHECK(parse_finite_double("0") == 0.0);
  CHECK(parse_finite_double("2.5") == 2.5);
  CHECK(parse_finite_double("-1e-3") == -1e-3);
  CHECK(parse_finite_double("1E3") == 1000.0);
  CHECK(parse_finite_double(" 7") == 7.0);  // std::stod skips leading blanks
  // Nothing, something after the number, or not a finite value: refused.
  for (const char* bad : {"", " ", "abc", "5 ", "5abc", "1,5", "inf", "-inf", "Infinity", "nan",
                          "1e400", "-1e400", "--1"}) {
    INFO(bad);
    CHECK_FALSE(parse_finite_double(bad).has_value());
  }
  // The largest finite double still reads (the boundary of the range check).
  CHECK(parse_finite_double("1.7976931348623157e308") == 1.7976931348623157e308);
}

}  // namespace
}  // namespace servesim
