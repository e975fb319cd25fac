#include "store/etcd_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "common/error.h"
#include "common/wait.h"

namespace paddle::store {
namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(2);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

}  // namespace

EtcdStore::EtcdStore(std::vector<EtcdEndpoint> endpoints, std::string job_id, std::string node_ip,
                     std::chrono::milliseconds dead_after)
    : etcd_(std::move(endpoints), kRequestTimeout),
      job_id_(std::move(job_id)),
      node_ip_(std::move(node_ip)),
      dead_after_(dead_after) {
  // etcd counts leases in whole seconds.
  lease_ = etcd_.grant_lease(std::chrono::ceil<std::chrono::seconds>(dead_after_));
  etcd_.put(heartbeat_key(node_ip_), "1", lease_);
}

EtcdStore::~EtcdStore() { etcd_.revoke_lease(lease_); }

std::vector<ControlStore::Entry> EtcdStore::range(const std::string& prefix) {
  std::vector<Entry> entries;
  for (auto& kv : etcd_.range(prefix)) entries.push_back({std::move(kv.key), std::move(kv.value), kv.mod_revision});
  return entries;
}

void EtcdStore::heartbeat() {
  if (!etcd_.keep_alive(lease_))
    throw LeaseEnded(fmt::format("this node's lease at {} ended: no keep-alive reached it for {:.3g} s, so the "
                                        "other nodes count this node as gone",
                                        describe(), dead_after_.count() / 1000.0));
  etcd_.put(heartbeat_key(node_ip_), std::to_string(++beats_), lease_);
}

std::optional<std::string> EtcdStore::wait_for(const std::string& key, std::chrono::milliseconds wait) {
  std::optional<std::string> value;
  common::wait_until(wait, [&] { return (value = etcd_.get(key)).has_value(); }, kPollInterval);
  return value;
}

ControlStore::Changes EtcdStore::watch(const std::vector<std::string>& prefixes, int64_t after,
                                       std::chrono::milliseconds wait) {
  Changes changes;
  common::wait_until(
      wait,
      [&] {
        changes = {after, {}};
        for (const auto& prefix : prefixes)
          for (auto& kv : etcd_.range(prefix)) {
            if (kv.mod_revision <= after) continue;
            changes.revision = std::max(changes.revision, kv.mod_revision);
            changes.entries.push_back({std::move(kv.key), std::move(kv.value), kv.mod_revision});
          }
        return !changes.entries.empty();
      },
      kPollInterval);
  std::sort(changes.entries.begin(), changes.entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  return changes;
}

std::vector<std::string> EtcdStore::silent(std::chrono::milliseconds over) {
  const auto now = std::chrono::steady_clock::now();
  const std::string prefix = heartbeat_key("");
  std::vector<std::string> silent;
  std::lock_guard lock(seen_mutex_);
  for (const auto& kv : etcd_.range(prefix)) {
    auto& [seen_revision, seen_at] = seen_[kv.key.substr(prefix.size())];
    if (kv.mod_revision != seen_revision || seen_at == std::chrono::steady_clock::time_point{}) {
      seen_revision = kv.mod_revision;
      seen_at = now;
    }
    if (now - seen_at > over) silent.push_back(kv.key.substr(prefix.size()));
  }
  return silent;
}

std::map<std::string, std::string> EtcdStore::gone(const std::vector<std::string>& ips) {
  const std::vector<std::string> listed = alive_nodes();
  const std::unordered_set<std::string> alive(listed.begin(), listed.end());
  std::map<std::string, std::string> gone;
  for (const auto& ip : ips)
    if (ip != node_ip_ && !alive.count(ip))
      gone[ip] = fmt::format("its lease at {} ended: no keep-alive for {:.3g} s (its launcher was killed, or it is cut "
                             "off from the network)",
                             describe(), dead_after_.count() / 1000.0);
  return gone;
}

std::vector<std::string> EtcdStore::alive_nodes() {
  std::vector<std::string> alive;
  const std::string prefix = heartbeat_key("");
  for (const auto& kv : etcd_.range(prefix)) alive.push_back(kv.key.substr(prefix.size()));
  return alive;
}

}  // namespace paddle::store
