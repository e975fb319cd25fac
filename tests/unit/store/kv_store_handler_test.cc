#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "store/kv_store_handler.h"
#include "store/kv_store_server.h"
#include "store/store_client.h"
#include "store/store_verbs.h"
#include "common/error.h"

using namespace paddle::store;
using namespace std::chrono_literals;
namespace http = boost::beast::http;

namespace {

KvStoreHandler::Request get(const std::string& target, const std::string& presence = "") {
  KvStoreHandler::Request r{http::verb::get, target, 11};
  if (!presence.empty()) r.set(kPresenceHeader, presence);
  return r;
}

KvStoreHandler::Request put(const std::string& target, const std::string& body) {
  KvStoreHandler::Request r{http::verb::put, target, 11};
  r.body() = body;
  r.prepare_payload();
  return r;
}

}  // namespace

TEST_CASE("a wait is parked until its key is written, and answered by that write with its value") {
  KvStoreHandler handler(std::nullopt);
  auto waiter = handler.connect("127.0.0.1:1");
  auto writer = handler.connect("127.0.0.1:2");
  std::optional<KvStoreHandler::Response> later;
  CHECK_FALSE(handler.respond(get("/wait/k?timeout_ms=5000"), waiter, [&](auto r) { later = std::move(r); }));
  CHECK(waiter.parked != 0);
  CHECK(handler.parked_until(waiter.parked) > KvStoreHandler::Clock::now() + 4s);
  handler.respond(put("/kv/other", "x"), writer);
  CHECK_FALSE(later);
  handler.respond(put("/kv/k", "v"), writer);
  REQUIRE(later);
  CHECK(later->result_int() == 200);
  CHECK(later->body() == "v");
  CHECK_FALSE(handler.expire(waiter.parked));  // answered already: the timer finds nothing
}

TEST_CASE("each route answers only its method and path: others are 404, a key takes no query") {
  KvStoreHandler handler(std::nullopt);
  auto c = handler.connect("127.0.0.1:1");
  CHECK(handler.respond(put("/kv/a", "1"), c)->result_int() == 200);
  CHECK(handler.respond(get("/kv/a"), c)->body() == "1");
  CHECK(handler.respond(get("/kv/a?x=1"), c)->result_int() == 404);
  CHECK(handler.respond(put("/keys/a", "1"), c)->result_int() == 404);     // /keys/ is GET only
  CHECK(handler.respond(get("/presence/me"), c)->result_int() == 404);     // /presence/ is PUT only
  CHECK(handler.respond(get("/statsx"), c)->result_int() == 404);          // an exact path is exact
  CHECK(handler.respond(get("/add/n"), c)->result_int() == 404);           // no such verb
  CHECK(handler.respond(get("/watch?after=0"), c)->result_int() == 400);   // a watch names a prefix
  CHECK(handler.respond(get("/stats"), c)->body().str().find("\"requests\"") != std::string::npos);
}

TEST_CASE("a watch answers the changes after its revision under its prefixes, at once or on the next write") {
  KvStoreHandler handler(std::nullopt);
  auto c = handler.connect("127.0.0.1:1");
  handler.respond(put("/kv/job.report.a", "1"), c);
  handler.respond(put("/kv/job.other", "2"), c);
  auto now = handler.respond(get("/watch?after=0&timeout_ms=1000&prefix=job.report.&prefix=job.failed"), c);
  REQUIRE(now);
  auto json = nlohmann::json::parse(now->body().str());
  CHECK(json["revision"] == 2);
  REQUIRE(json["entries"].size() == 1);
  CHECK(json["entries"][0]["key"] == "job.report.a");

  std::optional<KvStoreHandler::Response> later;
  CHECK_FALSE(handler.respond(get("/watch?after=2&timeout_ms=1000&prefix=job.report.&prefix=job.failed"), c,
                              [&](auto r) { later = std::move(r); }));
  auto d = handler.connect("127.0.0.1:2");
  handler.respond(put("/kv/job.other", "3"), d);
  CHECK_FALSE(later);
  handler.respond(put("/kv/job.failed", "root"), d);
  REQUIRE(later);
  json = nlohmann::json::parse(later->body().str());
  CHECK(json["revision"] == 4);
  CHECK(json["entries"][0]["value"] == "root");

  // Out of time: no entries, and the revision to go on from.
  auto waiting = handler.connect("127.0.0.1:3");
  CHECK_FALSE(handler.respond(get("/watch?after=4&timeout_ms=10&prefix=job.failed"), waiting, [](auto) {}));
  auto expired = handler.expire(waiting.parked);
  REQUIRE(expired);
  CHECK(nlohmann::json::parse(expired->body().str())["entries"].empty());
  CHECK(nlohmann::json::parse(expired->body().str())["revision"] == 4);
}

