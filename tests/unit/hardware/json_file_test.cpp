// parse_json_text (sim/base/json_file.h): the DOM of a valid document, and each refusal — a
// repeated key in one object (at any depth, the first in document order named), malformed text,
// a number beyond double range — with the source named.
#include "sim/base/json_file.h"

#include <catch2/catch.hpp>

#include <string>

namespace servesim {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_text(text, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("parse_json_text: the same DOM as nlohmann's parse for valid text", "[json]") {
  const std::string text =
      R"({"a": 1, "b": {"a": 2, "c": [ {"a": 3}, {"a": 4, "b": 5} ]}, "c": [1.5, true, null]})";
  CHECK(parse_json_text(text, "t.json") == nlohmann::json::parse(text));
  // The same key in sibling or nested objects is not a repeat.
  CHECK(error_of(R"([{"k": 1}, {"k": 2}, {"k": {"k": 3}}])").empty());
}

TEST_CASE("parse_json_text: a repeated key is refused at any depth", "[json][errors]") {
  CHECK(error_of(R"({"seed": 1, "seed": 2})") ==
        "t.json: key 'seed' appears twice in one object; expected each key once");
  // Nested, after the inner object closed and reopened elsewhere; the first repeat is named.
  CHECK(error_of(R"({"x": {"a": 1}, "y": [{"b": 1, "b": 2}], "x": 3})").find("key 'b'") !=
        std::string::npos);
  CHECK(error_of(R"({"x": {"a": 1, "z": {"q": 0}, "a": 2}})").find("key 'a'") != std::string::npos);
}

TEST_CASE("parse_json_text: malformed text and out-of-range numbers", "[json][errors]") {
  CHECK(error_of(R"({"a": )").find("t.json: malformed JSON") == 0);
  CHECK(error_of(R"({"a": 1e400})").find("expected numbers within the range of a double") !=
        std::string::npos);
}

}  // namespace
}  // namespace servesim
