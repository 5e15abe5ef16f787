#include "tests/fuzz/fuzz_common.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/base/error.h"

namespace servesim::fuzz {
namespace {

// The resource guards (sim/base/resource_limits.h) size from half the machine's memory; libFuzzer
// stops at -rss_limit_mb (4096 in scripts/sanitize.sh). A smaller budget makes an input that asks
// for too much meet the guard's ConfigError, as it would on a smaller machine, instead of the RSS
// limit. An explicit $SERVESIM_MEMORY_BUDGET_MB wins.
[[maybe_unused]] const bool kBudgetSet =
    ::setenv("SERVESIM_MEMORY_BUDGET_MB", "512", /*overwrite=*/0) == 0;

}  // namespace

std::string write_input(const uint8_t* data, size_t size, const std::string& name) {
  namespace fs = std::filesystem;
  static const fs::path dir =
      fs::temp_directory_path() / ("servesim_fuzz_" + std::to_string(::getpid()));
  const fs::path p = dir / name;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p.string();
}

int guarded(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError&) {
  }
  return 0;
}

int run_reader(const uint8_t* data, size_t size, const std::vector<Reader>& readers) {
  if (size < 1 || readers.empty()) return 0;
  const Reader* chosen = &readers.back();
  for (const Reader& r : readers) {
    if (r.key == static_cast<char>(data[0])) {
      chosen = &r;
      break;
    }
  }
  const std::string path = write_input(data + 1, size - 1, chosen->file_name);
  return guarded([&] { chosen->read(path); });
}

void simulate_briefly(sim::SimulationConfig config, int64_t num_prompts) {
  config.workload = workloads::WorkloadConfig{};
  config.workload.num_prompts = num_prompts;
  config.workload.random_input_len = 64;
  config.workload.random_output_len = 16;
  config.max_concurrency = 0;
  config.warmup_requests = 0;
  config.num_replicas = 1;
  const sim::PreparedDeployment prepared = sim::prepare_deployment(config);
  sim::run_simulation(config, prepared);
}

}  // namespace servesim::fuzz
