#include "sim/measured/run_assumptions.h"

#include <filesystem>

namespace servesim::measured {

namespace fs = std::filesystem;

std::vector<std::string> run_assumptions(const MeasuredRun& run,
                                         const sim::SimulationConfig& config) {
  std::vector<std::string> out;
  if (run.deployment.engine_version.empty() && !run.deployment.config.contains("vllm_version")) {
    std::string s = "vLLM version: not recorded in the file and not declared; simulated as vLLM " +
                    config.engine.vllm_version +
                    " (its engine defaults, scheduler and benchmark client)";
    if (!run.date.empty()) s += "; the file is dated " + run.date;
    s += "; give --engine-version or a sidecar \"engine_version\" if the server ran another";
    out.push_back(s);
  }
  if (run.format == "vllm-bench") {
    if (run.endpoint.empty()) {
      out.push_back(
          "endpoint: the file records neither \"endpoint_type\" nor \"backend\"; assumed "
          "/v1/completions");
    } else if (run.endpoint == "chat") {
      out.push_back(
          "endpoint: /v1/chat/completions (the file's backend); the chat template's prompt "
          "tokens are not simulated (the lengths are the client's)");
    }
  }
  return out;
}

std::vector<std::string> declared_not_recorded(const MeasuredRun& run) {
  // Recorded: set by the reader from the file itself ("<file>" or "<file> (field)") or from the
  // llm-k8s "<stem>.commands" file beside it.
  const std::string commands = fs::path(run.path).replace_extension(".commands").string();
  auto recorded = [&](const std::string& source) {
    return source == run.path || source.rfind(run.path + " (", 0) == 0 ||
           source.rfind(commands, 0) == 0;
  };
  std::vector<std::string> out;
  for (const char* key : {"model", "gpu", "tensor_parallel_size"}) {
    auto value = run.deployment.config.find(key);
    auto source = run.deployment.source.find(key);
    if (value == run.deployment.config.end() || source == run.deployment.source.end()) continue;
    if (recorded(source->second)) continue;
    const std::string v = value->is_string() ? value->get<std::string>() : value->dump();
    out.push_back(std::string(key) + " " + v + " (from " + source->second + ")");
  }
  return out;
}

}  // namespace servesim::measured
