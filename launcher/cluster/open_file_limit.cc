#include "launcher/cluster/open_file_limit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "common/error.h"

namespace paddle::launcher {

void ensure_master_open_files(int nnodes) {
  const rlim_t needed = static_cast<rlim_t>(nnodes) + kMasterSpareFiles;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;  // nothing to compare against
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? needed : std::min<rlim_t>(limit.rlim_max, needed);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return;
  throw common::UsageError(fmt::format(
      "--nnodes={}: the master needs {} open files (one connection per node and {} to spare), but `ulimit -n` "
      "allows {} (hard limit {}): raise it to {}, or meet at etcd (--master=etcd://HOST:PORT)",
      nnodes, needed, kMasterSpareFiles, limit.rlim_cur, limit.rlim_max, needed));
}

std::optional<std::string> listen_queue_warning(int nnodes) {
  std::vector<std::string> short_settings;
  int shortest = nnodes;
  for (const char* name : {"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"}) {
    std::string path = "/proc/sys/" + std::string(name);
    std::replace(path.begin(), path.end(), '.', '/');
    std::ifstream file(path);
    int value = 0;
    if (!(file >> value) || value >= nnodes) continue;
    short_settings.push_back(fmt::format("{} = {}", name, value));
    shortest = std::min(shortest, value);
  }
  if (short_settings.empty()) return std::nullopt;
  return fmt::format("--nnodes={}: the kernel queues {} connections at once for the master ({}), so nodes that connect "
                     "together past it wait 1 s, then 3 s, 7 s, ... to try again: on this host, sysctl -w each to {} "
                     "or more",
                     nnodes, shortest, fmt::join(short_settings, ", "), nnodes);
}

}  // namespace paddle::launcher
