#include "sim/planning/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "sim/base/error.h"

namespace servesim::planning {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  } else {
    const long total = std::lround(s);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
  }
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(int64_t total, std::string label, std::ostream* out)
    : total_(total), label_(std::move(label)), out_(out) {
  start_ = std::chrono::steady_clock::now();
  last_draw_ = start_;
  if (out_ != nullptr) draw(false);
}

ProgressBar::~ProgressBar() { finish(); }

std::ostream* ProgressBar::terminal_stream(std::ostream& err) {
  if (&err != &std::cerr) return nullptr;
  return ::isatty(2) ? &err : nullptr;
}

std::string ProgressBar::render(const std::string& label, int64_t done, int64_t total,
                                double elapsed_s, int width) {
  const double frac = total > 0 ? std::min(1.0, double(done) / double(total)) : 1.0;
  const int filled = static_cast<int>(std::floor(frac * width));
  std::string bar = label + " [" + std::string(size_t(filled), '#') +
                    std::string(size_t(width - filled), '.') + "] " + std::to_string(done) + "/" +
                    std::to_string(total) + "  elapsed " + seconds_text(elapsed_s) + "  ETA ";
  if (done >= total) {
    bar += "0.0s";
  } else if (done <= 0) {
    bar += "?";
  } else {
    bar += seconds_text(elapsed_s * double(total - done) / double(done));
  }
  return bar;
}

void ProgressBar::advance(int64_t units) {
  done_.fetch_add(units);
  if (out_ != nullptr) draw(false);
}

void ProgressBar::finish() {
  if (out_ == nullptr) return;
  draw(true);
}

void ProgressBar::draw(bool final_draw) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!final_draw && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  drawn_ = true;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // "\33[K" clears the rest of the line when the new text is shorter.
  *out_ << '\r' << render(label_, done_.load(), total_, elapsed) << "\33[K";
  if (final_draw) {
    *out_ << '\n';
    finished_ = true;
  }
  out_->flush();
}

}  // namespace servesim::planning
