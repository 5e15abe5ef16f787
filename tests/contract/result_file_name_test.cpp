// Default result file names as vLLM makes them (vllm/benchmarks/serve.py compute_result_filename:
// {backend}-{request_rate}qps[-concurrency{N}]-{model}-{datetime.now():%Y%m%d-%H%M%S}.json), with
// the result's content reproducible under $SOURCE_DATE_EPOCH, and no existing file replaced
// without --overwrite (four runs with a fixed 1970 date in the name must not leave one file).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/metrics/result_writer.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using testing::file_text;
using testing::Outcome;
using testing::run;
using testing::TempDir;

// Sets (or, with nullopt, unsets) an environment variable for the scope; restores it after.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() {
    if (saved_) {
      ::setenv(name_, saved_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

std::string local_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

TEST_CASE("default result name: the wall-clock date as vLLM's, the content's date reproducible",
          "[cli][reliability][outputs]") {
  TempDir d("result_name_wall");
  EnvVar unset("SOURCE_DATE_EPOCH", std::nullopt);
  const std::string before = local_now();
  const Outcome o = run({"simulate", "--num-prompts", "4", "--request-rate", "2.5", "--save-result",
                         "--result-dir", d.path.string()});
  const std::string after = local_now();
  INFO(o.err);
  REQUIRE(o.code == 0);
  REQUIRE(d.names().size() == 1);
  const std::string name = d.names().front();
  std::smatch m;
  REQUIRE(std::regex_match(name, m,
                           std::regex(R"(vllm-2\.5qps-llama-3\.1-8b-([0-9]{8}-[0-9]{6})\.json)")));
  // The name's date is this run's, not 1970's (a sortable format: compare as text).
  CHECK(m[1].str() >= before);
  CHECK(m[1].str() <= after);
  // The content is the same whenever it runs: its "date" is $SOURCE_DATE_EPOCH's, else 1970.
  const nlohmann::json j = nlohmann::json::parse(file_text(d.path / name));
  CHECK(j["date"] == "19700101-000000");
}

TEST_CASE("result files are never replaced without --overwrite", "[cli][reliability][outputs]") {
  TempDir d("result_name_overwrite");
  EnvVar epoch("SOURCE_DATE_EPOCH", "86400");  // 1970-01-02: the same name at every run
  const std::vector<std::string> args = {"simulate",      "--num-prompts", "4",
                                         "--save-result", "--result-dir",  d.path.string()};
  const Outcome first = run(args);
  REQUIRE(first.code == 0);
  const fs::path file = d.path / "vllm-infqps-llama-3.1-8b-19700102-000000.json";
  REQUIRE(d.names() == std::vector<std::string>{file.filename().string()});
  CHECK(nlohmann::json::parse(file_text(file))["date"] == "19700102-000000");
  const std::string text = file_text(file);

  SECTION("the same default name again is refused, naming the file") {
    std::vector<std::string> other = args;
    other.insert(other.end(), {"--seed", "7"});  // another run that would get the same name
    const Outcome again = run(other);
    CHECK(again.code == 2);
    CHECK(again.err == "servesim: error: --save-result: '" + file.string() +
                           "' already exists; expected a new file (--overwrite replaces it)\n");
    CHECK(file_text(file) == text);
    CHECK(d.names().size() == 1);
  }
  SECTION("--overwrite replaces it") {
    std::vector<std::string> other = args;
    other.insert(other.end(), {"--seed", "7", "--overwrite"});
    const Outcome again = run(other);
    INFO(again.err);
    CHECK(again.code == 0);
    CHECK(file_text(file) != text);  // another seed, other numbers
    CHECK(d.names().size() == 1);
  }
  SECTION(
      "an explicit --result-filename that exists is refused too, and replaced with "
      "--overwrite") {
    std::ofstream(d.path / "mine.json") << "keep";
    std::vector<std::string> named = {
        "simulate",      "--num-prompts",     "4",
        "--save-result", "--result-filename", (d.path / "mine.json").string()};
    const Outcome refused = run(named);
    CHECK(refused.code == 2);
    CHECK(refused.err.find("--result-filename: '" + (d.path / "mine.json").string() +
                           "' already exists") != std::string::npos);
    CHECK(file_text(d.path / "mine.json") == "keep");
    named.push_back("--overwrite");
    CHECK(run(named).code == 0);
    CHECK(nlohmann::json::parse(file_text(d.path / "mine.json")).contains("servesim"));
  }
}

TEST_CASE("a result file that appears while the run simulates is not replaced",
          "[cli][reliability][outputs]") {
  // The check before the run cannot see a file another run writes meanwhile: the writer renames
  // into place only if the name is still free (renameat2 RENAME_NOREPLACE).
  TempDir d("result_name_race");
  const std::string path = d / "r.json";
  std::ofstream(path) << "other run";
  CHECK_THROWS_WITH(metrics::write_atomically(
                        path, [](std::ostream& out) { out << "mine"; }, /*replace=*/false),
                    Catch::Contains("already exists"));
  CHECK(file_text(path) == "other run");
  CHECK(d.names() == std::vector<std::string>{"r.json"});  // no temporary left
  // A temporary is removed when the writer's fill throws, too.
  CHECK_THROWS(metrics::write_atomically(
      d / "new.json", [](std::ostream&) { throw ConfigError("interrupted"); }, false));
  CHECK(d.names() == std::vector<std::string>{"r.json"});
  metrics::write_atomically(
      d / "new.json", [](std::ostream& out) { out << "x"; }, false);
  CHECK(file_text(d / "new.json") == "x");
}

}  // namespace
}  // namespace servesim::app
