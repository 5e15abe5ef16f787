// printable / excerpt (sim/base/printable.h): what an error message may copy from a file.
#include <catch2/catch.hpp>

#include <string>

#include "sim/base/printable.h"

namespace servesim {
namespace {

TEST_CASE("printable keeps valid UTF-8 text and escapes every byte a terminal would act on",
          "[base][printable]") {
  CHECK(printable("arrival_s,prompt_tokens") == "arrival_s,prompt_tokens");
  CHECK(printable("modèle-日本.csv") == "modèle-日本.csv");    // 2- and 3-byte characters kept
  CHECK(printable("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");  // 4 bytes (U+1F600)
  CHECK(printable("a\tb\rc\nd") == "a\\tb\\rc\\nd");
  CHECK(printable("\x1b[2J") == "\\x1b[2J");  // clear-screen escape
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable("\xC2\x9B") == "\\xc2\\x9b");  // C1 control U+009B (CSI)
  CHECK(printable("\xEF\xBB\xBF"
                  "a") == "\\xef\\xbb\\xbfa");  // the invisible BOM
  // Not UTF-8: a lone continuation byte, a truncated sequence, an overlong form, a surrogate.
  CHECK(printable("\x80") == "\\x80");
  CHECK(printable("\xC3") == "\\xc3");
  CHECK(printable("\xC3(") == "\\xc3(");
  CHECK(printable("\xC0\xAF") == "\\xc0\\xaf");
  CHECK(printable("\xED\xA0\x80") == "\\xed\\xa0\\x80");
  CHECK(printable("\xF4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST_CASE(
    "excerpt keeps at most N bytes, cut on a character boundary, and says how long the "
    "text was",
    "[base][printable]") {
  CHECK(excerpt("short", 80) == "short");
  CHECK(excerpt(std::string(100, 'x'), 10) == std::string(10, 'x') + "... (100 bytes)");
  // "é" is 2 bytes: a cut at byte 2 of "aé..." would split it, so the excerpt stops before it.
  CHECK(excerpt("a\xC3\xA9zzzz", 2) == "a... (7 bytes)");
  // The limit is on the file's bytes: their escapes may be longer.
  CHECK(excerpt(std::string(4, '\0') + "abc", 4) == "\\x00\\x00\\x00\\x00... (7 bytes)");
}

}  // namespace
}  // namespace servesim
