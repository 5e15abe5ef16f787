#include "sim/calibration/prediction_basis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace servesim::calibration {

namespace {
template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// "a, b, c".
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// "0.11" of "0.11.0" or "0.11"; "" for a version that does not start with two numbers
// ("nightly-2025-10", "unrecorded").
std::string release_line(const std::string& version) {
  const size_t dot = version.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 >= version.size()) return "";
  size_t end = dot + 1;
  while (end < version.size() && std::isdigit(static_cast<unsigned char>(version[end]))) ++end;
  if (end == dot + 1) return "";
  for (size_t i = 0; i < dot; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(version[i]))) return "";
  }
  return version.substr(0, end);
}
}  // namespace

PredictionBasis classify_prediction(const Calibration* profile, const std::string& profile_source,
                                    const PredictionQuery& q) {
  if (profile == nullptr || profile->empty()) {
    return {"datasheet-only", "no calibration profile: datasheet peaks + catalog defaults"};
  }
  const std::string src = profile_source.empty() ? std::string("the profile") : profile_source;
  if (!profile->gpu.empty() && profile->gpu != q.gpu) {
    return {"transferred", src + " was fitted on " + profile->gpu + ", applied to " + q.gpu};
  }
  const CalibrationDomain& d = profile->domain;
  if (d.empty()) {
    return {"transferred", src +
                               " records no serving-run domain (kernel terms only, or an older "
                               "profile): nothing it was fitted on is known to resemble this run"};
  }
  std::vector<std::string> outside;
  if (!contains(d.models, q.model)) outside.push_back("model " + q.model);
  if (!d.tensor_parallel_sizes.empty() &&
      !contains(d.tensor_parallel_sizes, q.tensor_parallel_size)) {
    outside.push_back("TP " + std::to_string(q.tensor_parallel_size));
  }
  if (!d.pipeline_parallel_sizes.empty() &&
      !contains(d.pipeline_parallel_sizes, q.pipeline_parallel_size)) {
    outside.push_back("PP " + std::to_string(q.pipeline_parallel_size));
  }
  if (!q.engine_version.empty() && !d.engine_versions.empty() &&
      !contains(d.engine_versions, q.engine_version)) {
    outside.push_back("vLLM " + q.engine_version);
  }
  if (!d.dtypes.empty() && !contains(d.dtypes, q.dtype)) outside.push_back("weights " + q.dtype);
  if (!q.host_line.empty() && !d.host_lines.empty() && !contains(d.host_lines, q.host_line)) {
    outside.push_back("host line vLLM " + q.host_line + " (fitted on " + join(d.host_lines) + ")");
  } else if (!q.host_line.empty() && d.host_lines.empty() && q.engine_version.empty() &&
             !d.engine_versions.empty()) {
    // A profile written before host lines were recorded: compare release lines (X.Y) of its
    // stated versions with the query's, when every stated version names one.
    const std::string line = q.host_line.substr(0, q.host_line.find(' '));
    bool known = true, same = false;
    for (const std::string& v : d.engine_versions) {
      const std::string fitted_line = release_line(v);
      known = known && !fitted_line.empty();
      same = same || fitted_line == line;
    }
    if (known && !same) {
      outside.push_back("vLLM " + line + " (fitted on " + join(d.engine_versions) + ")");
    }
  }
  // Each part inside, the combination not fitted (only checked when every part is inside, so a
  // new model is reported once, as a model).
  const std::string key =
      deployment_key(q.model, q.tensor_parallel_size, q.pipeline_parallel_size, q.dtype);
  if (outside.empty() && !d.deployments.empty() && !contains(d.deployments, key)) {
    outside.push_back(key + " (each part fitted, not this combination)");
  }
  // Load: a closed loop above the highest fitted concurrency (or any closed loop, when only
  // bounded open-loop rates were fitted), or an open loop above the highest fitted rate (unless a
  // fitted run sent everything at once, which covers any load).
  if (q.max_concurrency > 0 && d.max_concurrency > 0 && q.max_concurrency > d.max_concurrency) {
    outside.push_back("concurrency " + std::to_string(q.max_concurrency) + " > " +
                      std::to_string(d.max_concurrency));
  } else if (q.max_concurrency > 0 && d.max_concurrency == 0 && d.max_request_rate > 0 &&
             !d.has_unbounded_load) {
    // Fitted on open-loop runs at bounded rates only: nothing says how far a closed loop of
    // this concurrency loads the server.
    outside.push_back("a closed loop at concurrency " + std::to_string(q.max_concurrency) +
                      " (fitted on open-loop runs only)");
  } else if (q.max_concurrency == 0 && q.request_rate > 0 && !d.has_unbounded_load &&
             q.request_rate > d.max_request_rate) {
    std::ostringstream os;
    os << std::setprecision(4);
    if (std::isinf(q.request_rate)) {
      os << "all requests at once";
    } else {
      os << (d.max_request_rate > 0 ? "rate " : "an open loop at ") << q.request_rate << " req/s";
    }
    if (d.max_request_rate > 0) {
      if (std::isinf(q.request_rate)) {
        os << " (fitted rates up to " << d.max_request_rate << " req/s)";
      } else {
        os << " > " << d.max_request_rate;
      }
    } else if (d.max_concurrency > 0) {
      os << " (fitted on closed-loop runs only)";
    }
    outside.push_back(os.str());
  }
  if (d.offline_only && !q.offline) {
    outside.push_back(
        "an online server (fitted on offline batches only: no client or API-server "
        "cost seen)");
  }
  if (!d.gpus.empty() && !contains(d.gpus, q.gpu)) {
    // This GPU's kernel terms, host terms from another GPU's runs (calibrate --base, or a joint
    // fit over other GPUs): transferred whatever else matches.
    std::string reason = src + ": its serving terms were fitted on runs on " + join(d.gpus) +
                         ", applied to " + q.gpu;
    if (!outside.empty()) reason += "; also outside its domain: " + join(outside);
    return {"transferred", reason};
  }
  if (outside.empty()) return {"calibrated", src + ": inside its fitted domain"};
  return {"transferred", src + " fitted on this GPU, but outside its domain: " + join(outside)};
}

}  // namespace servesim::calibration
