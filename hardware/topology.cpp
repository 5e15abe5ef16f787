// Topology, Placement and the network-link catalog. See topology.h for the graph and its queries.
// Link file format: the NetworkLinkSpec fields by name; keys starting with '_' are comments; any
// other unknown key is an error.
#include "hardware/topology.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/property_map.hpp>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/number_format.h"

namespace servesim::hardware {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

fs::path link_dir() { return data_dir() / "hardware" / "catalog" / "links"; }

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() >= 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

double positive(const json& j, const std::string& key, const std::string& where, bool allow_zero) {
  const double v = require_field<double>(j, key, where);
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0)) {
    throw ConfigError(where + ": field '" + key + "' must be a finite number " +
                      (allow_zero ? ">= 0" : "> 0") + " (value " + short_number(v) + ")");
  }
  return v;
}

NetworkLinkSpec parse_link(const json& j, const std::string& default_name,
                           const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object");
  static const std::set<std::string> known = {
      "name",      "display_name",    "kind",   "bandwidth_bytes_per_s",
      "latency_s", "shared_per_node", "sources"};
  for (const auto& [key, value] : j.items()) {
    if (!key.empty() && key[0] == '_') continue;
    if (known.count(key) == 0) throw ConfigError(where + ": unknown field '" + key + "'");
  }
  NetworkLinkSpec n;
  n.name = optional_field<std::string>(j, "name", where, default_name);
  if (n.name.empty()) throw ConfigError(where + ": field 'name' must not be empty");
  n.display_name = optional_field<std::string>(j, "display_name", where, n.name);
  n.link.kind = require_field<std::string>(j, "kind", where);
  if (n.link.kind.empty()) throw ConfigError(where + ": field 'kind' must not be empty");
  n.link.bandwidth_bytes_per_s = positive(j, "bandwidth_bytes_per_s", where, false);
  n.link.latency_s = positive(j, "latency_s", where, true);
  n.shared_per_node = optional_field<bool>(j, "shared_per_node", where, false);
  n.sources = optional_field<json>(j, "sources", where, json::object());
  if (!n.sources.is_object()) throw ConfigError(where + ": field 'sources' must be an object");
  return n;
}

