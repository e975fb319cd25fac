#include "collective/kv_store_handler.h"

#include <fmt/format.h>

#include "collective/http_exchange.h"

namespace paddle::collective {
namespace {

namespace http = boost::beast::http;

constexpr std::string_view kPrefix = "/kv/";
constexpr std::string_view kPresence = "/presence/";
constexpr std::string_view kAge = "/age/";
constexpr std::string_view kKeys = "/keys/";

}  // namespace

KvStoreHandler::KvStoreHandler(std::optional<common::JobToken> token) : token_(std::move(token)) {}

KvConnection KvStoreHandler::connect(std::string peer) const {
  KvConnection c;
  c.peer = std::move(peer);
  c.proven = !token_;
  return c;
}

KvStoreHandler::Response KvStoreHandler::respond(const Request& request, KvConnection& connection) {
  Response response;
  response.version(request.version());
  response.keep_alive(request.keep_alive());
  std::string_view target(request.target().data(), request.target().size());
  if (target == "/auth/challenge") {
    connection.challenge = common::make_challenge();
    response.body() = connection.challenge;
    response.keep_alive(true);
    response.result(http::status::ok);
  } else if (!connection.proven && !prove(request, connection)) {
    response.keep_alive(false);
    response.result(http::status::unauthorized);
  } else if (target.starts_with(kPresence) && request.method() == http::verb::put) {
    connection.presence = std::string(target.substr(kPresence.size()));
    response.keep_alive(true);
    response.result(http::status::ok);
  } else if (target == "/lost") {
    response.body() = keys_under("lost/", ",", true);
    response.result(http::status::ok);
  } else if (target.starts_with(kKeys) && request.method() == http::verb::get) {
    response.body() = keys_under(std::string(target.substr(kKeys.size())), "\n", false);
    response.result(http::status::ok);
  } else if (target.starts_with(kAge) && request.method() == http::verb::get) {
    std::lock_guard lock(mutex_);
    auto it = values_.find(std::string(target.substr(kAge.size())));
    response.result(it == values_.end() ? http::status::not_found : http::status::ok);
    if (it != values_.end())
      response.body() = std::to_string(
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - it->second.written).count());
  } else if (!target.starts_with(kPrefix)) {
    response.result(http::status::not_found);
  } else {
    answer_key(std::string(target.substr(kPrefix.size())), request, response);
  }
  response.prepare_payload();
  return response;
}

void KvStoreHandler::closed(const KvConnection& connection) {
  if (connection.presence.empty()) return;
  std::lock_guard lock(mutex_);
  values_["lost/" + connection.presence] = {"1", std::chrono::steady_clock::now()};
}

// Whether the request carries the proof for this connection's challenge; prints a refusal.
bool KvStoreHandler::prove(const Request& request, KvConnection& connection) const {
  const auto proof = request[kProofHeader];
  connection.proven = !connection.challenge.empty() &&
                      token_->verify(kStoreProofPurpose, connection.challenge, std::string_view(proof.data(), proof.size()));
  if (!connection.proven)
    fmt::print(stderr, "key-value store: refused {}: {}\n", connection.peer,
               proof.empty() ? "no job token proof (PADDLE_JOB_TOKEN)" : "a wrong job token proof");
  return connection.proven;
}

void KvStoreHandler::answer_key(const std::string& key, const Request& request, Response& response) {
  std::lock_guard lock(mutex_);
  auto it = values_.find(key);
  if (request.method() == http::verb::put) {
    values_[key] = {request.body(), std::chrono::steady_clock::now()};
    response.result(http::status::ok);
  } else if (request.method() == http::verb::post) {
    if (it == values_.end()) values_[key] = {request.body(), std::chrono::steady_clock::now()};
    else response.body() = it->second.value;
    response.result(it == values_.end() ? http::status::created : http::status::conflict);
  } else if (request.method() == http::verb::get) {
    response.result(it == values_.end() ? http::status::not_found : http::status::ok);
    if (it != values_.end()) response.body() = it->second.value;
  } else {
    response.result(http::status::method_not_allowed);
  }
}

// The keys starting with `prefix` (without it, when `strip`), joined by `separator`.
std::string KvStoreHandler::keys_under(const std::string& prefix, const char* separator, bool strip) {
  std::lock_guard lock(mutex_);
  std::string out;
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it)
    out += (out.empty() ? "" : separator) + (strip ? it->first.substr(prefix.size()) : it->first);
  return out;
}

}  // namespace paddle::collective
