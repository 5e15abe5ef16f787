#include "sim/serve/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace servesim::serve {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double x) {
  // Bucket i counts x <= bounds_[i] (Prometheus' "le"); the last one is +Inf.
  const auto i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin());
  ++counts_[i];
  ++count_;
  sum_ += x;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help,
                       const std::string& labels) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? prometheus_number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " +
           prometheus_number(static_cast<double>(cumulative)) + "\n";
  }
  out += name + "_count{" + labels + "} " + prometheus_number(static_cast<double>(count_)) + "\n";
  out += name + "_sum{" + labels + "} " + prometheus_number(sum_) + "\n";
}

const std::vector<double>& ttft_buckets() {
  static const std::vector<double> b = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                        0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                        20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
  return b;
}

const std::vector<double>& itl_buckets() {
  static const std::vector<double> b = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                        0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
  return b;
}

const std::vector<double>& request_latency_buckets() {
  static const std::vector<double> b = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                        5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                        60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  return b;
}

void render_gauge(std::string& out, const std::string& name, const std::string& help,
                  const std::string& labels, double value) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n";
  out += name + "{" + labels + "} " + prometheus_number(value) + "\n";
}

void render_counter(std::string& out, const std::string& name, const std::string& help,
                    const std::string& labels, double value) {
  out += "# HELP " + name + "_total " + help + "\n# TYPE " + name + "_total counter\n";
  out += name + "_total{" + labels + "} " + prometheus_number(value) + "\n";
}

std::string prometheus_number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // prometheus_client writes floats ("1.0"); integers without a point read the same to parsers.
  return s;
}

}  // namespace servesim::serve
