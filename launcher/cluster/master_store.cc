#include "launcher/cluster/master_store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

#include "common/error.h"

namespace paddle::launcher {
namespace {

// How long a request to a live but loaded master may take.
constexpr auto kPatientRequest = std::chrono::minutes(2);

ControlStore::Changes from_store(store::StoreChanges changes) {
  ControlStore::Changes out;
  out.revision = changes.revision;
  for (auto& e : changes.entries) out.entries.push_back({std::move(e.key), std::move(e.value), e.revision});
  std::sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

}  // namespace

MasterStore::MasterStore(std::string master_ip, int master_port, bool host, std::string job_id, std::string node_ip,
                         std::chrono::milliseconds dead_after, std::optional<common::JobToken> token)
    : job_id_(std::move(job_id)),
      node_ip_(std::move(node_ip)),
      dead_after_(dead_after),
      server_(host ? std::make_unique<store::KvStoreServer>(master_ip, master_port, token, dead_after) : nullptr),
      // A master under load answers late, not never: a request is waited for as long as the
      // master's host acknowledges the connection; one that has vanished (cut off, or its host
      // gone) fails it after dead_after. A closed connection would cost this node its presence.
      client_(master_ip, master_port, dead_after_, kPatientRequest, std::move(token), heartbeat_prefix() + node_ip_,
              dead_after_) {}

void MasterStore::put(const std::string& key, const std::string& value) {
  if (!client_.try_put(key, value)) throw common::PeerError(describe() + " is unreachable");
}

std::vector<ControlStore::Entry> MasterStore::range(const std::string& prefix) { return from_store(client_.range(prefix)).entries; }

ControlStore::Changes MasterStore::watch(const std::vector<std::string>& prefixes, int64_t after,
                                         std::chrono::milliseconds wait) {
  Changes changes = from_store(client_.watch(prefixes, after, wait));
  std::sort(changes.entries.begin(), changes.entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  return changes;
}

void MasterStore::heartbeat() {
  {
    // The watch's thread and join() both say so first: one of them writes it, the other waits.
    std::lock_guard lock(announce_mutex_);
    if (!announced_) {
      put(heartbeat_prefix() + node_ip_, "1");
      announced_ = true;
      return;
    }
  }
  // Any request renews the presence: a launcher whose watch asked lately needs no other.
  if (std::chrono::steady_clock::now() - client_.last_heard() < dead_after_ / 4) return;
  if (!client_.try_get(heartbeat_prefix() + node_ip_)) put(heartbeat_prefix() + node_ip_, "1");
}

std::map<std::string, std::string> MasterStore::gone(const std::vector<std::string>& ips) {
  std::map<std::string, std::string> gone;
  const std::map<std::string, std::string> lost = client_.lost(heartbeat_prefix());
  if (lost.empty()) return gone;
  const std::unordered_set<std::string> members(ips.begin(), ips.end());
  for (const auto& [name, why] : lost) {
    const std::string ip = name.substr(heartbeat_prefix().size());
    if (ip == node_ip_ || !members.count(ip)) continue;
    gone[ip] = why == "its connection closed"
                   ? "its launcher is gone (its connection to the master closed)"
                   : fmt::format("its launcher is silent: {} (killed, stopped, or cut off from the network)", why);
  }
  return gone;
}

std::vector<std::string> MasterStore::silent(std::chrono::milliseconds over) {
  std::vector<std::string> ips;
  for (const auto& name : client_.silent(over))
    if (name.starts_with(heartbeat_prefix())) ips.push_back(name.substr(heartbeat_prefix().size()));
  return ips;
}

std::vector<std::string> MasterStore::alive_nodes() {
  const auto lost = client_.lost(heartbeat_prefix());
  std::vector<std::string> alive;
  for (const auto& key : client_.keys(heartbeat_prefix()))
    if (!lost.count(key)) alive.push_back(key.substr(heartbeat_prefix().size()));
  return alive;
}

std::optional<uint64_t> MasterStore::requests_served() {
  if (!server_) return std::nullopt;
  try {
    return nlohmann::json::parse(client_.stats()).at("requests").get<uint64_t>();
  } catch (const std::exception&) {  // the store busy or ending: the page says nothing of it this time
    return std::nullopt;
  }
}

}  // namespace paddle::launcher
