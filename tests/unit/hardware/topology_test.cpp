// Topology, placement and network-catalog tests. Links are hand-built with round numbers so every
// expectation is computed in the comment; the catalog test loads the shipped files.
#include "hardware/topology.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

using Catch::Matchers::WithinRel;

LinkSpec nvlink() { return LinkSpec{"nvlink", 300e9, 8e-6}; }
NetworkLinkSpec ib() {
  NetworkLinkSpec n;
  n.name = "ib";
  n.link = LinkSpec{"infiniband", 25e9, 20e-6};
  n.shared_per_node = false;
  return n;
}
NetworkLinkSpec tcp() {
  NetworkLinkSpec n;
  n.name = "tcp";
  n.link = LinkSpec{"ethernet", 3e9, 50e-6};
  n.shared_per_node = true;
  return n;
}

TEST_CASE("placement: TP groups stay inside a node, stages may cross nodes", "[topology]") {
  // TP4×PP2 on 4-GPU nodes: stage 0 = GPUs 0–3 (node 0), stage 1 = GPUs 4–7 (node 1).
  const Placement a = place_replica(4, 2, 4);
  CHECK(a.num_nodes == 2);
  CHECK(a.stage_gpus == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  // The same on 8-GPU nodes fits one node; TP8 too.
  CHECK(place_replica(4, 2, 8).num_nodes == 1);
  CHECK(place_replica(8, 1, 8).num_nodes == 1);
  // TP3×PP2 on 4-GPU nodes: stage 1 does not straddle: it starts node 1 (GPUs 4–6).
  const Placement b = place_replica(3, 2, 4);
  CHECK(b.stage_gpus[1] == std::vector<int>{4, 5, 6});
  CHECK(b.num_nodes == 2);
  // TP16 on 8-GPU nodes spans 2 nodes; TP2×PP8: ceil(16 / 8) = 2 nodes.
  CHECK(place_replica(16, 1, 8).num_nodes == 2);
  CHECK(place_replica(2, 8, 8).num_nodes == 2);
  CHECK_THROWS_AS(place_replica(4, 2, 0), ConfigError);
}

TEST_CASE("graph: GPUs, fabric, NICs and the network switch", "[topology]") {
  // 2 nodes × 4 GPUs, one IB NIC per GPU: 8 gpu + 2 nvswitch + 8 nic + 1 switch = 19 vertices;
  // edges: 8 gpu–fabric + 8 gpu–nic + 8 nic–switch = 24. A shared NIC: 8 + 2 + 2 + 1 = 13
  // vertices; 8 + 8 gpu–nic + 2 nic–switch = 18 edges.
  const Topology t(2, 4, nvlink(), ib());
  CHECK(boost::num_vertices(t.graph()) == 19);
  CHECK(boost::num_edges(t.graph()) == 24);
  const Topology s(2, 4, nvlink(), tcp());
  CHECK(boost::num_vertices(s.graph()) == 13);
  CHECK(boost::num_edges(s.graph()) == 18);
  // One node: no network at all.
  CHECK(boost::num_vertices(Topology(1, 8, nvlink(), NetworkLinkSpec{}).graph()) == 9);
}

TEST_CASE("paths: NVLink inside a node, the NIC path across nodes", "[topology]") {
  // Inside node 0: gpu–nvswitch–gpu, α = 4 + 4 µs, 300 GB/s. Across: gpu–nic–switch–nic–gpu,
  // α = 10 + 10 µs of the network, bottleneck 25 GB/s.
  const Topology t(2, 4, nvlink(), ib());
  const PathInfo in = t.path(0, 3);
  CHECK(in.hops == 2);
  CHECK_FALSE(in.crosses_nodes);
  CHECK_THAT(in.latency_s, WithinRel(8e-6, 1e-12));
  CHECK(in.bandwidth_bytes_per_s == 300e9);
  const PathInfo out = t.path(1, 6);
  CHECK(out.hops == 4);
  CHECK(out.crosses_nodes);
  CHECK_THAT(out.latency_s, WithinRel(20e-6, 1e-12));
  CHECK(out.bandwidth_bytes_per_s == 25e9);
  CHECK(t.path(2, 2).hops == 0);
}

TEST_CASE("cross-node send/recv = α + bytes / bw of the NIC path, shared NICs share",
          "[topology]") {
  // 4 TP ranks of stage 0 (node 0) each send B = 8 MiB to their peer on node 1.
  // One IB NIC per GPU: flows do not share an edge: 20 µs + B / 25 GB/s.
  // One Ethernet NIC per node: the 4 flows share it: 50 µs + 4·B / 3 GB/s.
  const double b = 8.0 * (1 << 20);
  const std::vector<std::pair<int, int>> flows = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  CHECK_THAT(Topology(2, 4, nvlink(), ib()).concurrent_transfer_s(flows, b),
             WithinRel(20e-6 + b / 25e9, 1e-12));
  CHECK_THAT(Topology(2, 4, nvlink(), tcp()).concurrent_transfer_s(flows, b),
             WithinRel(50e-6 + 4 * b / 3e9, 1e-12));
  // flows_link is the same as an α–β link.
  const LinkSpec l = Topology(2, 4, nvlink(), tcp()).flows_link(flows);
  CHECK(l.kind == "ethernet");
  CHECK_THAT(l.latency_s, WithinRel(50e-6, 1e-12));
  CHECK_THAT(l.bandwidth_bytes_per_s, WithinRel(3e9 / 4, 1e-12));
  CHECK(Topology(2, 4, nvlink(), ib()).concurrent_transfer_s({}, b) == 0);
}

TEST_CASE("ring link of a TP group: scale_up inside a node, slowest hop across", "[topology]") {
  // Inside one node the ring is the scale_up link itself (each GPU sends one and receives one
  // chunk: no edge carries two flows). Across 2 nodes (0–3 on node 0, 4–7 on node 1) the ring
  // has two cross-node hops (3→4, 7→0) on different NICs: α = 20 µs, bw = 25 GB/s; with a
  // shared NIC each node's NIC still carries one flow per direction: 3 GB/s, 50 µs.
  const Topology t(2, 4, nvlink(), ib());
  const LinkSpec in = t.ring_link({0, 1, 2, 3});
  CHECK(in.kind == "nvlink");
  CHECK_THAT(in.latency_s, WithinRel(8e-6, 1e-12));
  CHECK_THAT(in.bandwidth_bytes_per_s, WithinRel(300e9, 1e-12));
  const LinkSpec across = t.ring_link({0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(across.kind == "infiniband");
  CHECK_THAT(across.latency_s, WithinRel(20e-6, 1e-12));
  CHECK_THAT(across.bandwidth_bytes_per_s, WithinRel(25e9, 1e-12));
  const LinkSpec shared = Topology(2, 4, nvlink(), tcp()).ring_link({0, 1, 2, 3, 4, 5, 6, 7});
  CHECK_THAT(shared.bandwidth_bytes_per_s, WithinRel(3e9, 1e-12));
  CHECK(t.within_one_node({4, 5, 6, 7}));
  CHECK_FALSE(t.within_one_node({3, 4}));
}

TEST_CASE("network catalog: every link loads with sources, defaults by GPU", "[topology]") {
  const auto names = network_link_catalog_names();
  CHECK(names == std::vector<std::string>{"ethernet-tcp", "infiniband-hdr", "infiniband-ndr"});
  for (const auto& n : names) {
    const NetworkLinkSpec l = load_network_link(n);
    CHECK(l.name == n);
    CHECK(l.link.bandwidth_bytes_per_s > 0);
    CHECK(l.link.latency_s > 0);
    CHECK(l.sources.contains("bandwidth_bytes_per_s"));
    CHECK(l.sources.contains("latency_s"));
  }
  // Fitted to Vidur's cross-node send_recv (a100_dgx): α 29 µs, 7.77 GB/s.
  CHECK(load_network_link("infiniband-hdr").link.latency_s == 2.9e-5);
  CHECK(load_network_link("ethernet-tcp").shared_per_node);
  GpuSpec a100;
  a100.name = "a100-40gb";
  GpuSpec h100;
  h100.name = "h100-sxm";
  CHECK(default_network_link_name(a100) == "infiniband-hdr");
  CHECK(default_network_link_name(h100) == "infiniband-ndr");
  CHECK_THROWS_AS(load_network_link("infiniband-xdr"), ConfigError);
}

}  // namespace
}  // namespace servesim::hardware
