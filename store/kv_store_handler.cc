// KvStoreHandler (kv_store_handler.h): every request of the store, in one file because they
// share its indexes of parked waits and watches and the revision each write takes: a table of
// routes, one named handler each (Routes), and the indexes' upkeep.
#include "store/kv_store_handler.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>

#include "store/store_wire.h"
#include "common/parse.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

constexpr std::string_view kLost = "lost/";
// A watch that starts this far behind answers from the keys under its prefixes instead of from
// every change since.
constexpr int64_t kScanChangesUpTo = 1024;
constexpr milliseconds kLongestWait{600000};

// The path without its query: "/wait/k" of "/wait/k?timeout_ms=5".
std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// Every value of query parameter `name` in `target` (left as sent: keys travel encoded).
std::vector<std::string> query_values(std::string_view target, std::string_view name) {
  std::vector<std::string> values;
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return values;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) values.emplace_back(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return values;
}

std::optional<int64_t> query_int(std::string_view target, std::string_view name) {
  const auto values = query_values(target, name);
  if (values.empty()) return std::nullopt;
  return common::to_int(values.front());
}

bool matches(const std::string& key, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes)
    if (key.starts_with(p)) return true;
  return false;
}

}  // namespace

KvStoreHandler::KvStoreHandler(std::optional<common::JobToken> token) : token_(std::move(token)) {}

KvConnection KvStoreHandler::connect(std::string peer) {
  KvConnection c;
  c.peer = std::move(peer);
  c.proven = !token_;
  std::lock_guard lock(mutex_);
  ++connections_;
  return c;
}

// One handler per request kind, found by method and path (table below); respond has proven the
// connection and renewed its presence, and holds the lock. A handler fills call.response; one
// that may wait (wait, watch) sets call.blocked and call.blocked_answer instead (nothing there:
// parked).
struct KvStoreHandler::Routes {
  struct Call {
    const Request& request;
    std::string_view target;  // with its query
    std::string_view rest;    // the path after the route's own
    KvConnection& connection;
    Response& response;
    Ready& ready;
    Later& later;
    bool blocked = false;
    std::optional<Response> blocked_answer;
  };
  using Handler = void (*)(KvStoreHandler&, Call&);
  struct Route {
    http::verb method;      // unknown: any method
    std::string_view path;  // exact; a prefix where it ends in '/'
    Handler handle;
  };

  static void presence(KvStoreHandler& store, Call& call) {
    store.announce(call.connection, std::string(call.rest));
    call.response.keep_alive(true);
    call.response.result(http::status::ok);
  }
  static void lost(KvStoreHandler& store, Call& call) {
    call.response.body() = store.lost_answer(call.target);
    call.response.result(http::status::ok);
  }
  static void silent(KvStoreHandler& store, Call& call) {
    call.response.body() = store.silent_answer(milliseconds(query_int(call.target, "over_ms").value_or(0)));
    call.response.result(http::status::ok);
  }
  static void stats(KvStoreHandler& store, Call& call) {
    call.response.body() = nlohmann::json{{"requests", store.requests_}, {"connections", store.connections_},
                                          {"parked", store.parked_.size()}, {"revision", store.revision_}}.dump();
    call.response.result(http::status::ok);
  }
  static void keys(KvStoreHandler& store, Call& call) {
    call.response.body() = store.keys_under(std::string(call.rest), "\n", false);
    call.response.result(http::status::ok);
  }
  static void range(KvStoreHandler& store, Call& call) {
    Parked all{Parked::Kind::kWatch};
    all.prefixes = {std::string(call.rest)};
    call.response.body() = store.watch_answer(all).value_or(
        nlohmann::json{{"revision", store.revision_}, {"entries", nlohmann::json::array()}}.dump());
    call.response.result(http::status::ok);
  }
  static void wait(KvStoreHandler& store, Call& call) {
    Parked p{Parked::Kind::kWait};
    p.key = std::string(call.rest);
    call.blocked = true;
    call.blocked_answer = store.blocking(call.request, call.connection, std::move(p), std::move(call.later));
  }
  static void watch(KvStoreHandler& store, Call& call) {
    Parked p{Parked::Kind::kWatch};
    p.prefixes = query_values(call.target, "prefix");
    p.after = query_int(call.target, "after").value_or(0);
    if (p.prefixes.empty()) {
      call.response.result(http::status::bad_request);
      call.response.body() = "a watch names at least one prefix";
      return;
    }
    call.blocked = true;
    call.blocked_answer = store.blocking(call.request, call.connection, std::move(p), std::move(call.later));
  }
  static void kv(KvStoreHandler& store, Call& call) {
    if (path_of(call.target).size() != call.target.size()) {  // a key takes no query
      call.response.result(http::status::not_found);
      return;
    }
    const std::string key(call.rest);
    store.answer_key(key, call.request, call.response);
    if (call.request.method() == http::verb::put ||
        (call.request.method() == http::verb::post && call.response.result() == http::status::created))
      store.write(key, call.request.body(), call.ready);
  }

