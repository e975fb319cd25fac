#include "launcher/plan/address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>

#include "common/error.h"

namespace paddle::launcher {
std::string Endpoint::str() const { return port ? fmt::format("{}:{}", ip, *port) : ip; }

bool is_ipv4(std::string_view text) {
  in_addr addr{};
  return inet_pton(AF_INET, std::string(text).c_str(), &addr) == 1;
}

std::vector<std::string> parse_ip_list(std::string_view text, std::string_view flag) {
  std::vector<std::string> ips = split_list(text, flag);
  for (size_t i = 0; i < ips.size(); ++i) {
    if (!is_ipv4(ips[i]))
      throw common::UsageError(fmt::format("{}: '{}' is not an IPv4 address", flag, ips[i]));
    if (std::find(ips.begin(), ips.begin() + i, ips[i]) != ips.begin() + i)
      throw common::UsageError(fmt::format("{}: '{}' is listed twice", flag, ips[i]));
  }
  return ips;
}

std::vector<Endpoint> parse_endpoint_list(std::string_view text, std::string_view flag,
                                          bool port_required) {
  std::vector<Endpoint> endpoints;
  for (const std::string& item : split_list(text, flag)) {
    Endpoint e;
    size_t colon = item.rfind(':');
    e.ip = item.substr(0, colon);
    if (colon != std::string::npos)
      e.port = parse_port(std::string_view(item).substr(colon + 1), fmt::format("{} entry '{}'", flag, item));
    else if (port_required)
      throw common::UsageError(fmt::format("{}: '{}' has no port (expected ip:port)", flag, item));
    if (!is_ipv4(e.ip))
      throw common::UsageError(fmt::format("{}: '{}' is not an IPv4 address", flag, e.ip));
    if (e.port && std::find(endpoints.begin(), endpoints.end(), e) != endpoints.end())
      throw common::UsageError(fmt::format("{}: '{}' is listed twice", flag, item));
    endpoints.push_back(std::move(e));
  }
  return endpoints;
}

std::vector<LocalInterface> local_ipv4_interfaces() {
  std::vector<LocalInterface> result;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return result;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    if (!(it->ifa_flags & IFF_UP)) continue;
    char buf[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) != nullptr) result.push_back({it->ifa_name, buf});
  }
  freeifaddrs(list);
  return result;
}

std::vector<std::string> local_ipv4_addresses() {
  std::vector<std::string> result;
  for (const auto& i : local_ipv4_interfaces())
    if (std::find(result.begin(), result.end(), i.ip) == result.end()) result.push_back(i.ip);
  return result;
}

std::optional<std::string> route_source_address(const std::string& ip) {
  // Connecting a UDP socket sends nothing; it only asks the kernel to choose the route.
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  if (::inet_pton(AF_INET, ip.c_str(), &to.sin_addr) != 1) return std::nullopt;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> source;
  sockaddr_in from{};
  socklen_t length = sizeof from;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &length) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET, &from.sin_addr, text, sizeof text) != nullptr) source = text;
  }
  ::close(fd);
  return source;
}

bool is_loopback(const std::string& ip) { return ip.starts_with("127."); }

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "?";
}

}  // namespace paddle::launcher
