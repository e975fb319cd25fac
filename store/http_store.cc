#include "store/http_store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/parse.h"
#include "common/wait.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

constexpr auto kRetryInterval = milliseconds(20);
// The longest single wait asked of the server; longer waits are several requests.
constexpr auto kLongestPoll = milliseconds(60000);

}  // namespace

HttpStore::HttpStore(std::string ip, int port, milliseconds timeout, milliseconds request_timeout,
                     std::optional<common::JobToken> token, std::string presence, milliseconds dead_peer)
    : ip_(std::move(ip)),
      port_(port),
      timeout_(timeout),
      request_timeout_(request_timeout),
      token_(token),
      presence_(presence),
      dead_peer_(dead_peer),
      connection_(ip_, port_, std::move(token), std::move(presence), dead_peer) {}

std::optional<HttpAnswer> HttpStore::request(http::verb verb, const std::string& target, const std::string& body,
                                             milliseconds wait, bool long_poll) {
  std::unique_lock lock(mutex_);
  if (!long_poll && busy_ && polling_) {
    // A long poll holds the kept connection: a short request goes at once on a connection of
    // its own, closed after it (the presence stays: the kept connection still carries it).
    lock.unlock();
    StoreConnection transient(ip_, port_, token_, presence_, dead_peer_);
    auto answer = transient.exchange(verb, target, body, request_timeout_);
    transient.close();
    return answer;
  }
  if (long_poll) {
    turn_.wait(lock, [&] { return !busy_ && short_waiting_ == 0; });
  } else {
    ++short_waiting_;
    turn_.wait(lock, [&] { return !busy_; });
    --short_waiting_;
  }
  if (long_poll && stopping_) return std::nullopt;
  busy_ = true;
  polling_ = long_poll;
  lock.unlock();
  std::optional<HttpAnswer> answer;
  try {
    answer = connection_.exchange(verb, target, body, request_timeout_ + wait);
  } catch (...) {
    lock.lock();
    busy_ = polling_ = false;
    turn_.notify_all();
    throw;
  }
  lock.lock();
  busy_ = polling_ = false;
  if (answer) last_heard_ = std::chrono::steady_clock::now();
  turn_.notify_all();
  return answer;
}

void HttpStore::stop_waiting() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  if (busy_) connection_.interrupt();
}

HttpAnswer HttpStore::checked(http::verb verb, const std::string& target, const std::string& body,
                              const std::string& what, milliseconds wait, bool long_poll) {
  auto answer = request(verb, target, body, wait, long_poll);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status >= 400 && answer->status != 404 && answer->status != 408 && answer->status != 409)
    throw common::PeerError(fmt::format("key-value store {}: {} answered {}{}", endpoint(), what, answer->status,
                                        answer->body.empty() ? "" : ": " + answer->body));
  return std::move(*answer);
}

std::chrono::steady_clock::time_point HttpStore::last_heard() const {
  std::lock_guard lock(mutex_);
  return busy_ ? std::chrono::steady_clock::now() : last_heard_;
}

bool HttpStore::try_put(const std::string& key, const std::string& value) {
  auto answer = request(http::verb::put, "/kv/" + encode_key(key), value);
  if (!answer) return false;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: PUT {} answered {}", endpoint(), key, answer->status));
  return true;
}

std::optional<std::string> HttpStore::try_get(const std::string& key) {
  auto answer = checked(http::verb::get, "/kv/" + encode_key(key), "", "GET " + key);
  if (answer.status == 404) return std::nullopt;
  return std::move(answer.body);
}

std::string HttpStore::add_if_absent(const std::string& key, const std::string& value) {
  auto answer = checked(http::verb::post, "/kv/" + encode_key(key), value, "POST " + key);
  if (answer.status == 201) return value;
  if (answer.status == 409) return std::move(answer.body);
  throw common::PeerError(fmt::format("key-value store {}: POST {} answered {}", endpoint(), key, answer.status));
}

std::optional<std::string> HttpStore::wait_value(const std::string& key, milliseconds wait) {
  wait = std::clamp(wait, milliseconds(0), kLongestPoll);
  const std::string target = fmt::format("/wait/{}?timeout_ms={}", encode_key(key), wait.count());
  auto answer = checked(http::verb::get, target, "", "wait for " + key, wait, true);
  if (answer.status != 200) return std::nullopt;
  return std::move(answer.body);
}

