#pragma once
// ClusterConf: the cluster_train `conf.py` of PaddlePaddle's old cluster scripts, read as it is,
// without Python. Only its subset is accepted, line by line:
//   NAME = "text"  or  'text'          a string
//   NAME = 7164                         an integer
//   NAME = ["a", 'b', ...]              a list of strings, which may span lines
//   # comment, blank lines, and bare string statements ('''...''' docstrings)
// Anything else (an expression, a call, an import) is a one-line error naming conf.py:LINE.
//
// Keys: HOSTS (user@host or user@host:port), ROOT_DIR, PADDLE_NIC, PADDLE_PORT,
// PADDLE_PORTS_NUM, PADDLE_PORTS_NUM_FOR_SPARSE, LD_LIBRARY_PATH. Other keys are kept in
// `ignored` (the caller says so), since old files carry a few more (PADDLE_USE_GPU).

#include <optional>
#include <string>
#include <vector>

#include "launcher/dispatch/remote_hosts.h"

namespace paddle::launcher {

struct ClusterConf {
  std::vector<RemoteHost> hosts;
  std::string root_dir;
  std::string nic;                       // PADDLE_NIC: the interface the job's traffic uses
  std::optional<int> port;               // PADDLE_PORT: the first port of the job on every host
  int ports_num = 1;                     // PADDLE_PORTS_NUM
  int ports_num_for_sparse = 0;          // PADDLE_PORTS_NUM_FOR_SPARSE
  std::string ld_library_path;           // LD_LIBRARY_PATH for every process
  std::vector<std::string> ignored;      // "NAME (conf.py:LINE)" of keys with no use here
};

// Throws common::UsageError naming FILE:LINE, or the file when it cannot be read or has no HOSTS.
ClusterConf read_cluster_conf(const std::string& path);

}  // namespace paddle::launcher
