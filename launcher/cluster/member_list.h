#pragma once
// A generation's member list (JOB.gG.members, cluster_link.h) as it travels in the store, and
// its decoding into the rank map.
//
// The value: "zcol:" and then, base64-encoded, the zlib stream (RFC 1950) of one JSON object,
// the registrations (NodeRegistration::to_json) in the order the judge fixed, column by column:
//   {"nodes": N, "columns": {"ip": [N values], "hostname": [...], "endpoints": [[...], ...], ...}}
// In a node's strings, "@" stands for its own ip before a ':' ("@:6170"); a string of its own
// that starts with '@' has it doubled. Every node reads the whole list, so the master sends it N
// times: at 4,096 nodes the registrations' JSON lines are 940 KB (3.8 GB for the job) and this
// form 39 KB. Columns deflate better than lines (a node's fields apart from its neighbours'),
// and addresses written once (a column of ports is almost free). It also keeps the list under
// etcd's 1.5 MiB request limit well past 16,384 nodes. Base64, so that a JSON answer (/range,
// etcd's gateway) can carry it.
//
// MemberLists decodes the values a launcher reads and ranks them (rank_nodes), keeping the
// last, shared, so that the readers of one list decode it once. One launcher has one;
// control_plane_bench's K agents, which stand for K machines that would each decode their own
// list at the same time, share one. (An elastic node decodes a list once more, with
// decode_member_list, to learn whether it is a member.)

#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "launcher/plan/rank_map.h"

namespace paddle::launcher {

std::string encode_member_list(const std::vector<NodeRegistration>& nodes);
// Throws common::PeerError naming what is malformed.
std::vector<NodeRegistration> decode_member_list(const std::string& value);

class MemberLists {
 public:
  using Ranked = std::shared_ptr<const std::vector<RankedNode>>;
  struct List {
    Ranked ranked;
    int restarts_used = 0;  // the most restarts any member has used: the job's count
  };

  // The rank map of the list `value` (rank_nodes with `ips_order`). Throws common::PeerError for
  // a malformed list and common::UsageError for registrations that contradict each other.
  List list(const std::string& value, const std::vector<std::string>& ips_order);

 private:
  // Shared while readers compare their list with the last one, which they do at once (a
  // process of agents, a thousand at a time): one reader at a time made each wait for the
  // others' comparisons of the whole list, and wake the next.
  std::shared_mutex mutex_;
  std::string last_value_;
  std::vector<std::string> last_order_;
  List last_;
};

}  // namespace paddle::launcher
