#include "sim/app/flag_suggestions.h"

#include <algorithm>
#include <vector>

#include "sim/base/edit_distance.h"

namespace servesim::app {

namespace {

struct Renamed {
  const char* vllm;      // the flag in vLLM
  const char* source;    // the vLLM command that has it
  const char* servesim;  // servesim's flag for the same quantity
  const char* differs;   // how the two differ, when they do ("" when they do not)
};

// Flags of vLLM's benchmark commands that servesim models under another name. Sources:
// vllm/benchmarks/latency.py and throughput.py (--input-len, --output-len),
// vllm/benchmarks/serve.py (--num-warmups).
const std::vector<Renamed>& renamed() {
  static const std::vector<Renamed> r = {
      {"--input-len", "vllm bench latency/throughput", "--random-input-len", ""},
      {"--output-len", "vllm bench latency/throughput", "--random-output-len", ""},
      {"--num-warmups", "vllm bench serve", "--warmup-requests",
       ", which leaves the run's first N requests out of the metrics; vLLM's warm-up requests "
       "come before the run, and a simulation has nothing to warm up"},
  };
  return r;
}

std::string without_dashes(const std::string& flag) {
  const auto start = flag.find_first_not_of('-');
  return start == std::string::npos ? "" : flag.substr(start);
}

}  // namespace

std::string flag_suggestion(const CLI::App& cmd, const std::string& arg) {
  if (arg.size() < 3 || arg.rfind("--", 0) != 0) return "";
  std::string flag = arg.substr(0, arg.find('='));
  std::vector<std::string> names;  // the command's listed long flags, without dashes
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    for (const std::string& l : o->get_lnames()) names.push_back(l);
  }
  auto listed = [&](const std::string& f) {
    return std::find(names.begin(), names.end(), without_dashes(f)) != names.end();
  };
  for (const Renamed& r : renamed()) {
    if (flag == r.vllm && listed(r.servesim)) {
      return std::string(" (") + r.source + "'s " + r.vllm +
             (*r.differs != '\0' ? " is nearest to servesim's " : " is servesim's ") + r.servesim +
             r.differs + ")";
    }
  }
  std::string dashed = flag;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (dashed != flag && listed(dashed)) {
    return " (did you mean " + dashed + "? servesim's flags are spelt with dashes)";
  }
  const std::string near = nearest_name(without_dashes(dashed), names);
  return near.empty() ? "" : " (did you mean --" + near + "?)";
}

}  // namespace servesim::app
