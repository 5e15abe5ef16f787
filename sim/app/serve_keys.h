// The run-config keys (run_config.h's field table) of a served deployment, in one table with a
// column per command that takes them:
//   vllm_serve_flag  a flag of vLLM's own `vllm serve`: a pasted `vllm serve` line may set it
//                    (pasted_commands.h); the other keys of the table are servesim's;
//   servesim_serve   `servesim serve` takes it (a flag or a --config key); the load and report
//                    keys are not its, and the features it does not serve (KV offloading,
//                    speculative decoding) are left out.
#ifndef SERVESIM_SIM_APP_SERVE_KEYS_H_
#define SERVESIM_SIM_APP_SERVE_KEYS_H_

#include <string>
#include <vector>

namespace servesim::app {

struct ServeKey {
  const char* key;
  bool vllm_serve_flag;
  bool servesim_serve;
};

const std::vector<ServeKey>& serve_keys();

bool is_vllm_serve_flag_key(const std::string& key);  // a row with vllm_serve_flag
bool is_servesim_serve_key(const std::string& key);   // a row with servesim_serve

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_SERVE_KEYS_H_