  static constexpr std::array kTable{
      Route{http::verb::put, "/presence/", presence}, Route{http::verb::unknown, "/lost", lost},
      Route{http::verb::get, "/silent", silent},      Route{http::verb::get, "/stats", stats},
      Route{http::verb::get, "/keys/", keys},         Route{http::verb::get, "/range/", range},
      Route{http::verb::get, "/wait/", wait},         Route{http::verb::get, "/watch", watch},
      Route{http::verb::unknown, "/kv/", kv},
  };

  static const Route* find(http::verb method, std::string_view path) {
    for (const Route& r : kTable) {
      const bool prefix = r.path.ends_with('/');
      if ((prefix ? path.starts_with(r.path) : path == r.path) &&
          (r.method == http::verb::unknown || r.method == method))
        return &r;
    }
    return nullptr;
  }
};

std::optional<KvStoreHandler::Response> KvStoreHandler::respond(const Request& request, KvConnection& connection,
                                                                Later later) {
  Response response;
  response.version(request.version());
  response.keep_alive(request.keep_alive());
  const std::string_view target(request.target().data(), request.target().size());
  Ready ready;
  std::optional<Response> answer;
  {
    std::unique_lock lock(mutex_);
    ++requests_;
    lock.unlock();
    if (target == "/auth/challenge") {
      connection.challenge = common::make_challenge();
      response.body() = connection.challenge;
      response.keep_alive(true);
      response.result(http::status::ok);
      answer = std::move(response);
    } else if (!connection.proven && !prove(request, connection)) {
      response.keep_alive(false);
      response.result(http::status::unauthorized);
      answer = std::move(response);
    }
    lock.lock();
    if (!answer) {
      hear(connection, request);
      const std::string_view path = path_of(target);
      if (const Routes::Route* route = Routes::find(request.method(), path)) {
        Routes::Call call{request,  target, path.substr(route->path.size()), connection, response, ready, later,
                          false,    std::nullopt};
        route->handle(*this, call);
        if (call.blocked) return std::move(call.blocked_answer);
      } else {
        response.result(http::status::not_found);
      }
      answer = std::move(response);
    }
  }
  for (auto& [call, r] : ready) call(std::move(r));
  if (answer) answer->prepare_payload();
  return answer;
}

std::optional<KvStoreHandler::Response> KvStoreHandler::blocking(const Request& request, KvConnection& connection,
                                                                 Parked p, Later later) {
  // Under the lock (respond's).
  const std::string_view target(request.target().data(), request.target().size());
  const milliseconds timeout(std::clamp<int64_t>(query_int(target, "timeout_ms").value_or(0), 0, kLongestWait.count()));
  p.until = Clock::now() + timeout;
  p.version = request.version();
  p.keep_alive = request.keep_alive();
  p.presence = connection.presence;
  if (p.kind == Parked::Kind::kWait) {
    if (const SharedText* value = wait_answer(p)) return parked_response(p, 200, *value);
  } else if (auto changes = watch_answer(p)) {
    return parked_response(p, 200, std::move(*changes));
  }
  if (!later || timeout.count() == 0)
    return parked_response(p, p.kind == Parked::Kind::kWait ? 408 : 200,
                           p.kind == Parked::Kind::kWait ? "" : nlohmann::json{{"revision", revision_}, {"entries", nlohmann::json::array()}}.dump());
  const uint64_t id = next_parked_++;
  p.later = std::move(later);
  if (p.kind == Parked::Kind::kWait) waits_.emplace(p.key, id);
  else for (const auto& prefix : p.prefixes) watches_[prefix].insert(id);
  if (!p.presence.empty()) ++presences_[p.presence].parked;
  parked_.emplace(id, std::move(p));
  connection.parked = id;
  return std::nullopt;
}

