// Server's engine thread (server_impl.h): the engine advanced to the present, finished requests
// accounted into /metrics, the streams with a token due woken, answered requests released, and
// the wait of a drain.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "sim/serve/server_impl.h"

namespace servesim::serve {

void Server::Impl::engine_loop() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stopping) {
    const SimTime target = std::max(sim_now(), engine.now());
    engine.advance_to(target);
    account_finished();
    tokens_cv.notify_all();
    wake_streams();
    const Clock::time_point wake = wall_of(engine.next_event_time());
    submitted = false;
    engine_cv.wait_until(lock, std::min(wake, Clock::now() + std::chrono::seconds(1)),
                         [&] { return stopping || submitted; });
  }
  tokens_cv.notify_all();
  wake_streams();
}

void Server::Impl::wake_streams() {
  for (const auto& [id, wait] : stream_waits) {
    wake_scratch.clear();
    if (!stopping && !engine.finished(id)) engine.token_times(id, wait->sent, &wake_scratch);
    if (stopping || engine.finished(id) || !wake_scratch.empty()) wait->cv.notify_one();
  }
}

void Server::Impl::account_finished() {
  size_t live = 0;
  std::vector<SimTime> times;
  for (int64_t id : active) {
    if (!engine.finished(id)) {
      active[live++] = id;
      continue;
    }
    const metrics::RequestRecord& rec = engine.record(id);
    if (!rec.completed) {
      // Aborted: the tokens it got were counted as produced (vLLM counts them per step); it
      // is not a success, and vLLM records no latency of a request its client aborted. Cut by
      // a crash: only its tokens up to the crash were produced for a client.
      times.clear();
      engine.token_times(id, 0, &times);
      const SimTime cut = engine.cut_time(id);
      while (!times.empty() && times.back() > cut) times.pop_back();
      if (!times.empty()) aborted_prompt_tokens += rec.prompt_tokens;
      aborted_output_tokens += static_cast<int64_t>(times.size());
      side_done(id);
      continue;
    }
    ++completed;
    completed_prompt_tokens += rec.prompt_tokens;
    completed_output_tokens += rec.output_tokens;
    ttft.observe((rec.first_token + offset - rec.arrival).seconds());
    e2e.observe((rec.last_token + offset - rec.arrival).seconds());
    times.clear();
    engine.token_times(id, 0, &times);
    for (size_t k = 1; k < times.size(); ++k) itl.observe((times[k] - times[k - 1]).seconds());
    side_done(id);
  }
  active.resize(live);
}

void Server::Impl::request_done(int64_t id) {
  std::lock_guard<std::mutex> lock(mu);
  if (--open_requests == 0) drained_cv.notify_all();
  side_done(id);
}

void Server::Impl::side_done(int64_t id) {
  if (half_done.erase(id) > 0) {
    engine.release(id);
  } else {
    half_done.insert(id);
  }
}

void Server::Impl::drain() {
  std::unique_lock<std::mutex> lock(mu);
  auto done = [&] { return stopping || open_requests == 0; };
  if (options.shutdown_drain_timeout > 0) {
    drained_cv.wait_for(lock, std::chrono::duration<double>(options.shutdown_drain_timeout), done);
  } else {
    drained_cv.wait(lock, done);
  }
}

}  // namespace servesim::serve
