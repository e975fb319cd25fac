#pragma once
// The rank map of a multi-node job: which node is node 0, 1, ... and which global ranks its
// processes take. Every node computes it from the same registrations at the master, so every
// node prints the same map. The order is deterministic and never the order of arrival:
//   1. a node's --rank, when it gave one;
//   2. the order of --ips, for nodes listed there;
//   3. the node that hosts the master (as Paddle's launcher ranks its master's pod first);
//   4. sorted IP address.
// With --sort_ip (every node must give it) the order is sorted IP address alone, as Paddle's.
// Global ranks follow node ranks: node 0's processes first, in their local order.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace paddle::launcher {

// A node as it registers with the master.
struct NodeRegistration {
  std::string ip;  // the address the other nodes reach it by
  std::string hostname;
  std::optional<int> requested_rank;   // --rank
  std::vector<std::string> endpoints;  // its trainers' (PS: workers') ip:port, in local order
  std::vector<std::string> server_endpoints;  // a PS job's servers on this node
  int ps_store_port = 0;  // a PS job: the port node 0 offers for the workers' Gloo store
  // "ip:port" kept free on this node for a Paddle program's own TCPStore, which rank 0 binds:
  // node 0's becomes every process's PADDLE_MASTER, as Paddle's launcher uses pod 0's
  // "candidate". Never the launcher's master store, nor any process's endpoint.
  std::string tcp_store;
  // A job whose nodes its lists fix (--ips, PS --servers/--workers): what the lists gave this
  // node, which every node must have been given alike (rank_nodes checks). Empty otherwise.
  std::string job_lists;
  std::string devices;                 // "0,1" for GPUs; "" on the CPU
  int max_restarts = 0;                // must agree on every node
  int restarts_used = 0;               // of max_restarts, as far as this node knows (a newcomer: 0)
  // How it asks to be ranked beyond --rank: "sort_ip" (--sort_ip), "master" (it hosts the
  // job's master), or "".
  std::string order;

  nlohmann::json to_json() const;
  // Throws common::PeerError naming what is malformed.
  static NodeRegistration from_json(const std::string& text);
  static NodeRegistration from_parsed(const nlohmann::json& j);  // the same, from parsed JSON
};

// What a registration's job_lists holds for the lists `lists`: the text itself up to 160
// characters; past that, its start, its length and its CRC-32, so that a registration stays
// small at thousands of nodes (--ips names every node) and two nodes' lists still compare.
std::string job_lists_summary(const std::string& lists);

struct RankedNode {
  int node_rank = 0;
  int first_global_rank = 0;
  NodeRegistration node;
};

// The registrations in rank order. Throws common::UsageError naming the nodes when two claim
// the same --rank, a --rank is not below the node count, or their --max_restarts, --sort_ip or
// job lists disagree.
std::vector<RankedNode> rank_nodes(std::vector<NodeRegistration> nodes, const std::vector<std::string>& ips_order);

// The rank map the console shows whole up to this many nodes.
inline constexpr int kRankMapConsoleNodes = 16;

// One line per node: "node 0  10.0.0.1 (host-a)  2 process(es)  ranks 0-1  devices cpu"; a PS
// node adds "  1 server(s)", and one with servers alone says "0 process(es)  no ranks".
// With `shown_around` (this node's rank), a map of more than kRankMapConsoleNodes nodes shows
// the first 4, that node and the last 2, and says how many there are in all in place of the rest.
std::string rank_map_text(const std::vector<RankedNode>& nodes, std::optional<int> shown_around = std::nullopt);

}  // namespace paddle::launcher
