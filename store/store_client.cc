#include "store/store_client.h"

#include <fmt/format.h>

#include "common/error.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

}  // namespace

StoreClient::StoreClient(std::string ip, int port, milliseconds request_timeout, std::optional<common::JobToken> token,
                         std::string presence, milliseconds dead_peer)
    : ip_(std::move(ip)),
      port_(port),
      request_timeout_(request_timeout),
      token_(token),
      presence_(presence),
      dead_peer_(dead_peer),
      connection_(ip_, port_, std::move(token), std::move(presence), dead_peer) {}

std::optional<HttpAnswer> StoreClient::request(http::verb verb, const std::string& target, const std::string& body,
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

void StoreClient::stop_waiting() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  if (busy_) connection_.interrupt();
}

HttpAnswer StoreClient::checked(http::verb verb, const std::string& target, const std::string& body,
                              const std::string& what, milliseconds wait, bool long_poll) {
  auto answer = request(verb, target, body, wait, long_poll);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status >= 400 && answer->status != 404 && answer->status != 408 && answer->status != 409)
    throw common::PeerError(fmt::format("key-value store {}: {} answered {}{}", endpoint(), what, answer->status,
                                        answer->body.empty() ? "" : ": " + answer->body));
  return std::move(*answer);
}

std::chrono::steady_clock::time_point StoreClient::last_heard() const {
  std::lock_guard lock(mutex_);
  return busy_ ? std::chrono::steady_clock::now() : last_heard_;
}

}  // namespace paddle::store
