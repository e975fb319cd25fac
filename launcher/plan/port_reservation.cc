#include "launcher/plan/port_reservation.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr int kMaxProbes = 200;

// Binds a fresh TCP socket to `ip`:`port` (port 0: any free port). Returns the socket, or -1
// with errno set.
int bind_socket(in_addr_t ip, int port, bool reuse_addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (reuse_addr) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = ip;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

}  // namespace

std::string default_port_lock_dir(const std::string& tmpdir) {
  return (tmpdir.empty() ? std::string("/tmp") : tmpdir) + "/paddle-launch-ports";
}

PortReservation::PortReservation(std::string lock_dir) : lock_dir_(std::move(lock_dir)) {
  if (::mkdir(lock_dir_.c_str(), 01777) == 0) ::chmod(lock_dir_.c_str(), 01777);
}

PortReservation::~PortReservation() {
  release_sockets();
  for (int fd : lock_fds_) ::close(fd);
}

std::vector<int> PortReservation::take_free_ports(int count) {
  std::vector<int> ports;
  for (int probe = 0; probe < kMaxProbes && static_cast<int>(ports.size()) < count; ++probe) {
    int fd = bind_socket(htonl(INADDR_ANY), 0, false);
    if (fd < 0) continue;
    int port = bound_port(fd);
    std::string lock_path = fmt::format("{}/{}", lock_dir_, port);
    int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock_fd >= 0 && ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
      // Another paddle-launch holds this port for its children; keep our socket bound until
      // we are done so the kernel does not offer the same port again.
      ::close(lock_fd);
      sockets_.push_back(fd);
      continue;
    }
    // Without a usable lock directory the bound socket alone still protects the port from
    // other probes until release_sockets().
    if (lock_fd >= 0) lock_fds_.push_back(lock_fd);
    sockets_.push_back(fd);
    ports.push_back(port);
  }
  if (static_cast<int>(ports.size()) < count)
    throw common::UsageError(fmt::format("no free ports: found {} of the {} needed after {} probes on this machine",
                                 ports.size(), count, kMaxProbes));
  return ports;
}

void PortReservation::release_sockets() {
  for (int fd : sockets_) ::close(fd);
  sockets_.clear();
}

void check_ports_bindable(const std::string& ip, const std::vector<int>& ports, std::string_view what) {
  in_addr addr{};
  if (inet_pton(AF_INET, ip.c_str(), &addr) != 1) return;
  for (int port : ports) {
    int fd = bind_socket(addr.s_addr, port, true);
    if (fd >= 0) {
      ::close(fd);
      continue;
    }
    if (errno == EADDRINUSE)
      throw common::UsageError(fmt::format("{}: port {} on {} is already in use by another process", what, port, ip));
    return;  // EADDRNOTAVAIL and the like: not an address of this machine, nothing to check
  }
}

}  // namespace paddle::launcher
