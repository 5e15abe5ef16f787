#include "sim/distributed/mpi_executor.h"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/base/error.h"

namespace servesim::distributed {
namespace {

constexpr int kTagJob = 1;     // rank 0 -> worker: int64 job index
constexpr int kTagStop = 2;    // rank 0 -> worker: the loop is over
constexpr int kTagResult = 3;  // worker -> rank 0: an encoded Outcome

// How long a waiting rank sleeps between polls: short next to a simulation (milliseconds), long
// enough that an idle rank costs no CPU.
constexpr auto kPoll = std::chrono::microseconds(50);

enum class Status : uint8_t { kOk = 0, kConfigError = 1, kInternalError = 2, kOtherError = 3 };

// A job's outcome on the wire: int64 index, uint8 status, then the bytes (result or message).
std::string encode(int64_t index, Status status, const std::string& payload) {
  std::string out(sizeof(int64_t) + 1, '\0');
  std::memcpy(out.data(), &index, sizeof index);
  out[sizeof index] = static_cast<char>(status);
  return out + payload;
}

struct Outcome {
  int64_t index = 0;
  Status status = Status::kOk;
  std::string payload;
};

Outcome decode(const std::string& bytes) {
  SERVESIM_CHECK(bytes.size() >= sizeof(int64_t) + 1, "MPI: short job message");
  Outcome o;
  std::memcpy(&o.index, bytes.data(), sizeof o.index);
  o.status = static_cast<Status>(bytes[sizeof o.index]);
  o.payload = bytes.substr(sizeof o.index + 1);
  return o;
}

// Runs compute(i), turning an exception into an error outcome (the type survives the trip).
Outcome run_one(const JobLoop& loop, int64_t i) {
  try {
    return {i, Status::kOk, loop.compute(i)};
  } catch (const ConfigError& e) {
    return {i, Status::kConfigError, e.what()};
  } catch (const InternalError& e) {
    return {i, Status::kInternalError, e.what()};
  } catch (const std::exception& e) {
    return {i, Status::kOtherError, e.what()};
  }
}

[[noreturn]] void rethrow(const Outcome& o) {
  switch (o.status) {
    case Status::kConfigError:
      throw ConfigError(o.payload);
    case Status::kInternalError:
      throw InternalError(o.payload);
    default:
      throw std::runtime_error(o.payload);
  }
}

// Completes a non-blocking request by polling (MPI_Wait would spin a core).
void wait_polled(MPI_Request& request) {
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(kPoll);
  }
}

// Broadcasts `blob` from rank 0 (length first, then the bytes).
void broadcast(std::string& blob) {
  int64_t size = static_cast<int64_t>(blob.size());
  MPI_Request r;
  MPI_Ibcast(&size, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &r);
  wait_polled(r);
  blob.resize(static_cast<size_t>(size));
  // MPI counts are int: send in pieces of at most 1 GiB.
  constexpr int64_t kChunk = int64_t(1) << 30;
  for (int64_t off = 0; off < size; off += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, size - off));
    MPI_Ibcast(blob.data() + off, n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    wait_polled(r);
  }
}

