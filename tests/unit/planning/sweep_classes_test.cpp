// `sweep --workload FILE`: the per-class columns CLASS/<column> of every point are present and
// equal what `simulate` reports for that class at the same rate (docs/workloads.md, "Workload
// classes").
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/cli.h"

namespace servesim::planning {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kChatRag = std::string(SERVESIM_REALDATA_DIR) + "/../workloads/chat_rag.json";

json cli_json(const std::vector<std::string>& args, const fs::path& file) {
  std::ostringstream out, err;
  const int code = app::run_cli(args, out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  std::ifstream in(file);
  return json::parse(in);
}

TEST_CASE("sweep --workload: CLASS/<column> per point equal simulate's classes at that rate",
          "[planning][sweep][classes]") {
  // In details: chat_rag.json (chat 70 %, rag 30 %), 300 requests, rates 4 and 7 req/s (below the
  // ~8 req/s where one H100 saturates on it, so no point has null latencies), percentiles 50, 99.
  // Expectations:
  //  - the columns list CLASS/<column> for both classes: 4 counts and throughputs + 4 latency
  //    metrics × (mean, median, std, p50, p99) = 24 per class, 48 in all;
  //  - every point has each of them, and each equals the class's value in `simulate`'s result file
  //    at the point's rate exactly: a point is the same simulation (same config and seed), and
  //    the JSON numbers round-trip;
  //  - the classes' counts add up to the point's pooled count.
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_sweep_classes_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> common = {"--workload",           kChatRag, "--num-prompts", "300",
                                           "--metric-percentiles", "50,99"};
  std::vector<std::string> sweep = {"sweep", "--request-rate", "4,7", "--output",
                                    (dir / "sweep.json").string()};
  sweep.insert(sweep.end(), common.begin(), common.end());
  const json s = cli_json(sweep, dir / "sweep.json");
  std::vector<std::string> class_columns;
  for (const json& c : s.at("columns")) {
    const std::string name = c.get<std::string>();
    if (name.find('/') != std::string::npos) class_columns.push_back(name);
  }
  CHECK(class_columns.size() == 48);
  for (const char* k : {"chat/completed", "rag/request_throughput", "chat/p99_ttft_ms",
                        "rag/std_itl_ms", "rag/p50_e2el_ms"}) {
    CHECK(std::find(class_columns.begin(), class_columns.end(), k) != class_columns.end());
  }
  const json& points = s.at("curves").at(0).at("points");
  REQUIRE(points.size() == 2);
  for (const json& p : points) {
    const double rate = p.at("request_rate").get<double>();
    CAPTURE(rate);
    std::vector<std::string> simulate = {
        "simulate",          "--request-rate", rate == 4 ? "4" : "7",
        "--save-result",     "--result-dir",   dir.string(),
        "--result-filename", "sim.json",       "--overwrite"};
    simulate.insert(simulate.end(), common.begin(), common.end());
    const json r = cli_json(simulate, dir / "sim.json");
    const json& classes = r.at("servesim").at("classes");
    REQUIRE(classes.size() == 2);
    double completed = 0;
    for (const json& c : classes) {
      const std::string name = c.at("name").get<std::string>();
      for (const std::string& col : class_columns) {
        if (col.rfind(name + "/", 0) != 0) continue;
        const std::string key = col.substr(name.size() + 1);
        CAPTURE(col);
        REQUIRE(p.contains(col));
        REQUIRE(c.contains(key));
        CHECK(p.at(col).get<double>() == c.at(key).get<double>());
      }
      completed += p.at(name + "/completed").get<double>();
    }
    CHECK(completed == p.at("completed").get<double>());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::planning
