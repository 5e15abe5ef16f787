// FrontEnd: the API server of one vLLM replica as a single-server FIFO queue.
//
// vLLM's OpenAI server is one asyncio process in front of the engine: it parses and tokenises
// every request before handing it to the engine core, and detokenises and streams every output
// (vllm/entrypoints/openai/serving_completion.py, vllm/v1/engine/async_llm.py with its
// output_handler loop). When hundreds of requests arrive at once (`--request-rate inf`) they wait
// for that one process in turn, which is what makes TTFT grow with the position in the burst.
//
// Model: each request needs
//   S = per_request_s + per_prompt_token_s · prompt + per_output_token_s · output
// of front-end time, served first-come first-served by one server; the request reaches the engine
// when its service ends. The output term stands for the detokenisation and streaming work the
// same process does for that request: it is charged when the request enters (so the queue carries
// the request's whole load), not spread over its stream — a simplification said in
// docs/semantics.md. With every cost 0 (the default) the front end forwards at once and adds
// no event: results are identical to a run without it.
//
// With Poisson arrivals and equal lengths it is an M/D/1 queue: mean wait W = ρ·S / (2(1 − ρ)),
// ρ = λS (Pollaczek–Khinchine), which tests/fidelity checks.
#ifndef SERVESIM_SIM_CLUSTER_FRONT_END_H_
#define SERVESIM_SIM_CLUSTER_FRONT_END_H_

#include <cstdint>
#include <deque>

#include "sim/calibration/profile.h"
#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"
#include "workloads/request_spec.h"

namespace servesim::sim {

struct FrontEndCosts {
  double per_request_s = 0;       // parsing, request setup, HTTP
  double per_prompt_token_s = 0;  // tokenisation
  double per_output_token_s = 0;  // detokenisation and streaming

  bool empty() const {
    return per_request_s == 0 && per_prompt_token_s == 0 && per_output_token_s == 0;
  }
  // S in seconds for one request.
  double service_s(int64_t prompt_tokens, int64_t output_tokens) const {
    return per_request_s + per_prompt_token_s * static_cast<double>(prompt_tokens) +
           per_output_token_s * static_cast<double>(output_tokens);
  }
  // frontend_per_request_s, frontend_per_prompt_token_s, frontend_per_output_token_s of a
  // calibration profile (absent = 0).
  static FrontEndCosts from_calibration(const calibration::Calibration& c);
};

class FrontEnd : public engine::EventHandler {
 public:
  // `replica` receives the requests when their front-end service ends; it must outlive this.
  FrontEnd(const FrontEndCosts& costs, Replica* replica);

  // A request reaches the API server now.
  void send(engine::Simulator& sim, const workloads::RequestSpec& spec);
  void on_event(engine::Simulator& sim, int64_t tag) override;

  int64_t served() const { return served_; }
  int64_t queued() const { return static_cast<int64_t>(queue_.size()); }  // not yet at the engine
  int64_t total_wait_ns() const { return total_wait_ns_; }  // Σ (service start − arrival)
  int64_t busy_ns() const { return busy_ns_; }              // Σ service times

 private:
  struct Queued {
    workloads::RequestSpec spec;
    SimTime arrived;
  };
  void start_service(engine::Simulator& sim);

  FrontEndCosts costs_;
  Replica* replica_;
  std::deque<Queued> queue_;  // front = in service when busy_
  bool busy_ = false;
  int64_t served_ = 0;
  int64_t total_wait_ns_ = 0;
  int64_t busy_ns_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_FRONT_END_H_
