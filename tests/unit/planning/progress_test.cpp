// Progress bar text and ETA, silence when not a terminal, and Ctrl-C handling (progress.h).
#include <catch2/catch.hpp>

#include <signal.h>

#include <sstream>

#include "sim/base/error.h"
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

TEST_CASE("Ctrl-C sets the flag instead of killing, and the handler is restored",
          "[planning][progress]") {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  {
    InterruptGuard guard;
    CHECK_FALSE(guard.interrupted());
    CHECK_THROWS_AS(InterruptGuard(), InternalError);  // one at a time
    ::raise(SIGINT);
    CHECK(guard.interrupted());
    CHECK(guard.flag()->load());
  }
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
  InterruptGuard again;  // a new guard starts un-interrupted
  CHECK_FALSE(again.interrupted());
}

}  // namespace
}  // namespace servesim::planning