TEST_CASE("a presence rides on requests: lost when its connection closes or it falls silent; back when announced again") {
  KvStoreHandler handler(std::nullopt);
  auto a = handler.connect("127.0.0.1:1");
  auto b = handler.connect("127.0.0.1:2");
  handler.respond(get("/kv/x", "job.hb.a"), a);
  handler.respond(get("/kv/x", "job.hb.b"), b);
  auto other = handler.connect("127.0.0.1:3");
  CHECK(handler.respond(get("/lost?prefix=job.hb."), other)->body() == "{}");
  handler.closed(a);
  auto lost = nlohmann::json::parse(handler.respond(get("/lost?prefix=job.hb."), other)->body().str());
  CHECK(lost == nlohmann::json{{"job.hb.a", "its connection closed"}});
  CHECK(handler.respond(get("/lost"), other)->body() == "job.hb.a");

  std::this_thread::sleep_for(30ms);
  CHECK(nlohmann::json::parse(handler.respond(get("/silent?over_ms=20"), other)->body().str()) == nlohmann::json{"job.hb.b"});
  CHECK(handler.sweep(20ms) == 1);
  CHECK(handler.sweep(20ms) == 0);  // marked once
  lost = nlohmann::json::parse(handler.respond(get("/lost?prefix=job.hb."), other)->body().str());
  CHECK(lost.size() == 2);
  CHECK(lost["job.hb.b"].get<std::string>().starts_with("nothing heard from it for"));

  auto again = handler.connect("127.0.0.1:4");
  handler.respond(get("/kv/x", "job.hb.a"), again);
  lost = nlohmann::json::parse(handler.respond(get("/lost?prefix=job.hb."), other)->body().str());
  CHECK(lost.size() == 1);
  CHECK(lost.contains("job.hb.b"));
}

TEST_CASE("a parked request counts as heard: a node waiting on a long poll is not silent") {
  KvStoreHandler handler(std::nullopt);
  auto a = handler.connect("127.0.0.1:1");
  CHECK_FALSE(handler.respond(get("/wait/never?timeout_ms=5000", "job.hb.a"), a, [](auto) {}));
  std::this_thread::sleep_for(30ms);
  CHECK(handler.sweep(20ms) == 0);
}

// GET `target`'s JSON answer over `client`, waiting on the server up to `wait` (a long poll).
nlohmann::json answer(StoreClient& client, const std::string& target, std::chrono::milliseconds wait = 0ms) {
  return nlohmann::json::parse(client.checked(http::verb::get, target, "", target, wait, wait > 0ms).body);
}

TEST_CASE("over sockets: one kept connection serves many requests, and a blocking wait returns on the write") {
  KvStoreServer server("127.0.0.1", 0);
  StoreClient store("127.0.0.1", server.port(), 5s);
  for (int i = 0; i < 50; ++i) put_value(store, "k" + std::to_string(i), "v");
  CHECK(answer(store, "/stats")["connections"] == 1);
  CHECK(answer(store, "/stats")["requests"].get<int>() >= 50);

  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    StoreClient other("127.0.0.1", server.port(), 5s);
    put_value(other, "late", "here");
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK(wait_value(store, "late", 5s) == "here");
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  writer.join();
  CHECK(wait_value(store, "never", 50ms) == std::nullopt);

  const auto changes = answer(store, "/range/k1");
  CHECK(changes["entries"].size() == 11);  // k1, k10..k19
  const std::string watch = fmt::format("/watch?after={}&prefix=k4&timeout_ms=", changes["revision"].get<int64_t>());
  CHECK(answer(store, watch + "50", 50ms)["entries"].empty());
  put_value(store, "k4", "new");
  const auto watched = answer(store, watch + "1000", 1s);
  REQUIRE(watched["entries"].size() == 1);
  CHECK(watched["entries"][0]["value"] == "new");
}

TEST_CASE("over sockets: a client that closes its connection while its request waits is gone at once") {
  KvStoreServer server("127.0.0.1", 0);
  StoreClient observer("127.0.0.1", server.port(), 5s);
  const auto lost = [&] { return answer(observer, "/lost?prefix=node.").get<std::map<std::string, std::string>>(); };
  // A launcher's watch, parked for 10 s, and then the launcher killed: its socket closes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const std::string request = std::string("GET /wait/never?timeout_ms=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n") +
                              kPresenceHeader + ": node.a\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  const auto parked = std::chrono::steady_clock::now() + 2s;
  while (answer(observer, "/stats")["parked"] != 1 && std::chrono::steady_clock::now() < parked)
    std::this_thread::sleep_for(5ms);
  REQUIRE(answer(observer, "/stats")["parked"] == 1);
  CHECK(lost().empty());
  const auto closed = std::chrono::steady_clock::now();
  ::close(fd);
  while (lost().empty() && std::chrono::steady_clock::now() - closed < 5s)
    std::this_thread::sleep_for(5ms);
  CHECK(std::chrono::steady_clock::now() - closed < 1s);  // not the 10 s its wait had left
  CHECK(lost() == std::map<std::string, std::string>{{"node.a", "its connection closed"}});
  CHECK(answer(observer, "/stats")["parked"] == 0);
  CHECK(answer(observer, "/stats")["connections"] == 1);  // the observer's own
}
