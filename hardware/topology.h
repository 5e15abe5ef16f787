// Topology: the GPUs of a deployment and the links between them, as a Boost.Graph, plus where the
// TP×PP GPUs of one replica are placed and the network catalog (hardware/catalog/links/*.json).
//
// Graph (undirected; every link is full duplex, so each direction of an edge has its own
// bandwidth):
//   vertices  gpu (one per GPU), fabric (one per node: the NVSwitch / NVLink domain, the PCIe
//             host bridge or switch, or AMD Infinity Fabric, after gpu.scale_up.kind), nic (one
//             per GPU for InfiniBand-style networks, one per node when the NIC is shared, as with
//             a VM's Ethernet), network-switch (one, joining the nodes).
//   edges     gpu–fabric: scale_up bandwidth per GPU and direction, latency α_up/2 (a GPU-to-GPU
//             path inside a node then sums to α_up, the measured send/recv latency);
//             gpu–nic: latency α_net/2, no bandwidth limit (PCIe to the NIC is not the
//             bottleneck); nic–network-switch: the network's bandwidth per NIC, no latency. A path
//             between GPUs on two nodes sums to α_net and is limited by the NIC bandwidth.
//
// Queries: path() gives the lowest-latency path between two GPUs (Dijkstra on latency): its
// bottleneck bandwidth and summed latency. concurrent_transfer_s() times a set of simultaneous
// flows: the slowest path's latency plus, over every edge direction, (flows on it × bytes) / its
// bandwidth — so flows that share a node's one Ethernet NIC share its bandwidth. ring_link() turns
// one step of a ring over a GPU group into an α–β LinkSpec (α = slowest hop, β from the most loaded
// edge) for the ring formulas of models/roofline_cost_model.h.
//
// Placement (place_replica): the replica's GPUs are numbered stage by stage, rank = stage·TP +
// tp_rank (vLLM's global rank order), and filled into nodes of gpus_per_node GPUs; when TP <=
// gpus_per_node a stage never straddles two nodes (it starts a new node instead), so a TP group
// stays inside one NVLink domain; pipeline stages may cross nodes. When TP > gpus_per_node a TP
// group spans ceil(TP / gpus_per_node) consecutive nodes.
//
// Everything here is deterministic and immutable once built.
#ifndef SERVESIM_HARDWARE_TOPOLOGY_H_
#define SERVESIM_HARDWARE_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <nlohmann/json.hpp>

#include "hardware/gpu_spec.h"

namespace servesim::hardware {

// GPUs per node when the user gives none (--gpus-per-node): DGX/HGX A100, H100, H200, B200 and the
// cloud VMs built on them (Azure ND96asr_v4, ND H100 v5) have 8.
inline constexpr int kDefaultGpusPerNode = 8;

// The network between nodes, loaded from hardware/catalog/links/<name>.json or any JSON file with
// the same fields: name, display_name, kind, bandwidth_bytes_per_s (per NIC, one direction),
// latency_s (α of one send/recv across nodes), shared_per_node, sources.
struct NetworkLinkSpec {
  std::string name;  // catalog name, e.g. "infiniband-ndr"
  std::string display_name;
  LinkSpec link;                 // kind, bandwidth per NIC and direction, α
  bool shared_per_node = false;  // one NIC for the whole node (VM Ethernet) vs one per GPU (IB)
  nlohmann::json sources;        // field -> where the number comes from
};

// By catalog name or path (a '/' or a .json suffix). Throws ConfigError naming the file and field,
// or listing the known names.
NetworkLinkSpec load_network_link(const std::string& name_or_path);
std::vector<std::string> network_link_catalog_names();  // sorted
// The network a GPU's nodes usually have: "infiniband-hdr" for A100 systems (DGX A100, Azure
// NDv4: 8 × 200 Gb/s HDR), "infiniband-ndr" otherwise (DGX H100/H200/B200, Azure ND H100 v5:
// 8 × 400 Gb/s NDR).
std::string default_network_link_name(const GpuSpec& gpu);

// Where one replica's GPUs sit.
struct Placement {
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  int gpus_per_node = kDefaultGpusPerNode;
  int num_nodes = 1;
  std::vector<std::vector<int>> stage_gpus;  // [stage][tp rank] -> GPU index (node = gpu / gpn)

