// Server's lifecycle (server.h; its parts: server_impl.h): the options checked, the listening
// socket bound with its backlog and descriptor budget, run, signals and stop.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "sim/base/error.h"
#include "sim/serve/server_impl.h"
#include "sim/serve/worker_pool.h"

namespace servesim::serve {
namespace {

// A number as a user typed it (0.5, 1e+07), not std::to_string's 0.500000.
std::string text_of(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The listen backlog: uvicorn's default (uvicorn/config.py, Config(backlog=2048)), which vLLM's
// API server runs under, or --threads when larger, so a burst of connects up to the thread budget
// queues instead of being dropped (cpp-httplib 0.11 listens with 5: a burst of a few hundred
// connects overflowed it, TcpExtListenOverflows, and waited for SYN retransmissions, 1 s, 3 s,
// 7 s...). The kernel caps it at net.core.somaxconn.
constexpr int kListenBacklog = 2048;
// How long the kernel holds a connection whose request has not come (TCP_DEFER_ACCEPT) before
// handing it over anyway: cpp-httplib's own wait for a request is 5 s
// (CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND), as uvicorn's timeout_keep_alive under vLLM.
constexpr int kDeferAcceptSeconds = 5;
// File descriptors beyond one per connection: the listening socket, stdio, /proc reads.
constexpr rlim_t kSpareDescriptors = 64;

// Connections the servers of this process may hold together (--port-per-replica: one server
// per port, each with its --threads).
std::mutex descriptor_mu;
rlim_t descriptor_connections = 0;

// Each open connection is a descriptor: raise the soft limit to the connections of every server
// plus a margin, or refuse a budget the hard limit cannot hold.
void reserve_descriptors(int threads) {
  std::lock_guard<std::mutex> lock(descriptor_mu);
  const rlim_t connections = descriptor_connections + static_cast<rlim_t>(threads);
  const rlim_t need = connections + kSpareDescriptors;
  const std::string what = "--threads: " + std::to_string(connections) + " connections" +
                           (connections == static_cast<rlim_t>(threads)
                                ? ""
                                : " (" + std::to_string(threads) + " on each port)") +
                           " need " + std::to_string(need) + " file descriptors";
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need) {
      throw ConfigError(what + "; this process may open at most " + std::to_string(lim.rlim_max) +
                        " (ulimit -Hn): lower --threads or raise the hard limit");
    }
    lim.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      throw ConfigError(what + "; raising ulimit -n failed");
    }
  }
  descriptor_connections = connections;
}

void release_descriptors(int threads) {
  std::lock_guard<std::mutex> lock(descriptor_mu);
  descriptor_connections -= static_cast<rlim_t>(threads);
}

}  // namespace

Server::Impl::Impl(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
                   const ServeOptions& o)
    : options(o),
      engine(config, prepared),
      ttft(ttft_buckets()),
      itl(itl_buckets()),
      e2e(request_latency_buckets()),
      lateness({0.00001, 0.00002, 0.00005, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004,
                0.0005,  0.00075, 0.001,   0.0015, 0.002,   0.003,  0.005,  0.01,
                0.025,   0.05,    0.1,     0.25,   0.5,     1.0}) {
  limits.served_model = o.served_model.empty() ? config.model : o.served_model;
  limits.max_model_len = prepared.engine.max_model_len;
  limits.chars_per_token = o.chars_per_token;
  vllm_version = prepared.engine.vllm_version;
  labels = "engine=\"0\",model_name=\"" + limits.served_model + "\"";
  offset = engine.client_offset();
  if (!o.latency_spikes.empty()) engine.set_latency_spikes(sim::LatencySpikes(o.latency_spikes));
  for (const sim::ReplicaOutages::Outage& outage : o.replica_outages) {
    engine.schedule_outage(outage);
  }
}

