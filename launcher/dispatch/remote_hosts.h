#pragma once
// The hosts a dispatched job runs on (dispatcher.h), in their order: host 0 is node 0 and holds
// the job's master. Three sources, one form:
//   --hostfile=FILE     DeepSpeed's lines, `host slots=N`, `#` comments and blank lines allowed;
//                       a host may be written user@host:port
//   --hosts=LIST        user@host:port,... for short lists
//   --cluster_conf      HOSTS of a cluster_train conf.py (cluster_conf.h)
// --include / --exclude then pick hosts by name: `host1,host2` (DeepSpeed's `@` works too).

#include <optional>
#include <string>
#include <vector>

namespace paddle::launcher {

struct RemoteHost {
  std::string user;      // empty: ssh's default
  std::string host;      // a name or an address
  std::optional<int> port;  // ssh's port; empty: ssh's default
  std::optional<int> slots;  // the hostfile's slots=N: processes on this host

  // "user@host:port", as written (what ssh is given, and what messages name).
  std::string name() const;
  // "user@host", the ssh destination.
  std::string destination() const;
};

// One "user@host:port" item; `what` names where it came from, for the error.
RemoteHost parse_remote_host(const std::string& text, const std::string& what);

// Throws common::UsageError naming FILE:LINE for a malformed line, or the file when it cannot be
// read or names no host, or a host listed twice.
std::vector<RemoteHost> read_hostfile(const std::string& path);

// Throws common::UsageError naming --hosts.
std::vector<RemoteHost> parse_host_list(const std::string& list, const std::string& what);

// The hosts `include` names (all when empty), less those `exclude` names, in their order.
// Throws common::UsageError for a name that is not among `hosts`, or when none is left.
std::vector<RemoteHost> select_hosts(const std::vector<RemoteHost>& hosts, const std::string& include,
                                     const std::string& exclude);

}  // namespace paddle::launcher