// GET /lost: the lost names, comma-separated; with ?prefix=P, {NAME: why} of those under P.
std::string KvStoreHandler::lost_answer(std::string_view target) const {
  const auto prefix = query_values(target, "prefix");
  nlohmann::json reasons = nlohmann::json::object();
  std::string names;
  for (auto it = values_.lower_bound(std::string(kLost)); it != values_.end() && it->first.starts_with(kLost); ++it) {
    const std::string name = it->first.substr(kLost.size());
    if (it->second.value.empty() || (!prefix.empty() && !name.starts_with(prefix.front()))) continue;
    reasons[name] = it->second.value;
    names += (names.empty() ? "" : ",") + name;
  }
  return prefix.empty() ? names : reasons.dump();
}

// GET /silent: the open presences, none of whose requests waits now, quiet for longer than `over`.
std::string KvStoreHandler::silent_answer(milliseconds over) const {
  nlohmann::json silent = nlohmann::json::array();
  const auto now = Clock::now();
  for (const auto& [name, p] : presences_)
    if (p.open > 0 && p.parked == 0 && now - p.heard > over) silent.push_back(name);
  return silent.dump();
}

KvStoreHandler::Response KvStoreHandler::parked_response(const Parked& p, int status, SharedText body) const {
  Response response;
  response.version(p.version);
  response.keep_alive(p.keep_alive);
  response.result(static_cast<http::status>(status));
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

const SharedText* KvStoreHandler::wait_answer(const Parked& p) const {
  auto it = values_.find(p.key);
  return it == values_.end() ? nullptr : &it->second.value;
}

std::optional<std::string> KvStoreHandler::watch_answer(const Parked& p, std::optional<int64_t> only_revision) const {
  nlohmann::json entries = nlohmann::json::array();
  auto add = [&](const std::string& key, const StoredValue& v) {
    entries.push_back({{"key", key}, {"value", v.value.str()}, {"revision", v.revision}});
  };
  if (only_revision) {
    auto it = by_revision_.find(*only_revision);
    if (it != by_revision_.end()) add(it->second, values_.at(it->second));
  } else if (revision_ - p.after <= kScanChangesUpTo) {
    for (auto it = by_revision_.upper_bound(p.after); it != by_revision_.end(); ++it)
      if (matches(it->second, p.prefixes)) add(it->second, values_.at(it->second));
  } else {
    std::vector<std::pair<int64_t, const std::string*>> found;
    for (const auto& prefix : p.prefixes)
      for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it)
        if (it->second.revision > p.after) found.emplace_back(it->second.revision, &it->first);
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (const auto& [revision, key] : found) add(*key, values_.at(*key));
  }
  if (entries.empty()) return std::nullopt;
  return nlohmann::json{{"revision", revision_}, {"entries", std::move(entries)}}.dump();
}

KvStoreHandler::Parked KvStoreHandler::unpark(uint64_t id) {
  auto node = parked_.extract(id);
  Parked p = std::move(node.mapped());
  if (p.kind == Parked::Kind::kWait) {
    auto [first, last] = waits_.equal_range(p.key);
    for (auto it = first; it != last; ++it)
      if (it->second == id) {
        waits_.erase(it);
        break;
      }
  } else {
    for (const auto& prefix : p.prefixes) {
      auto it = watches_.find(prefix);
      if (it == watches_.end()) continue;
      it->second.erase(id);
      if (it->second.empty()) watches_.erase(it);
    }
  }
  if (!p.presence.empty()) {
    auto& presence = presences_[p.presence];
    --presence.parked;
    presence.heard = Clock::now();
  }
  return p;
}

