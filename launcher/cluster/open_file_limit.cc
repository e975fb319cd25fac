#include "launcher/cluster/open_file_limit.h"

#include <fmt/format.h>
#include <sys/resource.h>

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

}  // namespace paddle::launcher
