// Server: `servesim serve`'s HTTP server — vLLM's OpenAI-compatible API in front of a LiveEngine
// (sim/cluster/live_engine.h) whose clock follows the wall clock.
//
// Clock. Simulated time = (wall time since start) × time_scale. One engine thread advances the
// engine to the present and sleeps until the next simulated event is due (or a request comes).
// A request enters the engine at the simulated time it is received; each of its tokens is sent
// when the simulated step that produces it ends (plus the calibration's client overhead,
// LiveEngine::client_offset), mapped back to wall time. A stream that falls behind (a slow
// client, a busy host) sends its due tokens at once; the lateness is measured (servesim metrics
// below) and does not move the simulation.
//
// Endpoints (vLLM's): POST /v1/completions and /v1/chat/completions (JSON, or SSE with
// "stream": true: one chunk per token, "data: [DONE]" last), GET /v1/models, /health, /version,
// /metrics. Bodies and errors: sim/serve/openai_api.h. /metrics: vLLM's names (prometheus.h) with
// the labels model_name and engine="0" — the deployment's totals — plus servesim's own:
//   servesim:token_send_lateness_seconds  wall time from a token's due time to its send
//   servesim:client_disconnects_total     streams whose client went away before the end
//   servesim:rejected_requests_total      requests refused for --max-waiting-requests
//   servesim:injected_failures_total      requests failed by --fail-rate
//   servesim:outage_failures_total        requests answered 503 or cut by --replica-outage
// Histogram latencies are in simulated seconds (what vLLM would report), lateness in wall seconds.
//
// Limits. --max-waiting-requests N > 0: a request that arrives while N requests wait (in the
// engines' queues and API servers; the engine is first run to the present, so the requests
// received just before count) is refused with 503, or 429 (max_waiting_status; vLLM has no such
// limit; gateways do).
// A client that disconnects mid-stream is seen when a write to it fails (the token after it
// left, or the one after that); its request is then aborted in the engine as vLLM's API server
// aborts it (LiveEngine::abort: it leaves at the next step boundary, its KV blocks freed). A
// non-streaming client that goes away is seen while its handler waits, every 50 ms
// (ClientSocket, client_socket.h), and aborted the same way.
// Faults (docs/serve.md): --replica-outage — a crashed replica's streams are cut at the crash,
// its non-streaming requests and, while no replica is up, every request get a proxy's 503
// (Envoy's bodies); --latency-spike stretches the engine's steps (sim/replica/latency_spikes.h).
// Threads: one engine thread and up to `threads` HTTP workers, started as connections come
// (WorkerPool, worker_pool.h); each open connection holds a worker, so `threads` bounds the
// concurrent streams. bind() raises the descriptor limit (ulimit -n) to the `threads` of every
// server of the process (one per port) plus a margin, and listens with a backlog of
// max(2048, threads) (uvicorn's 2048, as vLLM's API server).
#ifndef SERVESIM_SIM_SERVE_SERVER_H_
#define SERVESIM_SIM_SERVE_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/replica_outages.h"
#include "sim/cluster/simulation.h"
#include "sim/replica/latency_spikes.h"

namespace servesim::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                   // 0 = any free port (Server::port() says which)
  double time_scale = 1.0;           // simulated seconds per wall second
  std::string served_model;          // the model name clients send ("" = --model as given)
  int64_t max_waiting_requests = 0;  // 0 = no limit
  double chars_per_token = 4.0;
  int threads = 4096;  // the most connections open at once (WorkerPool)
  // SIGTERM / SIGINT (vLLM's --shutdown-mode, vllm/entrypoints/launcher.py): "immediate" stops
  // at once, cutting open streams; "drain" first answers every new request 503 (vLLM's
  // ServiceUnavailableMiddleware body; /metrics still answers), lets the requests in flight
  // finish, up to shutdown_drain_timeout wall seconds (0 = no limit), then stops. A second
  // signal during a drain stops at once, as vLLM's does.
  std::string shutdown_mode = "immediate";
  double shutdown_drain_timeout = 0;
  // Fault injection: each valid request fails with this probability, answered at once with an
  // empty HTTP 500 — what vLLM's exception handler (launcher.py) answers when the engine raises
  // for a request (EngineGenerateError) — and never enters the engine. Which requests fail is a
  // function of `seed` and the request's number (0, 1, ...) in arrival order among those not
  // refused before (bad requests, max_waiting_requests): the same seed and order give the same
  // failures.
  double fail_rate = 0;
  uint64_t seed = 0;
  // The status of a request refused for max_waiting_requests: 503 (an overloaded upstream) or
  // 429 (a gateway's rate limit).
  int max_waiting_status = 503;
  // Latency spikes and replica outages (sim/replica/latency_spikes.h,
  // sim/cluster/replica_outages.h), in this port's replica numbers.
  std::vector<sim::LatencySpikes::Window> latency_spikes;
  std::vector<sim::ReplicaOutages::Outage> replica_outages;
};

class Server {
 public:
  // `prepared` must come from `config` and outlive the server. Throws ConfigError for bad
  // options (time scale <= 0, threads < 1, ...) naming the flag.
  Server(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
         const ServeOptions& options);
  ~Server();
  // Binds the listening socket; throws ConfigError naming --host/--port when it cannot, and
  // naming --threads when the descriptor limit cannot hold that many connections.
  void bind();
  int port() const;
  // Serves until stop() (from another thread or a signal watcher). REQUIRES: bind().
  void run();
  void stop();
  // A SIGTERM or SIGINT came: stop(), or begin a drain (ServeOptions::shutdown_mode).
  void on_signal();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_SERVER_H_
