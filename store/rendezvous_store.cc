#include "store/rendezvous_store.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/wait.h"
#include "store/store_verbs.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

constexpr auto kRetryInterval = milliseconds(20);

}  // namespace

RendezvousStore::RendezvousStore(std::string ip, int port, milliseconds timeout, milliseconds request_timeout,
                                 std::optional<common::JobToken> token)
    : timeout_(timeout), client_(std::move(ip), port, request_timeout, std::move(token)) {}

bool RendezvousStore::try_put(const std::string& key, const std::string& value) { return put_value(client_, key, value); }

std::optional<std::string> RendezvousStore::try_get(const std::string& key) { return get_value(client_, key); }

void RendezvousStore::set(const std::string& key, const std::vector<char>& data) {
  const std::string value(data.begin(), data.end());
  if (!common::wait_until(timeout_, [&] { return try_put(key, value); }, kRetryInterval))
    throw common::TimeoutError(fmt::format("key-value store {} unreachable for {} s (rank 0 hosts it)", endpoint(),
                                           timeout_.count() / 1000));
}

// The value of `key` once it is there, waiting on the server (a long poll) up to `deadline`, and
// asking again after kRetryInterval while the server is not up yet; nothing at the deadline.
std::optional<std::string> RendezvousStore::value_by(const std::string& key, std::chrono::steady_clock::time_point deadline) {
  std::optional<std::string> value;
  common::retry_until<common::PeerError, StoreRefused>(deadline, kRetryInterval, [&] {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left > milliseconds(0)) value = wait_value(client_, key, left);
    return value.has_value();
  });
  return value;
}

std::vector<char> RendezvousStore::get(const std::string& key) {
  if (auto value = value_by(key, std::chrono::steady_clock::now() + timeout_))
    return std::vector<char>(value->begin(), value->end());
  throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(), key,
                                         timeout_.count() / 1000));
}

void RendezvousStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void RendezvousStore::wait(const std::vector<std::string>& keys, const milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& key : keys) {
    if (!value_by(key, deadline))
      throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(),
                                             key, timeout.count() / 1000));
  }
}

}  // namespace paddle::store
