#include "store/store_verbs.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

// The longest single wait asked of the server; longer waits are several requests.
constexpr auto kLongestPoll = milliseconds(60000);

}  // namespace

bool put_value(StoreClient& client, const std::string& key, const std::string& value) {
  auto answer = client.request(http::verb::put, "/kv/" + encode_key(key), value);
  if (!answer) return false;
  if (answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}: PUT {} answered {}", client.endpoint(), key, answer->status));
  return true;
}

std::optional<std::string> get_value(StoreClient& client, const std::string& key) {
  auto answer = client.checked(http::verb::get, "/kv/" + encode_key(key), "", "GET " + key);
  if (answer.status == 404) return std::nullopt;
  return std::move(answer.body);
}

std::optional<std::string> wait_value(StoreClient& client, const std::string& key, milliseconds wait) {
  wait = std::clamp(wait, milliseconds(0), kLongestPoll);
  const std::string target = fmt::format("/wait/{}?timeout_ms={}", encode_key(key), wait.count());
  auto answer = client.checked(http::verb::get, target, "", "wait for " + key, wait, true);
  if (answer.status != 200) return std::nullopt;
  return std::move(answer.body);
}

}  // namespace paddle::store
