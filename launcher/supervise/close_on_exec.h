#pragma once
// What a process the launcher starts inherits: its standard input, output and error, and nothing
// else, as with Python's subprocess (torchrun's and Paddle's launchers). Boost.Asio opens sockets
// without close-on-exec, so a worker started on the master's node would otherwise hold the master
// store's listening socket and its connections: after the launcher ends, the other nodes'
// requests would wait on a socket that only a dying worker keeps open.

#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace paddle::launcher {

// One past the highest descriptor a process may hold (its open-file limit, at most 65,536): where
// a walk of them one at a time ends, on a kernel without close_range. Only system calls.
inline int descriptor_limit() noexcept {
  rlimit limit{};
  return ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 16)) : 1024;
}

// Marks every descriptor from 3 up close-on-exec. For the child between fork and exec: only
// system calls, no allocation.
inline void close_inherited_descriptors_on_exec() noexcept {
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) == 0) return;
  const int last = descriptor_limit();  // a kernel before 5.11: one descriptor at a time
  for (int fd = 3; fd < last; ++fd) {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

}  // namespace paddle::launcher
