#include "collective/http_store.h"

#include <fmt/format.h>

#include "collective/http_exchange.h"
#include "common/error.h"
#include "common/parse.h"
#include "common/wait.h"

namespace paddle::collective {
namespace {

namespace http = boost::beast::http;

constexpr auto kRetryInterval = std::chrono::milliseconds(20);

}  // namespace

HttpStore::HttpStore(std::string ip, int port, std::chrono::milliseconds timeout, std::chrono::milliseconds request_timeout,
                     std::optional<common::JobToken> token)
    : ip_(std::move(ip)), port_(port), timeout_(timeout), request_timeout_(request_timeout), token_(std::move(token)) {}

bool HttpStore::try_put(const std::string& key, const std::string& value) {
  auto answer = http_exchange(ip_, port_, http::verb::put, "/kv/" + encode_key(key), value, request_timeout_, token_);
  if (!answer) return false;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: PUT {} answered {}", endpoint(), key, answer->status));
  return true;
}

std::optional<std::string> HttpStore::try_get(const std::string& key) {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/kv/" + encode_key(key), "", request_timeout_, token_);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status == 404) return std::nullopt;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: GET {} answered {}", endpoint(), key, answer->status));
  return std::move(answer->body);
}

std::string HttpStore::add_if_absent(const std::string& key, const std::string& value) {
  auto answer = http_exchange(ip_, port_, http::verb::post, "/kv/" + encode_key(key), value, request_timeout_, token_);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status == 201) return value;
  if (answer->status == 409) return std::move(answer->body);
  throw common::PeerError(fmt::format("key-value store {}: POST {} answered {}", endpoint(), key, answer->status));
}

std::optional<std::chrono::milliseconds> HttpStore::age(const std::string& key) {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/age/" + encode_key(key), "", request_timeout_, token_);
  if (!answer) throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  if (answer->status == 404) return std::nullopt;
  return std::chrono::milliseconds(common::to_int(answer->body).value_or(0));
}

std::vector<std::string> HttpStore::keys(const std::string& prefix) {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/keys/" + encode_key(prefix), "", request_timeout_, token_);
  if (!answer || answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {} is unreachable", endpoint()));
  std::vector<std::string> keys;
  size_t start = 0;
  while (start < answer->body.size()) {
    size_t end = answer->body.find('\n', start);
    if (end == std::string::npos) end = answer->body.size();
    keys.push_back(answer->body.substr(start, end - start));
    start = end + 1;
  }
  return keys;
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
      auto answer = http_exchange(ip_, port_, http::verb::get, "/kv/" + encode_key(key), "", request_timeout_, token_);
      return answer && answer->status == 200;
    };
    if (!common::wait_until(timeout, present, kRetryInterval))
      throw common::TimeoutError(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(),
                                             key, timeout.count() / 1000));
  }
}

}  // namespace paddle::collective