Server::Server(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
               const ServeOptions& options) {
  if (!(options.time_scale > 0) || options.time_scale > 1e6) {
    throw ConfigError("--time-scale: " + text_of(options.time_scale) +
                      " is invalid; expected a number in (0, 1e6]");
  }
  if (options.port < 0 || options.port > 65535) {
    throw ConfigError("--port: " + std::to_string(options.port) +
                      " is invalid; expected 0..65535 (0 = any free port)");
  }
  if (options.threads < 1 || options.threads > 16384) {
    throw ConfigError("--threads: " + std::to_string(options.threads) +
                      " is invalid; expected 1..16384");
  }
  if (options.max_waiting_requests < 0) {
    throw ConfigError("--max-waiting-requests: " + std::to_string(options.max_waiting_requests) +
                      " is invalid; expected 0 (no limit) or more");
  }
  if (options.max_waiting_status != 429 && options.max_waiting_status != 503) {
    throw ConfigError("--max-waiting-status: " + std::to_string(options.max_waiting_status) +
                      " is invalid; expected 429 (a gateway's rate limit) or 503 (overloaded)");
  }
  if (!(options.fail_rate >= 0 && options.fail_rate <= 1)) {
    throw ConfigError("--fail-rate: " + text_of(options.fail_rate) +
                      " is invalid; expected a fraction in [0, 1]");
  }
  if (options.shutdown_mode != "immediate" && options.shutdown_mode != "drain") {
    throw ConfigError("--shutdown-mode: \"" + options.shutdown_mode +
                      "\" is invalid; expected immediate or drain");
  }
  if (!(options.shutdown_drain_timeout >= 0) || options.shutdown_drain_timeout > 1e6) {
    throw ConfigError("--shutdown-drain-timeout: " + text_of(options.shutdown_drain_timeout) +
                      " is invalid; expected seconds in [0, 1e6] (0 = no limit)");
  }
  if (!(options.chars_per_token > 0) || options.chars_per_token > 1000) {
    throw ConfigError("--chars-per-token: " + text_of(options.chars_per_token) +
                      " is invalid; expected a number in (0, 1000]");
  }
  impl_ = std::make_unique<Impl>(config, prepared, options);
  const int threads = options.threads;
  impl_->http.new_task_queue = [threads] { return new WorkerPool(static_cast<size_t>(threads)); };
  Impl* impl = impl_.get();
  impl_->http.set_socket_options([impl](socket_t sock) {
    httplib::default_socket_options(sock);
    // Accept a connection once its request's first bytes came: cpp-httplib 0.11 waits for a
    // request by polling every 10 ms (its keep_alive()), and thousands of connections whose
    // requests were still on the way kept both cores busy (~1.4 ms of CPU per second each).
    const int defer_s = kDeferAcceptSeconds;
    setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s);
    impl->listen_fd = sock;
  });
  impl_->http.set_keep_alive_max_count(100000);
  impl_->routes();
}

Server::~Server() {
  stop();
  if (impl_->engine_thread.joinable()) impl_->engine_thread.join();
  if (impl_->drain_thread.joinable()) impl_->drain_thread.join();
  if (impl_->descriptors_reserved) release_descriptors(impl_->options.threads);
}

void Server::bind() {
  Impl& s = *impl_;
  if (!s.descriptors_reserved) {
    reserve_descriptors(s.options.threads);
    s.descriptors_reserved = true;
  }
  if (s.options.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.options.host);
    if (s.bound_port <= 0) throw ConfigError("--host: cannot listen on " + s.options.host);
  } else {
    if (!s.http.bind_to_port(s.options.host, s.options.port)) {
      throw ConfigError("--port: cannot listen on " + s.options.host + ":" +
                        std::to_string(s.options.port) + " (in use, or not an address here)");
    }
    s.bound_port = s.options.port;
  }
  // listen() again on a listening socket only sets its backlog (cpp-httplib's is 5).
  const int backlog = std::max(kListenBacklog, s.options.threads);
  if (s.listen_fd < 0 || ::listen(s.listen_fd, backlog) != 0) {
    throw ConfigError("--port: cannot set the listen backlog of " + s.options.host + ":" +
                      std::to_string(s.bound_port) + " to " + std::to_string(backlog));
  }
}

int Server::port() const { return impl_->bound_port; }

void Server::run() {
  Impl& s = *impl_;
  s.start = Impl::Clock::now();
  s.engine_thread = std::thread([&s] { s.engine_loop(); });
  // 1 before looking at `stopping`, as stop() sets `stopping` before looking at listen_state:
  // a stop() that comes before this point is seen here (no accept loop is started), one after it
  // waits for the loop and ends it (--port-per-replica's second server can start after a SIGTERM).
  s.listen_state = 1;
  bool stopped;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    stopped = s.stopping;
  }
  if (!stopped) s.http.listen_after_bind();
  s.listen_state = 2;
  stop();
  s.engine_thread.join();
  if (s.drain_thread.joinable()) s.drain_thread.join();
}

void Server::on_signal() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.options.shutdown_mode == "drain" && !s.draining && !s.stopping) {
      s.draining = true;
      s.drain_thread = std::thread([this] {
        impl_->drain();
        stop();
      });
      return;
    }
  }
  stop();  // immediate, or a second signal
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    impl_->wake_streams();
  }
  impl_->engine_cv.notify_all();
  impl_->tokens_cv.notify_all();
  impl_->drained_cv.notify_all();
  // cpp-httplib's stop() does nothing until its accept loop runs (is_running()): a signal
  // between run()'s start and the loop's (a SIGTERM just after start, --port-per-replica's
  // second port) was lost, and accept() blocked the exit. run() sets listen_state to 1 before it
  // reads `stopping` (set above): either it sees the stop, or this waits for its loop.
  while (impl_->listen_state == 1 && !impl_->http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

}  // namespace servesim::serve
