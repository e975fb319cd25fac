#include "launcher/plan/host_names.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/parse.h"
#include "common/wait.h"
#include "launcher/plan/address.h"
#include "launcher/plan/launch_options.h"

namespace paddle::launcher {
namespace {

using common::UsageError;

// What a resolver may be asked for: letters, digits, '-', '_' and '.', not all digits and dots
// (a mistyped address such as 10.0.0.300 is refused at once, never waited for).
void check_name(const std::string& name, std::string_view what) {
  const bool plain = !name.empty() && name.size() <= 253 && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
  const bool numeric = std::ranges::all_of(name, [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!plain || numeric) throw UsageError(fmt::format("{}: '{}' is not an IPv4 address or a host name", what, name));
}

}  // namespace

std::optional<std::string> system_lookup(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return std::nullopt;
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  std::optional<std::string> ip;
  if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text) != nullptr) ip = text;
  ::freeaddrinfo(found);
  return ip;
}

std::optional<std::string> resolve_ipv4(const std::string& host) {
  return is_ipv4(host) ? std::optional<std::string>(host) : system_lookup(host);
}

HostNameResolver::HostNameResolver(Settings settings)
    : settings_(std::move(settings)), deadline_(std::chrono::steady_clock::now() + settings_.patience) {}

std::string HostNameResolver::address(const std::string& text, std::string_view what) {
  if (is_ipv4(text)) return text;
  check_name(text, what);
  bool said = false;
  while (true) {
    if (auto ip = settings_.lookup(text)) {
      const std::string entry = text + "=" + *ip;
      if (std::ranges::find(resolved_, entry) == resolved_.end()) resolved_.push_back(entry);
      return *ip;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw UsageError(fmt::format("{}: the host name '{}' does not resolve to an IPv4 address (waited {} s; is it in "
                                   "/etc/hosts or DNS, and is its pod ready?)",
                                   what, text, settings_.patience.count() / 1000));
    if (!said) {
      const std::string line = fmt::format("waiting for the host name '{}' ({}) to resolve, up to {} s", text, what,
                                           left.count() / 1000);
      if (settings_.say) settings_.say(line);
      else fmt::print(stderr, "paddle-launch: {}\n", line);
      said = true;
    }
    if (!common::sleep_for(std::min(left, settings_.poll), settings_.stop)) {
      const std::string waiting_for = fmt::format("waiting for the host name '{}' ({}) to resolve", text, what);
      if (settings_.stopped) settings_.stopped(waiting_for);
      throw common::Error("stopped " + waiting_for);
    }
  }
}

std::string HostNameResolver::endpoint(const std::string& text, std::string_view what) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return address(text, what);
  return address(text.substr(0, colon), what) + text.substr(colon);
}

std::string HostNameResolver::list(const std::string& text, std::string_view what) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find_first_of(",;", start), text.size());
    const std::string item(common::trim(std::string_view(text).substr(start, end - start)));
    out += item.empty() ? item : endpoint(item, what);
    if (end < text.size()) out += text[end];
    start = end + 1;
  }
  return out;
}

void resolve_host_names(LaunchOptions& o, EnvMap& env, HostNameResolver& resolver) {
  o.ips = resolver.list(o.ips, "--ips");
  if (o.host) o.host = resolver.address(*o.host, "--host");
  if (o.servers) o.servers = resolver.list(*o.servers, "--servers");
  if (o.workers) o.workers = resolver.list(*o.workers, "--workers");
  if (o.heter_workers) o.heter_workers = resolver.list(*o.heter_workers, "--heter_workers");
  if (o.master && !o.master->starts_with("etcd://")) o.master = resolver.endpoint(*o.master, "--master");
  if (!o.master)
    if (auto it = env.find("PADDLE_MASTER"); it != env.end() && !it->second.empty() && !it->second.starts_with("etcd://"))
      it->second = resolver.endpoint(it->second, "PADDLE_MASTER");
  if (!o.host)
    if (auto it = env.find("POD_IP"); it != env.end() && !it->second.empty())
      it->second = resolver.address(it->second, "POD_IP");
}

}  // namespace paddle::launcher
