#include "launcher/cluster/master_store.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(2);

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:.3g} s", ms.count() / 1000.0); }

}  // namespace

MasterStore::MasterStore(std::string master_ip, int master_port, bool host, std::string job_id, std::string node_ip,
                         std::chrono::milliseconds dead_after, std::optional<common::JobToken> token)
    : master_ip_(std::move(master_ip)),
      master_port_(master_port),
      job_id_(std::move(job_id)),
      node_ip_(std::move(node_ip)),
      dead_after_(dead_after),
      token_(std::move(token)),
      server_(host ? std::make_unique<collective::KvStoreServer>(master_ip_, master_port_, token_) : nullptr),
      client_(master_ip_, master_port_, dead_after_, kRequestTimeout, token_) {}

void MasterStore::put(const std::string& key, const std::string& value) {
  if (!client_.try_put(key, value)) throw common::PeerError(describe() + " is unreachable");
}

std::vector<ControlStore::Entry> MasterStore::range(const std::string& prefix) {
  std::vector<Entry> entries;
  for (const auto& key : client_.keys(prefix)) {
    auto value = client_.try_get(key);
    auto age = client_.age(key);
    if (value && age) entries.push_back({key, std::move(*value), -static_cast<int64_t>(age->count())});
  }
  return entries;
}

void MasterStore::heartbeat() {
  {
    std::lock_guard lock(presence_mutex_);
    if (!presence_ && !server_) presence_ = collective::Liveness(master_ip_, master_port_, token_).announce(heartbeat_key(node_ip_));
  }
  put(heartbeat_key(node_ip_), "1");
}

std::optional<std::string> MasterStore::gone(const std::string& ip) {
  if (ip == node_ip_) return std::nullopt;
  if (auto lost = collective::Liveness(master_ip_, master_port_, token_).lost())
    if (std::find(lost->begin(), lost->end(), heartbeat_key(ip)) != lost->end())
      return "its launcher is gone (its connection to the master closed)";
  if (auto age = client_.age(heartbeat_key(ip)); age && *age > dead_after_)
    return fmt::format("its launcher sent no heartbeat for {} (killed, or cut off from the network)", seconds(*age));
  return std::nullopt;
}

std::vector<std::string> MasterStore::alive_nodes() {
  std::vector<std::string> alive;
  const std::string prefix = job_id_ + ".hb.";
  for (const auto& key : client_.keys(prefix)) {
    const std::string ip = key.substr(prefix.size());
    if (!gone(ip)) alive.push_back(ip);
  }
  return alive;
}

}  // namespace paddle::launcher