void KvStoreHandler::write(const std::string& key, std::string value, Ready& ready) {
  auto& stored = values_[key];
  if (stored.revision) by_revision_.erase(stored.revision);
  stored = {std::move(value), Clock::now(), ++revision_};
  by_revision_.emplace(stored.revision, key);
  std::vector<uint64_t> met;
  auto [first, last] = waits_.equal_range(key);
  for (auto it = first; it != last; ++it)
    if (wait_answer(parked_.at(it->second))) met.push_back(it->second);
  for (const auto& [prefix, ids] : watches_)
    if (key.starts_with(prefix)) met.insert(met.end(), ids.begin(), ids.end());
  std::sort(met.begin(), met.end());
  met.erase(std::unique(met.begin(), met.end()), met.end());
  // Every watch this write meets gets the same answer, this one entry (watch_answer with a
  // revision looks at nothing of the watch): built once, shared by all.
  std::optional<SharedText> watch_body;
  for (uint64_t id : met) {
    Parked p = unpark(id);
    if (p.kind == Parked::Kind::kWait) {
      ready.emplace_back(std::move(p.later), parked_response(p, 200, *wait_answer(p)));
      continue;
    }
    if (!watch_body) watch_body = SharedText(*watch_answer(p, stored.revision));
    ready.emplace_back(std::move(p.later), parked_response(p, 200, *watch_body));
  }
}

KvStoreHandler::Clock::time_point KvStoreHandler::parked_until(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = parked_.find(id);
  return it == parked_.end() ? Clock::now() : it->second.until;
}

std::optional<KvStoreHandler::Response> KvStoreHandler::expire(uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!parked_.count(id)) return std::nullopt;
  Parked p = unpark(id);
  if (p.kind == Parked::Kind::kWait) return parked_response(p, 408, "");
  return parked_response(p, 200, nlohmann::json{{"revision", revision_}, {"entries", nlohmann::json::array()}}.dump());
}

void KvStoreHandler::hear(KvConnection& connection, const Request& request) {
  if (connection.presence.empty()) {
    const auto name = request[kPresenceHeader];
    if (!name.empty()) announce(connection, std::string(name));
    return;
  }
  presences_[connection.presence].heard = Clock::now();
}

void KvStoreHandler::announce(KvConnection& connection, const std::string& name) {
  if (connection.presence == name) return;
  connection.presence = name;
  auto& presence = presences_[name];
  ++presence.open;
  presence.heard = Clock::now();
  auto it = values_.find(std::string(kLost) + name);
  Ready none;
  // Back after a reconnection: no longer lost.
  if (it != values_.end() && !it->second.value.empty()) write(it->first, "", none);
}

void KvStoreHandler::closed(KvConnection& connection) {
  Ready ready;
  {
    std::lock_guard lock(mutex_);
    --connections_;
    if (connection.parked && parked_.count(connection.parked)) unpark(connection.parked);
    connection.parked = 0;
    if (!connection.presence.empty() && --presences_[connection.presence].open == 0)
      write(std::string(kLost) + connection.presence, "its connection closed", ready);
  }
  for (auto& [call, r] : ready) call(std::move(r));
}

int KvStoreHandler::sweep(milliseconds silent_after) {
  Ready ready;
  int marked = 0;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    for (const auto& [name, p] : presences_) {
      if (p.open == 0 || p.parked > 0 || now - p.heard <= silent_after) continue;
      const std::string key = std::string(kLost) + name;
      auto it = values_.find(key);
      if (it != values_.end() && !it->second.value.empty()) continue;
      write(key, fmt::format("nothing heard from it for {:.3g} s",
                             std::chrono::duration<double>(now - p.heard).count()), ready);
      ++marked;
    }
  }
  for (auto& [call, r] : ready) call(std::move(r));
  return marked;
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

// Under the lock; the write itself (and the parked requests it meets) is respond's.
void KvStoreHandler::answer_key(const std::string& key, const Request& request, Response& response) {
  auto it = values_.find(key);
  if (request.method() == http::verb::put) {
    response.result(http::status::ok);
  } else if (request.method() == http::verb::post) {
    if (it != values_.end()) response.body() = it->second.value;
    response.result(it == values_.end() ? http::status::created : http::status::conflict);
  } else if (request.method() == http::verb::get) {
    response.result(it == values_.end() ? http::status::not_found : http::status::ok);
    if (it != values_.end()) response.body() = it->second.value;
  } else {
    response.result(http::status::method_not_allowed);
  }
}

// The keys starting with `prefix` (without it, when `strip`), joined by `separator`; under the lock.
std::string KvStoreHandler::keys_under(const std::string& prefix, const char* separator, bool strip) {
  std::string out;
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it)
    out += (out.empty() ? "" : separator) + (strip ? it->first.substr(prefix.size()) : it->first);
  return out;
}

}  // namespace paddle::store