// Every accepted result (and the first error) in one blob: the outcomes, encoded, each
// prefixed by its int64 length.
std::string pack(const std::vector<Outcome>& outcomes) {
  std::string out;
  for (const Outcome& o : outcomes) {
    const std::string e = encode(o.index, o.status, o.payload);
    const int64_t n = static_cast<int64_t>(e.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += e;
  }
  return out;
}

std::vector<Outcome> unpack(const std::string& blob) {
  std::vector<Outcome> out;
  size_t off = 0;
  while (off < blob.size()) {
    int64_t n = 0;
    SERVESIM_CHECK(off + sizeof n <= blob.size(), "MPI: truncated result blob");
    std::memcpy(&n, blob.data() + off, sizeof n);
    off += sizeof n;
    SERVESIM_CHECK(off + size_t(n) <= blob.size(), "MPI: truncated result blob");
    out.push_back(decode(blob.substr(off, size_t(n))));
    off += size_t(n);
  }
  return out;
}

class MpiExecutor final : public JobExecutor {
 public:
  MpiExecutor(int rank, int size) : rank_(rank), size_(size) {}
  bool distributed() const override { return true; }

  int64_t run(const JobLoop& loop, const std::atomic<bool>* cancel) override {
    std::vector<Outcome> outcomes = rank_ == 0 ? lead(loop, cancel) : follow(loop);
    std::string blob = rank_ == 0 ? pack(outcomes) : std::string();
    broadcast(blob);
    int64_t accepted = 0;
    const Outcome* error = nullptr;
    if (rank_ != 0) outcomes = unpack(blob);
    for (const Outcome& o : outcomes) {
      if (o.status != Status::kOk) {
        error = &o;
        continue;
      }
      if (rank_ != 0) loop.accept(o.index, std::string(o.payload));  // rank 0 did as they came
      ++accepted;
    }
    if (error != nullptr) rethrow(*error);
    return accepted;
  }

 private:
  // Rank 0: hands out jobs, runs some itself, collects. Returns the accepted outcomes in
  // arrival order, plus the error outcome (lowest failed index) if any job threw.
  std::vector<Outcome> lead(const JobLoop& loop, const std::atomic<bool>* cancel) {
    std::vector<Outcome> accepted;
    std::optional<Outcome> error;
    int64_t next = 0;
    bool exhausted = false;
    auto next_job = [&]() -> std::optional<int64_t> {
      while (!exhausted) {
        if (error || (cancel != nullptr && cancel->load()) || next >= loop.n) break;
        const int64_t i = next++;
        if (loop.skip && loop.skip(i)) {
          if (loop.tick) loop.tick();
          continue;
        }
        return i;
      }
      exhausted = true;
      return std::nullopt;
    };
    auto handle = [&](Outcome&& o) {
      if (o.status == Status::kOk) {
        loop.accept(o.index, std::string(o.payload));
        if (loop.tick) loop.tick();
        accepted.push_back(std::move(o));
      } else if (!error || o.index < error->index) {
        error = std::move(o);
      }
    };

    // The local worker thread: one job at a time, handed over under the mutex.
    std::mutex mutex;
    std::condition_variable cv;
    std::optional<int64_t> local_job;
    std::optional<Outcome> local_done;
    bool stop = false;
    std::thread local([&] {
      std::unique_lock<std::mutex> lock(mutex);
      for (;;) {
        cv.wait(lock, [&] { return stop || local_job.has_value(); });
        if (stop) return;
        const int64_t i = *local_job;
        local_job.reset();
        lock.unlock();
        Outcome o = run_one(loop, i);
        lock.lock();
        local_done = std::move(o);
        cv.notify_all();
      }
    });

    std::vector<char> busy(static_cast<size_t>(size_), 0);
    int outstanding = 0;
    bool local_busy = false;
    for (;;) {
      for (int r = 1; r < size_ && !exhausted; ++r) {
        if (busy[size_t(r)]) continue;
        const auto i = next_job();
        if (!i) break;
        MPI_Send(&*i, 1, MPI_INT64_T, r, kTagJob, MPI_COMM_WORLD);
        busy[size_t(r)] = 1;
        ++outstanding;
      }
      if (!local_busy && !exhausted) {
        if (const auto i = next_job()) {
          std::lock_guard<std::mutex> lock(mutex);
          local_job = *i;
          local_busy = true;
          cv.notify_all();
        }
      }
      if (outstanding == 0 && !local_busy) break;

      bool progressed = false;
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &flag, &status);
      if (flag) {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::string bytes(static_cast<size_t>(count), '\0');
        MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        busy[size_t(status.MPI_SOURCE)] = 0;
        --outstanding;
        handle(decode(bytes));
        progressed = true;
      }
      std::optional<Outcome> mine;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (!local_done && !progressed && local_busy) {
          cv.wait_for(lock, kPoll, [&] { return local_done.has_value(); });
        }
        if (local_done) {
          mine = std::move(local_done);
          local_done.reset();
        }
      }
      if (mine) {
        local_busy = false;
        handle(std::move(*mine));
        progressed = true;
      }
      if (!progressed && !local_busy) std::this_thread::sleep_for(kPoll);
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
      cv.notify_all();
    }
    local.join();
    for (int r = 1; r < size_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kTagStop, MPI_COMM_WORLD);
    if (error) accepted.push_back(std::move(*error));
    return accepted;
  }

  // Ranks > 0: compute what rank 0 sends until it says stop. The results come back to every
  // rank in rank 0's broadcast, so nothing is accepted here.
  std::vector<Outcome> follow(const JobLoop& loop) {
    for (;;) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) {
        std::this_thread::sleep_for(kPoll);
        continue;
      }
      if (status.MPI_TAG == kTagStop) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return {};
      }
      int64_t i = 0;
      MPI_Recv(&i, 1, MPI_INT64_T, 0, kTagJob, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const Outcome o = run_one(loop, i);
      std::string bytes = encode(o.index, o.status, o.payload);
      SERVESIM_CHECK(bytes.size() < size_t(1) << 31, "MPI: one job's result is over 2 GiB");
      MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagResult,
               MPI_COMM_WORLD);
    }
  }

  int rank_;
  int size_;
};

}  // namespace

bool MpiSession::launched_under_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw InternalError("MPI: the library does not support MPI_THREAD_FUNNELED");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (size_ > 1) executor_ = std::make_unique<MpiExecutor>(rank_, size_);
}

MpiSession::~MpiSession() {
  executor_.reset();
  MPI_Finalize();
}

}  // namespace servesim::distributed
