#include "store/etcd_client.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "store/http_exchange.h"
#include "common/base64.h"
#include "common/error.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;

// The first key after every key that starts with `prefix`: etcd's range end for a prefix.
std::string prefix_end(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) return std::string(1, '\0');  // every key
  prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

// The gateway writes 64-bit integers as strings and leaves out zeros.
int64_t int_field(const json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end()) return 0;
  return it->is_string() ? std::stoll(it->get<std::string>()) : it->get<int64_t>();
}

EtcdKeyValue key_value(const json& kv) {
  return {common::from_base64(kv.value("key", "")).bytes, common::from_base64(kv.value("value", "")).bytes,
          int_field(kv, "mod_revision"), int_field(kv, "lease")};
}

json put_request(const std::string& key, const std::string& value, int64_t lease) {
  json put = {{"key", common::to_base64(key)}, {"value", common::to_base64(value)}};
  if (lease != 0) put["lease"] = std::to_string(lease);
  return put;
}

}  // namespace

EtcdClient::EtcdClient(std::vector<EtcdEndpoint> endpoints, std::chrono::milliseconds request_timeout)
    : endpoints_(std::move(endpoints)), request_timeout_(request_timeout) {
  if (endpoints_.empty()) throw common::UsageError("etcd: no endpoint given");
}

std::string EtcdClient::describe() const {
  std::vector<std::string> names;
  for (const auto& e : endpoints_) names.push_back(e.to_string());
  return fmt::format("etcd {}", fmt::join(names, ","));
}

std::string EtcdClient::call(const std::string& path, const std::string& body) {
  for (const auto& endpoint : endpoints_) {
    auto answer = http_exchange(endpoint.ip, endpoint.port, http::verb::post, path, body, request_timeout_);
    if (!answer) continue;
    if (answer->status == 200) return std::move(answer->body);
    std::string message = answer->body;
    try {
      message = json::parse(answer->body).value("message", answer->body);
    } catch (const json::exception&) {
    }
    throw common::PeerError(fmt::format("etcd {}: {} answered {}: {}", endpoint.to_string(), path, answer->status, message));
  }
  throw common::PeerError(fmt::format("{} is unreachable", describe()));
}

int64_t EtcdClient::grant_lease(std::chrono::seconds ttl) {
  const json answer = json::parse(call("/v3/lease/grant", json{{"TTL", std::to_string(ttl.count())}}.dump()));
  const int64_t id = int_field(answer, "ID");
  if (id == 0) throw common::PeerError(fmt::format("{} granted no lease: {}", describe(), answer.dump()));
  return id;
}

bool EtcdClient::keep_alive(int64_t lease) {
  const json answer = json::parse(call("/v3/lease/keepalive", json{{"ID", std::to_string(lease)}}.dump()));
  return int_field(answer.value("result", json::object()), "TTL") > 0;
}

void EtcdClient::revoke_lease(int64_t lease) {
  try {
    call("/v3/lease/revoke", json{{"ID", std::to_string(lease)}}.dump());
  } catch (const common::PeerError&) {
    // Already ended: nothing to revoke.
  }
}

void EtcdClient::put(const std::string& key, const std::string& value, int64_t lease) {
  call("/v3/kv/put", put_request(key, value, lease).dump());
}

std::optional<std::string> EtcdClient::get(const std::string& key) {
  const json answer = json::parse(call("/v3/kv/range", json{{"key", common::to_base64(key)}}.dump()));
  const auto kvs = answer.find("kvs");
  if (kvs == answer.end() || kvs->empty()) return std::nullopt;
  return key_value(kvs->front()).value;
}

std::string EtcdClient::create(const std::string& key, const std::string& value, int64_t lease) {
  const json txn = {
      {"compare", json::array({{{"key", common::to_base64(key)}, {"result", "EQUAL"}, {"target", "CREATE"}, {"create_revision", "0"}}})},
      {"success", json::array({{{"request_put", put_request(key, value, lease)}}})},
      {"failure", json::array({{{"request_range", {{"key", common::to_base64(key)}}}}})}};
  const json answer = json::parse(call("/v3/kv/txn", txn.dump()));
  if (answer.value("succeeded", false)) return value;
  for (const auto& response : answer.value("responses", json::array()))
    if (auto range = response.find("response_range"); range != response.end())
      for (const auto& kv : range->value("kvs", json::array())) return key_value(kv).value;
  // Deleted between the compare and the read (its lease ended): try again.
  return create(key, value, lease);
}

std::vector<EtcdKeyValue> EtcdClient::range(const std::string& prefix) {
  const json answer =
      json::parse(call("/v3/kv/range", json{{"key", common::to_base64(prefix)}, {"range_end", common::to_base64(prefix_end(prefix))}}.dump()));
  std::vector<EtcdKeyValue> out;
  for (const auto& kv : answer.value("kvs", json::array())) out.push_back(key_value(kv));
  return out;
}

void EtcdClient::delete_prefix(const std::string& prefix) {
  call("/v3/kv/deleterange", json{{"key", common::to_base64(prefix)}, {"range_end", common::to_base64(prefix_end(prefix))}}.dump());
}

}  // namespace paddle::store
