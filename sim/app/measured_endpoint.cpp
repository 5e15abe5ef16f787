#include "sim/app/measured_endpoint.h"

#include "sim/app/vllm_flags.h"
#include "sim/base/error.h"

namespace servesim::app {

DeclaredEndpoint take_declared_endpoint(const CLI::App& cmd, const std::string& config_file,
                                        nlohmann::json& overrides) {
  DeclaredEndpoint d;
  if (auto it = overrides.find("endpoint"); it != overrides.end()) {
    if (!it->is_string()) {
      throw ConfigError(config_file + ": 'endpoint' is " + it->dump() +
                        "; expected \"/v1/completions\" or \"/v1/chat/completions\"");
    }
    d = {it->get<std::string>(), "--config " + config_file + " (endpoint)"};
    overrides.erase(it);
  }
  // The flag wins over the file, as every run setting does.
  const CLI::Option* flag = cmd.get_option_no_throw("--endpoint");
  if (flag != nullptr && !flag->results().empty()) d = {flag->results().back(), "--endpoint"};
  if (!d.value.empty() && d.value != "/v1/completions" && d.value != "/v1/chat/completions") {
    throw ConfigError(d.from + ": \"" + d.value +
                      "\" is not modelled; expected /v1/completions or /v1/chat/completions");
  }
  check_chat_backend(cmd, d.value);  // vllm bench serve's rule, with the file's endpoint
  return d;
}

void check_declared_endpoint(const DeclaredEndpoint& declared,
                             const std::vector<measured::MeasuredRun>& runs) {
  if (declared.value.empty()) return;
  for (const measured::MeasuredRun& r : runs) {
    if (r.endpoint.empty()) {
      if (declared.value == "/v1/completions") continue;
      throw ConfigError(declared.from + " " + declared.value + ": " + r.id +
                        " does not record its endpoint and is simulated as /v1/completions (the "
                        "chat template's prompt tokens cannot be declared for it); expected "
                        "/v1/completions or no endpoint");
    }
    const std::string recorded = r.endpoint == "chat" ? "/v1/chat/completions" : "/v1/completions";
    if (recorded == declared.value) continue;
    throw ConfigError(declared.from + " " + declared.value + ": " + r.id + " records " + recorded +
                      " (validate and calibrate read each run's endpoint from its file); "
                      "expected " +
                      recorded + " or no endpoint");
  }
}

std::string declared_endpoint_note(const DeclaredEndpoint& declared,
                                   const std::vector<measured::MeasuredRun>& runs) {
  if (declared.value.empty()) return "";
  size_t unrecorded = 0;
  for (const measured::MeasuredRun& r : runs) unrecorded += r.endpoint.empty();
  const size_t recorded = runs.size() - unrecorded;
  std::string parts;
  if (recorded > 0) parts = std::to_string(recorded) + " record it";
  if (unrecorded > 0) {
    parts += (parts.empty() ? "" : ", ") + std::to_string(unrecorded) +
             " record none (simulated as /v1/completions)";
  }
  return declared.from + " " + declared.value + " agrees with the runs read (" + parts +
         "); each run is simulated with the endpoint its file records";
}

}  // namespace servesim::app
