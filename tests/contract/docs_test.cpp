// Docs are part of the product: every run option must be documented in docs/cli.md.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/run_config.h"
#include "sim/app/run_options.h"

namespace servesim::app {
namespace {

TEST_CASE("every run option appears in docs/cli.md", "[docs]") {
  const auto path =
      std::filesystem::path(SERVESIM_TEST_DATA_DIR).parent_path().parent_path() / "docs" / "cli.md";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  const std::string doc = s.str();
  for (const ConfigField& f : config_fields()) {
    INFO(flag_of(f.key));
    REQUIRE(doc.find("`" + flag_of(f.key)) != std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::app
