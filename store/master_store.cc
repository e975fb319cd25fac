#include "store/master_store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

#include "common/error.h"
#include "store/store_verbs.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

// How long a request to a live but loaded master may take.
constexpr auto kPatientRequest = std::chrono::minutes(2);
// The longest single watch asked of the server; the caller watches again after it.
constexpr auto kLongestPoll = milliseconds(60000);

}  // namespace

MasterStore::MasterStore(std::string master_ip, int master_port, bool host, std::string job_id, std::string node_ip,
                         std::chrono::milliseconds dead_after, std::optional<common::JobToken> token)
    : job_id_(std::move(job_id)),
      node_ip_(std::move(node_ip)),
      dead_after_(dead_after),
      server_(host ? std::make_unique<KvStoreServer>(master_ip, master_port, token, dead_after) : nullptr),
      // A master under load answers late, not never: a request is waited for as long as the
      // master's host acknowledges the connection; one that has vanished (cut off, or its host
      // gone) fails it after dead_after. A closed connection would cost this node its presence.
      client_(master_ip, master_port, kPatientRequest, std::move(token), heartbeat_prefix() + node_ip_, dead_after_) {}

void MasterStore::put(const std::string& key, const std::string& value) {
  if (!put_value(client_, key, value)) throw common::PeerError(describe() + " is unreachable");
}

std::optional<std::string> MasterStore::get(const std::string& key) { return get_value(client_, key); }

std::string MasterStore::add_if_absent(const std::string& key, const std::string& value) {
  auto answer = client_.checked(http::verb::post, "/kv/" + encode_key(key), value, "POST " + key);
  if (answer.status == 201) return value;
  if (answer.status == 409) return std::move(answer.body);
  throw common::PeerError(fmt::format("{}: POST {} answered {}", describe(), key, answer.status));
}

std::optional<std::string> MasterStore::wait_for(const std::string& key, milliseconds wait) {
  return wait_value(client_, key, wait);
}

nlohmann::json MasterStore::answer_json(const std::string& target, const std::string& what, milliseconds wait,
                                        bool long_poll) {
  const HttpAnswer answer = client_.checked(http::verb::get, target, "", what, wait, long_poll);
  try {
    return nlohmann::json::parse(answer.body);
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("{}: a malformed {} answer: {}", describe(), what, e.what()));
  }
}

ControlStore::Changes MasterStore::changes_answer(const std::string& target, const std::string& what, milliseconds wait,
                                                 bool long_poll) {
  const nlohmann::json json = answer_json(target, what, wait, long_poll);
  try {
    Changes changes;
    changes.revision = json.at("revision").get<int64_t>();
    for (const auto& e : json.at("entries"))
      changes.entries.push_back(
          {e.at("key").get<std::string>(), e.at("value").get<std::string>(), e.at("revision").get<int64_t>()});
    return changes;
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("{}: a malformed {} answer: {}", describe(), what, e.what()));
  }
}

std::vector<ControlStore::Entry> MasterStore::range(const std::string& prefix) {
  Changes changes = changes_answer("/range/" + encode_key(prefix), "range " + prefix);
  std::sort(changes.entries.begin(), changes.entries.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return std::move(changes.entries);
}

ControlStore::Changes MasterStore::watch(const std::vector<std::string>& prefixes, int64_t after, milliseconds wait) {
  wait = std::clamp(wait, milliseconds(0), kLongestPoll);
  std::string target = fmt::format("/watch?after={}&timeout_ms={}", after, wait.count());
  for (const auto& p : prefixes) target += "&prefix=" + encode_key(p);
  Changes changes = changes_answer(target, "watch", wait, true);
  std::sort(changes.entries.begin(), changes.entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  return changes;
}

std::vector<std::string> MasterStore::keys(const std::string& prefix) {
  const std::string body = client_.checked(http::verb::get, "/keys/" + encode_key(prefix), "", "keys " + prefix).body;
  std::vector<std::string> keys;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    keys.push_back(body.substr(start, end - start));
    start = end + 1;
  }
  return keys;
}

std::map<std::string, std::string> MasterStore::lost(const std::string& prefix) {
  const nlohmann::json json = answer_json("/lost?prefix=" + encode_key(prefix), "lost");
  try {
    return json.get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("{}: a malformed lost answer: {}", describe(), e.what()));
  }
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
  if (!get(heartbeat_prefix() + node_ip_)) put(heartbeat_prefix() + node_ip_, "1");
}

std::map<std::string, std::string> MasterStore::gone(const std::vector<std::string>& ips) {
  std::map<std::string, std::string> gone;
  const std::map<std::string, std::string> lost = this->lost(heartbeat_prefix());
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

std::vector<std::string> MasterStore::silent(milliseconds over) {
  const nlohmann::json json = answer_json(fmt::format("/silent?over_ms={}", over.count()), "silent");
  std::vector<std::string> ips;
  for (const auto& name : json)
    if (name.is_string() && name.get<std::string>().starts_with(heartbeat_prefix()))
      ips.push_back(name.get<std::string>().substr(heartbeat_prefix().size()));
  return ips;
}

std::vector<std::string> MasterStore::alive_nodes() {
  const auto lost = this->lost(heartbeat_prefix());
  std::vector<std::string> alive;
  for (const auto& key : keys(heartbeat_prefix()))
    if (!lost.count(key)) alive.push_back(key.substr(heartbeat_prefix().size()));
  return alive;
}

std::optional<uint64_t> MasterStore::requests_served() {
  if (!server_) return std::nullopt;
  try {
    return answer_json("/stats", "stats").at("requests").get<uint64_t>();
  } catch (const std::exception&) {  // the store busy or ending: the page says nothing of it this time
    return std::nullopt;
  }
}

}  // namespace paddle::store