  int num_gpus() const { return tensor_parallel_size * pipeline_parallel_size; }
  int node_of(int gpu) const { return gpu / gpus_per_node; }
};

// REQUIRES: tp, pp, gpus_per_node >= 1 (ConfigError otherwise). See the header comment.
Placement place_replica(int tp, int pp, int gpus_per_node);

// One GPU-to-GPU path.
struct PathInfo {
  double bandwidth_bytes_per_s = 0;  // bottleneck (smallest) bandwidth along the path
  double latency_s = 0;              // Σ edge latencies
  int hops = 0;                      // edges
  bool crosses_nodes = false;
};

class Topology {
 public:
  enum class VertexKind { kGpu, kFabric, kNic, kNetworkSwitch };
  struct Vertex {
    VertexKind kind = VertexKind::kGpu;
    int node = -1;      // -1 for the network switch
    int index = -1;     // GPU index for gpus and per-GPU NICs, else -1
    std::string label;  // e.g. "gpu3", "nvswitch@node0", "nic@node1", "network-switch"
  };
  struct Edge {
    double bandwidth_bytes_per_s = 0;  // per direction; +infinity = not a bottleneck
    double latency_s = 0;
    std::string kind;  // the LinkSpec kind of the link it models
    size_t id = 0;     // insertion index (deterministic edge order)
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Edge>;

  // num_nodes nodes of gpus_per_node GPUs each, GPUs numbered node by node. REQUIRES: both >= 1,
  // scale_up bandwidth > 0 when gpus_per_node > 1, network bandwidth > 0 when num_nodes > 1
  // (ConfigError otherwise).
  Topology(int num_nodes, int gpus_per_node, const LinkSpec& scale_up,
           const NetworkLinkSpec& network);

  int num_nodes() const { return num_nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_gpus() const { return num_nodes_ * gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  const LinkSpec& scale_up() const { return scale_up_; }
  const NetworkLinkSpec& network() const { return network_; }
  const Graph& graph() const { return graph_; }

  // Lowest-latency path; src == dst gives an empty path (infinite bandwidth, 0 latency).
  PathInfo path(int src_gpu, int dst_gpu) const;
  // Time for all `flows` (src, dst) to move `bytes_per_flow` each at once: max path latency +
  // max over edge directions of (flows crossing it · bytes_per_flow) / bandwidth. 0 for no flows
  // or bytes <= 0 (src == dst flows cost nothing).
  double concurrent_transfer_s(const std::vector<std::pair<int, int>>& flows,
                               double bytes_per_flow) const;
  // One step of a ring over `gpus` in order (g0→g1→…→g0, all hops at once) as an α–β link:
  // latency = slowest hop's latency; bandwidth = 1 / max over edge directions of (hops crossing
  // it / bandwidth). kind = scale_up.kind when the ring stays inside one node, else the
  // network's kind. A group of <= 1 GPU gives the scale_up link.
  LinkSpec ring_link(const std::vector<int>& gpus) const;
  // The same α–β reduction for any set of simultaneous flows: latency = slowest flow's path
  // latency, bandwidth = 1 / max over edge directions of (flows crossing it / bandwidth), so that
  // concurrent_transfer_s(flows, B) = latency + B / bandwidth. kind as for ring_link (scale_up
  // kind when every flow stays inside one node). No flows: the scale_up link.
  LinkSpec flows_link(const std::vector<std::pair<int, int>>& flows) const;
  bool within_one_node(const std::vector<int>& gpus) const;

 private:
  struct DirectedEdge {
    size_t edge_index;  // into edge_list_
    bool forward;       // traversed from its source() to its target()
  };
  std::vector<DirectedEdge> route(int src_gpu, int dst_gpu) const;
  // (max path latency, max over edge directions of flows crossing it / bandwidth).
  std::pair<double, double> flow_load(const std::vector<std::pair<int, int>>& flows) const;
  void check_gpu(int gpu) const;

  int num_nodes_;
  int gpus_per_node_;
  LinkSpec scale_up_;
  NetworkLinkSpec network_;
  Graph graph_;
  std::vector<Graph::edge_descriptor> edge_list_;  // edge index -> descriptor
  std::vector<size_t> gpu_vertex_;                 // GPU index -> vertex
  // predecessor edge index per (source GPU, vertex), from one Dijkstra per GPU (precomputed).
  std::vector<std::vector<int64_t>> pred_edge_;
};

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_TOPOLOGY_H_
