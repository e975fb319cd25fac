#include "collective/http_store.h"

#include <fmt/format.h>

#include "collective/http_exchange.h"
#include "common/error.h"
#include "common/wait.h"

namespace paddle::collective {
namespace {

namespace http = boost::beast::http;

constexpr auto kRetryInterval = std::chrono::milliseconds(20);
constexpr auto kRequestTimeout = std::chrono::seconds(10);

}  // namespace

HttpStore::HttpStore(std::string ip, int port, std::chrono::milliseconds timeout)
    : ip_(std::move(ip)), port_(port), timeout_(timeout) {}

bool HttpStore::try_put(const std::string& key, const std::string& value) {
  auto answer = http_exchange(ip_, port_, http::verb::put, "/kv/" + encode_key(key), value, kRequestTimeout);
  if (!answer) return false;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: PUT {} answered {}", endpoint(), key, answer->status));
  return true;
}

std::optional<std::string> HttpStore::try_get(const std::string& key) {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/kv/" + encode_key(key), "", kRequestTimeout);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status == 404) return std::nullopt;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: GET {} answered {}", endpoint(), key, answer->status));
  return std::move(answer->body);
}

void HttpStore::set(const std::string& key, const std::vector<char>& data) {
  const std::string value(data.begin(), data.end());
  if (!common::wait_until(timeout_, [&] { return try_put(key, value); }, kRetryInterval))
    throw common::TimeoutError(fmt::format("key-value store {} unreachable for {} s (rank 0 hosts it)", endpoint(),
                                           timeout_.count() / 1000));
}

std::vector<char> HttpStore::get(const std::string& key) {
  wait({key});
  auto value = try_get(key);
  if (!value) throw common::PeerError(fmt::format("key-value store {}: key '{}' vanished", endpoint(), key));
  return std::vector<char>(value->begin(), value->end());
}

void HttpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void HttpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const auto& key : keys) {
    auto present = [&] {
      auto answer = http_exchange(ip_, port_, http::verb::get, "/kv/" + encode_key(key), "", kRequestTimeout);
      return answer && answer->status == 200;
    };
    if (!common::wait_until(timeout, present, kRetryInterval))
      throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(),
                                             key, timeout.count() / 1000));
  }
}

}  // namespace paddle::collective
