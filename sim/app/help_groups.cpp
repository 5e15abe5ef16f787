#include "sim/app/help_groups.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/run_config.h"

namespace servesim::app {

namespace {

const char* const kSettingsFile = "Settings file";
const char* const kStudy = "Distributed studies";

// The run settings are listed by topic in run_config.cpp (config_fields()): each entry here is
// the first setting of a topic, which runs until the next one's first setting. A setting added
// inside a topic's run lands in that topic.
const std::vector<std::pair<std::string, std::string>>& topic_starts() {
  static const std::vector<std::pair<std::string, std::string>> starts = {
      {"model", "Deployment"},          {"prefill_replicas", "Disaggregated prefill/decode"},
      {"calibration", "Calibration"},   {"vllm_version", "Engine (vLLM)"},
      {"enable_lora", "LoRA"},          {"request_rate", "Load (vllm bench serve)"},
      {"percentile_metrics", "Report"},
  };
  return starts;
}

// The order of the shared groups in --help, after the command's own.
std::vector<std::string> shared_groups() {
  std::vector<std::string> g = {kSettingsFile};
  for (const auto& [key, topic] : topic_starts()) {
    if (std::find(g.begin(), g.end(), topic) == g.end()) g.push_back(topic);
  }
  g.push_back(kStudy);
  return g;
}

std::string key_of(std::string flag) {
  const auto start = flag.find_first_not_of('-');
  flag = start == std::string::npos ? "" : flag.substr(start);
  std::replace(flag.begin(), flag.end(), '-', '_');
  return flag;
}

// CLI11's help with the option groups in a fixed order (its own order is first appearance, and
// CLI11 2.1's make_groups is not virtual, so make_help is what is overridden).
class GroupedFormatter : public CLI::Formatter {
 public:
  explicit GroupedFormatter(std::vector<std::string> order) : order_(std::move(order)) {}

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    return make_description(app) + make_usage(app, name) + make_positionals(app) +
           groups(app, mode) + make_subcommands(app, mode) + "\n" + make_footer(app);
  }

  // CLI11 lists an option's Needs and Excludes in pointer order (a std::set<Option*>), so the help
  // text changed from run to run; here they are listed by name.
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out = CLI::Formatter::make_option_opts(opt);
    const std::string needs = " " + get_label("Needs") + ":";
    const std::string excludes = " " + get_label("Excludes") + ":";
    const std::size_t cut = std::min(out.find(needs), out.find(excludes));
    if (cut == std::string::npos) return out;
    out.erase(cut);
    auto sorted_names = [](const auto& options) {
      std::vector<std::string> names;
      for (const CLI::Option* o : options) names.push_back(o->get_name());
      std::sort(names.begin(), names.end());
      std::string text;
      for (const std::string& n : names) text += " " + n;
      return text;
    };
    if (!opt->get_needs().empty()) out += needs + sorted_names(opt->get_needs());
    if (!opt->get_excludes().empty()) out += excludes + sorted_names(opt->get_excludes());
    return out;
  }

 private:
  std::string groups(const CLI::App* app, CLI::AppFormatMode mode) const {
    std::vector<std::string> groups = order_;
    for (const std::string& g : app->get_groups()) {
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
    std::string out;
    for (const std::string& group : groups) {
      const std::vector<const CLI::Option*> opts = app->get_options([&](const CLI::Option* o) {
        return o->get_group() == group && o->nonpositional() &&
               (mode != CLI::AppFormatMode::Sub || app->get_help_ptr() != o);
      });
      if (!group.empty() && !opts.empty()) out += make_group(group, false, opts);
    }
    return out;
  }

  std::vector<std::string> order_;
};

}  // namespace

std::string run_setting_topic(const std::string& flag) {
  std::string key = key_of(flag);
  const auto& fields = config_fields();
  auto is_field = [&](const std::string& k) {
    return std::any_of(fields.begin(), fields.end(),
                       [&](const ConfigField& f) { return f.key == k; });
  };
  if (!is_field(key) && key.rfind("no_", 0) == 0 && is_field(key.substr(3))) key = key.substr(3);
  std::string topic;
  for (const ConfigField& f : fields) {
    for (const auto& [start, t] : topic_starts()) {
      if (f.key == start) topic = t;
    }
    if (f.key == key) return topic;
  }
  return "";
}

void group_help(CLI::App& cmd) {
  std::string own = cmd.get_name();
  if (!own.empty()) own[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(own[0])));
  own += " options";
  for (CLI::Option* o : cmd.get_options()) {
    if (o->get_group().empty()) continue;  // hidden (vLLM's accepted flags)
    const std::vector<std::string>& long_names = o->get_lnames();
    const std::string name = long_names.empty() ? "" : "--" + long_names.front();
    std::string group = run_setting_topic(name);
    // A command's own option under a setting's name (plan's candidate lists --gpu and
    // --tensor-parallel-size) is the command's: the shared option has the setting's help.
    const std::string key = key_of(name);
    for (const ConfigField& f : config_fields()) {
      if (f.key == key && f.help != o->get_description()) group.clear();
    }
    if (name == "--config") group = kSettingsFile;
    if (name == "--shard" || name == "--part-file") group = kStudy;
    o->group(group.empty() ? own : group);
  }
  std::vector<std::string> order = {own};
  for (const std::string& g : shared_groups()) order.push_back(g);
  cmd.formatter(std::make_shared<GroupedFormatter>(std::move(order)));
}

}  // namespace servesim::app
