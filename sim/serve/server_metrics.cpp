// Server's /metrics (server_impl.h): vLLM's series over the deployment's totals, then servesim's
// own counters.
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "sim/serve/server_impl.h"

namespace servesim::serve {

std::string Server::Impl::metrics_text() {
  std::string out;
  std::lock_guard<std::mutex> lock(mu);
  // Tokens of unfinished requests count as they are produced, as vLLM counts them per step.
  int64_t prompt = completed_prompt_tokens + aborted_prompt_tokens;
  int64_t generated = completed_output_tokens + aborted_output_tokens;
  std::vector<SimTime> times;
  for (int64_t id : active) {
    times.clear();
    engine.token_times(id, 0, &times);
    if (!times.empty()) prompt += engine.record(id).prompt_tokens;
    generated += static_cast<int64_t>(times.size());
  }
  const double total_blocks = static_cast<double>(std::max<int64_t>(1, engine.total_kv_blocks()));
  render_gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.",
               labels, static_cast<double>(engine.num_running()));
  render_gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
               labels, static_cast<double>(engine.num_waiting()));
  render_gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
               labels, static_cast<double>(engine.used_kv_blocks()) / total_blocks);
  render_counter(out, "vllm:prefix_cache_queries",
                 "Prefix cache queries, in terms of number of queried tokens.", labels,
                 static_cast<double>(engine.prefix_queried_tokens()));
  render_counter(out, "vllm:prefix_cache_hits",
                 "Prefix cache hits, in terms of number of cached tokens.", labels,
                 static_cast<double>(engine.prefix_hit_tokens()));
  render_counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
                 labels, static_cast<double>(engine.preemptions()));
  render_counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels,
                 static_cast<double>(prompt));
  render_counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", labels,
                 static_cast<double>(generated));
  // One series per vLLM FinishReason. A request whose client went away is aborted in the
  // engine, but vLLM's OutputProcessor.abort_requests drops its state without counting it, so
  // "abort" stays 0 here as there (servesim:client_disconnects counts them).
  render_counter(out, "vllm:request_success", "Count of successfully processed requests.",
                 labels + ",finished_reason=\"stop\"", 0.0);
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"length\"} " +
         prometheus_number(static_cast<double>(completed)) + "\n";
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"abort\"} 0\n";
  ttft.render(out, "vllm:time_to_first_token_seconds",
              "Histogram of time to first token in seconds.", labels);
  itl.render(out, "vllm:inter_token_latency_seconds",
             "Histogram of inter-token latency in seconds.", labels);
  e2e.render(out, "vllm:e2e_request_latency_seconds",
             "Histogram of e2e request latency in seconds.", labels);
  // What the engine holds (bounded under a flood: LiveEngine::release).
  render_gauge(out, "servesim:engine_retained_requests",
               "Request records the simulated engine holds.", labels,
               static_cast<double>(engine.retained_records()));
  render_gauge(out, "servesim:engine_retained_steps", "Step end times the simulated engine holds.",
               labels, static_cast<double>(engine.retained_steps()));
  {
    std::lock_guard<std::mutex> s(stats_mu);
    lateness.render(out, "servesim:token_send_lateness_seconds",
                    "Wall seconds from a token's due time to its send.", labels);
    render_counter(out, "servesim:client_disconnects",
                   "Streams whose client went away before the end.", labels,
                   static_cast<double>(disconnects));
    render_counter(out, "servesim:rejected_requests",
                   "Requests refused because --max-waiting-requests requests were waiting.", labels,
                   static_cast<double>(rejected));
    render_counter(out, "servesim:injected_failures", "Requests failed by --fail-rate.", labels,
                   static_cast<double>(injected_failures));
    render_counter(out, "servesim:outage_failures",
                   "Requests answered 503 or cut by a --replica-outage.", labels,
                   static_cast<double>(outage_failures));
  }
  return out;
}

void Server::Impl::count_outage_failure() {
  std::lock_guard<std::mutex> s(stats_mu);
  ++outage_failures;
}

}  // namespace servesim::serve
