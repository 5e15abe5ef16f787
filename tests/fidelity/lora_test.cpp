// LoRA serving end to end (docs/deployment-modes.md, "LoRA"): the KV cache the slots take, the
// effect of max_loras on waiting, loads and the CPU cache, a trace's lora_adapter column, and
// determinism. Every step also checks that its batch holds at most max_loras distinct adapters
// (a SERVESIM_CHECK in the replica, which throws).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

using Catch::Matchers::Contains;

SimulationConfig lora_config(int max_loras, int adapters) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.workload.request_rate = 20;
  c.workload.num_prompts = 600;
  c.workload.random_input_len = 512;
  c.workload.random_output_len = 128;
  c.workload.seed = 1;
  c.engine.lora.enable_lora = true;
  c.engine.lora.max_loras = max_loras;
  c.engine.lora.max_cpu_loras = 2 * max_loras;
  c.workload.num_lora_adapters = adapters;
  return c;
}

nlohmann::json summary(const SimulationConfig& c) {
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  nlohmann::json s = servesim_summary(c, p, r);
  s["mean_ttft_ms"] = r.metrics.summaries.at("ttft").mean_ms;
  return s;
}

TEST_CASE("LoRA end to end: slots take KV blocks, max_loras makes requests wait",
          "[fidelity][lora]") {
  SimulationConfig off = lora_config(1, 0);
  off.engine.lora = LoraConfig{};
  const nlohmann::json base = summary(off);
  const nlohmann::json one = summary(lora_config(1, 16));
  const nlohmann::json eight = summary(lora_config(8, 16));

  // Slots: 1 and 8 of rank 16 take 80 MiB and 640 MiB of Llama-3.1-8B's KV cache (unit test
  // models/lora_shapes_test.cpp: 80 MiB per slot of rank 16), i.e. 40 and 320 blocks of 2 MiB.
  CHECK(one["kv_cache"]["lora_slots_gib_per_gpu"].get<double>() == Approx(80.0 / 1024));
  const int64_t blocks = base["kv_cache"]["num_gpu_blocks"].get<int64_t>();
  CHECK(blocks - one["kv_cache"]["num_gpu_blocks"].get<int64_t>() == Approx(40).margin(1));
  CHECK(blocks - eight["kv_cache"]["num_gpu_blocks"].get<int64_t>() == Approx(320).margin(1));
  CHECK_FALSE(base.contains("lora"));

  // Every request names one of 16 adapters. With one slot, requests of other adapters wait for
  // the running adapter's requests to drain; with eight, far fewer wait.
  const nlohmann::json& l1 = one["lora"];
  const nlohmann::json& l8 = eight["lora"];
  CHECK(l1["requests_with_adapter"] == 600);
  CHECK(l1["waited_requests"].get<int64_t>() > l8["waited_requests"].get<int64_t>());
  CHECK(one["mean_ttft_ms"].get<double>() > eight["mean_ttft_ms"].get<double>());
  CHECK(l1["mean_slot_wait_ms"].get<double>() > 0);
  // Loads: every slot load of a new adapter first reads it; the CPU cache (2·max_loras) holds
  // some of the 16 adapters, so some loads are hits.
  CHECK(l8["slot_loads"].get<int64_t>() >= 16);
  CHECK(l8["storage_loads"].get<int64_t>() >= 16);
  CHECK(l8["storage_loads"].get<int64_t>() <= l8["slot_loads"].get<int64_t>());
  CHECK(l8["basis"]["kernel_cost"] == "roofline (no measured LoRA kernel table)");
  CHECK(l8["basis"]["load_bandwidth"] == "assumed");
}

TEST_CASE("LoRA on with no request naming an adapter, and the same KV blocks, is the base run",
          "[fidelity][lora]") {
  // No adapter in any batch: nothing waits, nothing loads, the kernels see no token. With the KV
  // block count pinned (the slots would take blocks otherwise) every request's times are the
  // base model's, bit for bit.
  SimulationConfig off = lora_config(1, 0);
  off.engine.lora = LoraConfig{};
  off.engine.max_model_len = 8192;
  off.engine.num_gpu_blocks_override = 5000;
  SimulationConfig on = lora_config(4, 0);
  on.engine.max_model_len = 8192;
  on.engine.num_gpu_blocks_override = 5000;
  const SimulationResult a = run_simulation(off, prepare_deployment(off));
  const SimulationResult b = run_simulation(on, prepare_deployment(on));
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    CHECK(a.records[i].first_token == b.records[i].first_token);
    CHECK(a.records[i].last_token == b.records[i].last_token);
  }
}

TEST_CASE("LoRA runs are deterministic", "[fidelity][lora]") {
  const SimulationConfig c = lora_config(2, 10);
  CHECK(summary(c).dump() == summary(c).dump());
}

TEST_CASE("a trace's lora_adapter column names the requests' adapters", "[fidelity][lora]") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("servesim_lora_trace_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream f(path);
    f << "arrival_s,prompt_tokens,output_tokens,lora_adapter\n";
    for (int i = 0; i < 30; ++i) {
      f << 0.1 * i << ",200,20," << (i % 3 == 0 ? "" : i % 3 == 1 ? "sql" : "chat") << "\n";
    }
  }
  SimulationConfig c = lora_config(1, 0);
  c.workload.dataset_name = "trace";
  c.workload.trace = path.string();
  c.workload.trace_format = "csv";
  c.workload.request_rate = std::numeric_limits<double>::infinity();
  const nlohmann::json s = summary(c);
  CHECK(s["lora"]["requests_with_adapter"] == 20);
  CHECK(s["lora"]["storage_loads"].get<int64_t>() >= 2);

  // Without --enable-lora the adapters' requests fail as vLLM's server answers them.
  c.engine.lora = LoraConfig{};
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  int failed = 0;
  for (const auto& rec : r.records) failed += rec.failed;
  CHECK(failed == 20);
  std::filesystem::remove(path);
}

TEST_CASE("LoRA configurations vLLM refuses or servesim does not model are refused by name",
          "[fidelity][lora]") {
  SimulationConfig c = lora_config(4, 8);
  c.engine.lora.max_cpu_loras = 2;
  CHECK_THROWS_WITH(prepare_deployment(c), Contains("--max-cpu-loras") && Contains(">= max_loras"));
  c = lora_config(4, 8);
  c.engine.lora.max_lora_rank = 24;
  CHECK_THROWS_WITH(prepare_deployment(c), Contains("--max-lora-rank: 24"));
  c = lora_config(4, 8);
  c.model = "mixtral-8x7b";
  c.tensor_parallel_size = 2;
  CHECK_THROWS_WITH(prepare_deployment(c), Contains("MoE"));
  c = lora_config(4, 8);
  c.engine.lora.enable_lora = false;
  CHECK_THROWS_WITH(prepare_deployment(c), Contains("--enable-lora"));
}

}  // namespace
}  // namespace servesim::sim
