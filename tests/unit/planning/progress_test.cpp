// Progress bar text and ETA, silence when not a terminal (progress.h), and SIGINT/SIGTERM
// handling (sim/base/exit_signals.h).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/exit_signals.h"
#include "sim/planning/progress.h"

namespace servesim::planning {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

TEST_CASE("progress line: bar, counts and ETA = elapsed·remaining/done", "[planning][progress]") {
  // 5 of 10 done after 2 s ⇒ 2·5/5 = 2 s left; bar half of 30 = 15 '#'.
  const std::string half = ProgressBar::render("sweep", 5, 10, 2.0);
  CHECK_THAT(half, Contains("sweep [" + std::string(15, '#') + std::string(15, '.') + "] 5/10"));
  CHECK_THAT(half, Contains("elapsed 2.0s"));
  CHECK_THAT(half, Contains("ETA 2.0s"));
  // 1 of 4 after 30 s ⇒ 90 s = 1m30s left.
  CHECK_THAT(ProgressBar::render("x", 1, 4, 30.0), Contains("ETA 1m30s"));
  CHECK_THAT(ProgressBar::render("x", 0, 4, 0.5), EndsWith("ETA ?"));
  CHECK_THAT(ProgressBar::render("x", 4, 4, 3.0), EndsWith("ETA 0.0s"));
}

TEST_CASE("a bar on a non-terminal stream stays silent", "[planning][progress]") {
  std::ostringstream err;
  CHECK(ProgressBar::terminal_stream(err) == nullptr);
  ProgressBar bar(3, "sweep", ProgressBar::terminal_stream(err));
  bar.advance();
  bar.advance(2);
  bar.finish();
  CHECK(bar.done() == 3);
  CHECK(err.str().empty());
}

TEST_CASE("a bar given a stream redraws in place and ends the line", "[planning][progress]") {
  std::ostringstream out;
  {
    ProgressBar bar(3, "sweep", &out);
    bar.advance(3);
  }  // destructor finishes
  const std::string s = out.str();
  CHECK(s.front() == '\r');
  CHECK_THAT(s, Contains("3/3"));
  CHECK_THAT(s, EndsWith("\n"));
}

TEST_CASE("a deferred exit: the first SIGINT or SIGTERM sets the flag, handlers restored",
          "[planning][progress]") {
  struct sigaction before_int {
  }, before_term{};
  sigaction(SIGINT, nullptr, &before_int);
  sigaction(SIGTERM, nullptr, &before_term);
  {
    DeferredExit guard;
    CHECK_FALSE(guard.interrupted());
    CHECK(guard.signal_number() == 0);
    CHECK_THROWS_AS(DeferredExit(), InternalError);  // one at a time
    ::raise(SIGINT);
    CHECK(guard.interrupted());
    CHECK(guard.flag()->load());
    CHECK(guard.exit_code() == 128 + SIGINT);  // 130, as a shell reports Ctrl-C
    CHECK(guard.signal_name() == "SIGINT");
  }
  {
    DeferredExit guard;  // a new guard starts un-interrupted
    CHECK_FALSE(guard.interrupted());
    ::raise(SIGTERM);
    CHECK(guard.interrupted());
    CHECK(guard.exit_code() == 128 + SIGTERM);  // 143: Slurm's and Kubernetes' time limit
  }
  struct sigaction after_int {
  }, after_term{};
  sigaction(SIGINT, nullptr, &after_int);
  sigaction(SIGTERM, nullptr, &after_term);
  CHECK(after_int.sa_handler == before_int.sa_handler);
  CHECK(after_term.sa_handler == before_term.sa_handler);
}

TEST_CASE("SIGTERM outside a study removes registered temporary files and kills",
          "[planning][progress]") {
  const std::string tmp = std::filesystem::temp_directory_path() /
                          ("servesim-signal-" + std::to_string(::getpid()) + ".tmp.1");
  const std::string kept = tmp + ".unregistered";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    install_exit_signal_handlers();
    std::ofstream(tmp) << "partial";
    std::ofstream(kept) << "not registered";
    const TempFileRegistration reg(tmp);
    ::raise(SIGTERM);
    ::_exit(0);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK_FALSE(std::filesystem::exists(tmp));
  CHECK(std::filesystem::exists(kept));  // only registered paths are removed
  std::filesystem::remove(kept);
}

}  // namespace
}  // namespace servesim::planning