StoreChanges HttpStore::parse_changes(const std::string& text) {
  StoreChanges changes;
  const auto json = nlohmann::json::parse(text);
  changes.revision = json.at("revision").get<int64_t>();
  for (const auto& e : json.at("entries"))
    changes.entries.push_back({e.at("key").get<std::string>(), e.at("value").get<std::string>(), e.at("revision").get<int64_t>()});
  return changes;
}

StoreChanges HttpStore::watch(const std::vector<std::string>& prefixes, int64_t after, milliseconds wait) {
  wait = std::clamp(wait, milliseconds(0), kLongestPoll);
  std::string target = fmt::format("/watch?after={}&timeout_ms={}", after, wait.count());
  for (const auto& p : prefixes) target += "&prefix=" + encode_key(p);
  auto answer = checked(http::verb::get, target, "", "watch", wait, true);
  try {
    return parse_changes(answer.body);
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("key-value store {}: a malformed watch answer: {}", endpoint(), e.what()));
  }
}

StoreChanges HttpStore::range(const std::string& prefix) {
  auto answer = checked(http::verb::get, "/range/" + encode_key(prefix), "", "range " + prefix);
  try {
    return parse_changes(answer.body);
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("key-value store {}: a malformed range answer: {}", endpoint(), e.what()));
  }
}

std::vector<std::string> HttpStore::keys(const std::string& prefix) {
  auto answer = checked(http::verb::get, "/keys/" + encode_key(prefix), "", "keys " + prefix);
  std::vector<std::string> keys;
  size_t start = 0;
  while (start < answer.body.size()) {
    size_t end = answer.body.find('\n', start);
    if (end == std::string::npos) end = answer.body.size();
    keys.push_back(answer.body.substr(start, end - start));
    start = end + 1;
  }
  return keys;
}

std::map<std::string, std::string> HttpStore::lost(const std::string& prefix) {
  auto answer = checked(http::verb::get, "/lost?prefix=" + encode_key(prefix), "", "lost");
  try {
    return nlohmann::json::parse(answer.body).get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("key-value store {}: a malformed lost answer: {}", endpoint(), e.what()));
  }
}

std::vector<std::string> HttpStore::silent(milliseconds over) {
  auto answer = checked(http::verb::get, fmt::format("/silent?over_ms={}", over.count()), "", "silent");
  try {
    return nlohmann::json::parse(answer.body).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw common::PeerError(fmt::format("key-value store {}: a malformed silent answer: {}", endpoint(), e.what()));
  }
}

std::string HttpStore::stats() { return checked(http::verb::get, "/stats", "", "stats").body; }

void HttpStore::set(const std::string& key, const std::vector<char>& data) {
  const std::string value(data.begin(), data.end());
  if (!common::wait_until(timeout_, [&] { return try_put(key, value); }, kRetryInterval))
    throw common::TimeoutError(fmt::format("key-value store {} unreachable for {} s (rank 0 hosts it)", endpoint(),
                                           timeout_.count() / 1000));
}

// The value of `key` once it is there, waiting on the server (a long poll) up to `deadline`, and
// asking again after kRetryInterval while the server is not up yet; nothing at the deadline.
std::optional<std::string> HttpStore::value_by(const std::string& key, std::chrono::steady_clock::time_point deadline) {
  std::optional<std::string> value;
  common::retry_until<common::PeerError, StoreRefused>(deadline, kRetryInterval, [&] {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left > milliseconds(0)) value = wait_value(key, left);
    return value.has_value();
  });
  return value;
}

std::vector<char> HttpStore::get(const std::string& key) {
  if (auto value = value_by(key, std::chrono::steady_clock::now() + timeout_))
    return std::vector<char>(value->begin(), value->end());
  throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(), key,
                                         timeout_.count() / 1000));
}

void HttpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void HttpStore::wait(const std::vector<std::string>& keys, const milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& key : keys) {
    if (!value_by(key, deadline))
      throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(),
                                             key, timeout.count() / 1000));
  }
}

}  // namespace paddle::store
