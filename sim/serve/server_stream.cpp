// Server's stream writer (server_impl.h): an SSE stream's chunks, each sent when its token is due
// in wall time, and the lateness of every send.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/serve/server_impl.h"

namespace servesim::serve {
namespace {

bool write_event(httplib::DataSink& sink, const std::string& data) {
  const std::string event = "data: " + data + "\n\n";
  return sink.write(event.data(), event.size());
}

}  // namespace

bool Server::Impl::stream(int64_t id, const CompletionRequest& r, const ResponseIds& ids,
                          httplib::DataSink& sink) {
  // The client went away: vLLM's API server aborts the request in the engine
  // (AsyncLLM.abort), which frees it at the next step boundary.
  auto disconnected = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      engine.abort(id);
      submitted = true;  // the engine thread applies it now
    }
    engine_cv.notify_one();
    std::lock_guard<std::mutex> s(stats_mu);
    ++disconnects;
    return false;
  };
  if (r.endpoint == Endpoint::kChat &&
      !write_event(sink, role_chunk(ids, r.include_usage).dump())) {
    return disconnected();
  }
  int64_t sent = 0;
  std::vector<SimTime> times;
  while (sent < r.max_tokens) {
    times.clear();
    SimTime cut = SimTime::max();  // its replica's crash (--replica-outage), if it had one
    {
      std::unique_lock<std::mutex> lock(mu);
      auto ready = [&] {
        engine.token_times(id, sent, &times);
        return !times.empty() || stopping || engine.finished(id);
      };
      if (!ready()) {
        // Woken by the engine thread when a token past `sent` is produced (wake_streams).
        StreamWait wait;
        wait.sent = sent;
        stream_waits.emplace(id, &wait);
        wait.cv.wait(lock, ready);
        stream_waits.erase(id);
      }
      if (engine.finished(id) && engine.record(id).failed) cut = engine.cut_time(id);
    }
    if (times.empty() && cut == SimTime::max()) return false;  // shutting down: cut the stream
    for (SimTime t : times) {
      if (t > cut) break;
      send_at(wall_of(t + offset));
      ++sent;
      const bool last = sent == r.max_tokens;
      if (!write_event(sink,
                       token_chunk(r.endpoint, ids, kFillerToken, last, r.include_usage).dump())) {
        return disconnected();
      }
    }
    if (cut != SimTime::max()) {
      // Its replica crashed: the proxy resets the stream then, without [DONE].
      std::this_thread::sleep_until(std::max(wall_of(cut), Clock::now()));
      count_outage_failure();
      return false;
    }
  }
  if (r.include_usage &&
      !write_event(sink, usage_chunk(r.endpoint, ids, r.prompt_tokens, sent).dump())) {
    return disconnected();
  }
  if (!write_event(sink, "[DONE]")) return disconnected();
  sink.done();
  return true;
}

void Server::Impl::send_at(Clock::time_point due) {
  std::this_thread::sleep_until(due);
  const double late = std::chrono::duration<double>(Clock::now() - due).count();
  std::lock_guard<std::mutex> s(stats_mu);
  lateness.observe(std::max(0.0, late));
}

}  // namespace servesim::serve