std::string fabric_label(const std::string& kind) {
  if (kind == "nvlink" || kind == "nvswitch") return "nvswitch";
  if (kind == "pcie") return "pcie-switch";
  if (kind == "infinity-fabric") return "infinity-fabric";
  return kind;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Network-link catalog

NetworkLinkSpec load_network_link(const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) {
    return parse_link(read_json_file(name_or_path), fs::path(name_or_path).stem().string(),
                      name_or_path);
  }
  const fs::path file = link_dir() / (name_or_path + ".json");
  if (!fs::is_regular_file(file)) {
    std::string known;
    for (const auto& n : network_link_catalog_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError("--inter-node-link: unknown network '" + name_or_path + "'; known: " + known +
                      " (or give a path to a link JSON file)");
  }
  return parse_link(read_json_file(file), name_or_path, file.string());
}

std::vector<std::string> network_link_catalog_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(link_dir(), ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string default_network_link_name(const GpuSpec& gpu) {
  return gpu.name.rfind("a100", 0) == 0 ? "infiniband-hdr" : "infiniband-ndr";
}

// ---------------------------------------------------------------------------------------------
// Placement

Placement place_replica(int tp, int pp, int gpus_per_node) {
  if (tp < 1 || pp < 1) {
    throw ConfigError("placement: tensor- and pipeline-parallel sizes must be >= 1");
  }
  if (gpus_per_node < 1) {
    throw ConfigError("--gpus-per-node: " + std::to_string(gpus_per_node) +
                      " is invalid; expected an integer >= 1");
  }
  Placement p;
  p.tensor_parallel_size = tp;
  p.pipeline_parallel_size = pp;
  p.gpus_per_node = gpus_per_node;
  int next = 0;  // next free GPU index
  for (int s = 0; s < pp; ++s) {
    // Keep a TP group that fits in a node inside one node: skip to the next node when the rest
    // of this one is too small for it.
    if (tp <= gpus_per_node) {
      const int free_here = gpus_per_node - next % gpus_per_node;
      if (free_here < tp) next += free_here;
    }
    std::vector<int> ranks(static_cast<size_t>(tp));
    for (int r = 0; r < tp; ++r) ranks[static_cast<size_t>(r)] = next++;
    p.stage_gpus.push_back(std::move(ranks));
  }
  p.num_nodes = (next + gpus_per_node - 1) / gpus_per_node;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Topology

Topology::Topology(int num_nodes, int gpus_per_node, const LinkSpec& scale_up,
                   const NetworkLinkSpec& network)
    : num_nodes_(num_nodes), gpus_per_node_(gpus_per_node), scale_up_(scale_up), network_(network) {
  if (num_nodes < 1 || gpus_per_node < 1) {
    throw ConfigError("topology: needs >= 1 node of >= 1 GPU");
  }
  if (gpus_per_node > 1 && !(scale_up.bandwidth_bytes_per_s > 0)) {
    throw ConfigError("topology: the GPU's scale_up link needs a bandwidth > 0");
  }
  if (num_nodes > 1 && !(network.link.bandwidth_bytes_per_s > 0)) {
    throw ConfigError("topology: the inter-node network '" + network.name +
                      "' needs a bandwidth > 0");
  }
  auto add_vertex = [&](VertexKind kind, int node, int index, std::string label) {
    return boost::add_vertex(Vertex{kind, node, index, std::move(label)}, graph_);
  };
  auto add_edge = [&](size_t a, size_t b, double bw, double latency, const std::string& kind) {
    const auto [e, ok] = boost::add_edge(a, b, Edge{bw, latency, kind, edge_list_.size()}, graph_);
    (void)ok;
    edge_list_.push_back(e);
  };

  const bool multi_node = num_nodes > 1;
  size_t net_switch = 0;
  if (multi_node) {
    net_switch = add_vertex(VertexKind::kNetworkSwitch, -1, -1, "network-switch");
  }
  for (int n = 0; n < num_nodes; ++n) {
    const std::string at = "@node" + std::to_string(n);
    size_t fabric = 0;
    if (gpus_per_node > 1) {
      fabric = add_vertex(VertexKind::kFabric, n, -1, fabric_label(scale_up.kind) + at);
    }
    size_t shared_nic = 0;
    if (multi_node && network.shared_per_node) {
      shared_nic = add_vertex(VertexKind::kNic, n, -1, "nic" + at);
      add_edge(shared_nic, net_switch, network.link.bandwidth_bytes_per_s, 0.0, network.link.kind);
    }
    for (int i = 0; i < gpus_per_node; ++i) {
      const int g = n * gpus_per_node + i;
      const size_t v = add_vertex(VertexKind::kGpu, n, g, "gpu" + std::to_string(g));
      gpu_vertex_.push_back(v);
      if (gpus_per_node > 1) {
        add_edge(v, fabric, scale_up.bandwidth_bytes_per_s, scale_up.latency_s / 2, scale_up.kind);
      }
      if (multi_node) {
        if (network.shared_per_node) {
          add_edge(v, shared_nic, kInf, network.link.latency_s / 2, "pcie");
        } else {
          const size_t nic = add_vertex(VertexKind::kNic, n, g, "nic" + std::to_string(g));
          add_edge(v, nic, kInf, network.link.latency_s / 2, "pcie");
          add_edge(nic, net_switch, network.link.bandwidth_bytes_per_s, 0.0, network.link.kind);
        }
      }
    }
  }

  // One Dijkstra per GPU on latency (Boost's vecS order makes ties deterministic).
  const size_t nv = boost::num_vertices(graph_);
  pred_edge_.assign(gpu_vertex_.size(), std::vector<int64_t>(nv, -1));
  for (size_t g = 0; g < gpu_vertex_.size(); ++g) {
    std::vector<size_t> pred(nv);
    std::vector<double> dist(nv);
    boost::dijkstra_shortest_paths(
        graph_, gpu_vertex_[g],
        boost::predecessor_map(boost::make_iterator_property_map(
                                   pred.begin(), boost::get(boost::vertex_index, graph_)))
            .distance_map(boost::make_iterator_property_map(
                dist.begin(), boost::get(boost::vertex_index, graph_)))
            .weight_map(boost::get(&Edge::latency_s, graph_)));
    for (size_t v = 0; v < nv; ++v) {
      if (pred[v] == v) continue;
      // The edge between pred[v] and v (the first one in insertion order if parallel).
      int64_t best = -1;
      for (auto [it, end] = boost::out_edges(pred[v], graph_); it != end; ++it) {
        if (boost::target(*it, graph_) != v) continue;
        const int64_t id = static_cast<int64_t>(graph_[*it].id);
        if (best < 0 || id < best) best = id;
      }
      pred_edge_[g][v] = best;
    }
  }
}

void Topology::check_gpu(int gpu) const {
  if (gpu < 0 || gpu >= num_gpus()) {
    throw ConfigError("topology: GPU " + std::to_string(gpu) + " outside 0.." +
                      std::to_string(num_gpus() - 1));
  }
}

std::vector<Topology::DirectedEdge> Topology::route(int src_gpu, int dst_gpu) const {
  check_gpu(src_gpu);
  check_gpu(dst_gpu);
  std::vector<DirectedEdge> edges;
  const auto& pred = pred_edge_[static_cast<size_t>(src_gpu)];
  size_t v = gpu_vertex_[static_cast<size_t>(dst_gpu)];
  const size_t s = gpu_vertex_[static_cast<size_t>(src_gpu)];
  while (v != s) {
    const int64_t id = pred[v];
    if (id < 0) throw ConfigError("topology: no path between GPUs");  // cannot happen: connected
    const auto e = edge_list_[static_cast<size_t>(id)];
    const size_t from =
        boost::source(e, graph_) == v ? boost::target(e, graph_) : boost::source(e, graph_);
    // Traversed from `from` to v: forward when from is the edge's source.
    edges.push_back(DirectedEdge{static_cast<size_t>(id), boost::source(e, graph_) == from});
    v = from;
  }
  std::reverse(edges.begin(), edges.end());
  return edges;
}

PathInfo Topology::path(int src_gpu, int dst_gpu) const {
  PathInfo p;
  p.bandwidth_bytes_per_s = kInf;
  for (const DirectedEdge& d : route(src_gpu, dst_gpu)) {
    const Edge& e = graph_[edge_list_[d.edge_index]];
    p.bandwidth_bytes_per_s = std::min(p.bandwidth_bytes_per_s, e.bandwidth_bytes_per_s);
    p.latency_s += e.latency_s;
    ++p.hops;
  }
  p.crosses_nodes = node_of(src_gpu) != node_of(dst_gpu);
  return p;
}

std::pair<double, double> Topology::flow_load(const std::vector<std::pair<int, int>>& flows) const {
  double latency = 0;
  std::map<std::pair<size_t, bool>, int> load;  // (edge, direction) -> flows crossing it
  for (const auto& [src, dst] : flows) {
    if (src == dst) continue;
    double l = 0;
    for (const DirectedEdge& d : route(src, dst)) {
      l += graph_[edge_list_[d.edge_index]].latency_s;
      ++load[{d.edge_index, d.forward}];
    }
    latency = std::max(latency, l);
  }
  double seconds_per_byte = 0;
  for (const auto& [key, count] : load) {
    const double bw = graph_[edge_list_[key.first]].bandwidth_bytes_per_s;
    if (std::isfinite(bw)) seconds_per_byte = std::max(seconds_per_byte, count / bw);
  }
  return {latency, seconds_per_byte};
}

double Topology::concurrent_transfer_s(const std::vector<std::pair<int, int>>& flows,
                                       double bytes_per_flow) const {
  if (flows.empty() || bytes_per_flow <= 0) return 0;
  const auto [latency, seconds_per_byte] = flow_load(flows);
  return latency + seconds_per_byte * bytes_per_flow;
}

bool Topology::within_one_node(const std::vector<int>& gpus) const {
  for (int g : gpus) {
    check_gpu(g);
    if (node_of(g) != node_of(gpus.front())) return false;
  }
  return true;
}

LinkSpec Topology::ring_link(const std::vector<int>& gpus) const {
  if (gpus.size() <= 1) return scale_up_;
  std::vector<std::pair<int, int>> hops;
  for (size_t i = 0; i < gpus.size(); ++i) hops.emplace_back(gpus[i], gpus[(i + 1) % gpus.size()]);
  // α: the slowest hop; β: from the most loaded edge direction (per byte of each hop).
  return flows_link(hops);
}

LinkSpec Topology::flows_link(const std::vector<std::pair<int, int>>& flows) const {
  if (flows.empty()) return scale_up_;
  bool one_node = true;
  for (const auto& [a, b] : flows) {
    check_gpu(a);
    check_gpu(b);
    one_node = one_node && node_of(a) == node_of(b) && node_of(a) == node_of(flows.front().first);
  }
  const auto [latency, seconds_per_byte] = flow_load(flows);
  LinkSpec l;
  l.kind = one_node ? scale_up_.kind : network_.link.kind;
  l.latency_s = latency;
  l.bandwidth_bytes_per_s = seconds_per_byte > 0 ? 1.0 / seconds_per_byte : kInf;
  return l;
}

}  // namespace servesim::hardware
