#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "ps/client.h"
#include "ps/protocol.h"
#include "ps/server.h"
#include "ps/sharding.h"
#include "ps/tables.h"

using namespace paddle::ps;

namespace {

ServerTables small_tables(size_t dense_size = 10) {
  ServerTables t;
  t.dense.push_back(std::make_unique<DenseTable>(dense_size, UpdateRule::parse("sgd", 0.5f)));
  t.sparse.push_back(std::make_unique<SparseTable>(3, UpdateRule::parse("sgd", 0.5f), 42));
  return t;
}

// A server on a free loopback port, run on a thread until every worker stops (or the end).
struct RunningServer {
  std::unique_ptr<ParameterServer> server;
  std::thread thread;
  explicit RunningServer(ServerOptions options, ServerTables tables = small_tables()) {
    options.log = stderr;
    server = std::make_unique<ParameterServer>(options, std::move(tables));
    thread = std::thread([this] { server->run(); });
  }
  ~RunningServer() {
    server->stop();
    thread.join();
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

ClientOptions quick() {
  ClientOptions o;
  o.connect_timeout = std::chrono::seconds(5);
  o.request_timeout = std::chrono::seconds(5);
  return o;
}

int raw_connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::vector<unsigned char> frame(uint16_t command, std::vector<unsigned char> body, uint16_t version = kVersion,
                                 uint32_t magic = kMagic) {
  Header h;
  h.magic = magic;
  h.version = version;
  h.command = command;
  h.request_id = 7;
  h.body_bytes = static_cast<uint32_t>(body.size());
  std::vector<unsigned char> out(kHeaderBytes);
  encode_header(h, out.data());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// The reply header, or nothing when the server closed the connection.
std::optional<Header> round_trip(int fd, const std::vector<unsigned char>& bytes) {
  if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) return std::nullopt;
  unsigned char h[kHeaderBytes];
  size_t got = 0;
  while (got < kHeaderBytes) {
    ssize_t n = ::recv(fd, h + got, kHeaderBytes - got, 0);
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  Header header = decode_header(h);
  std::vector<unsigned char> body(header.body_bytes);
  size_t read = 0;
  while (read < body.size()) {
    ssize_t n = ::recv(fd, body.data() + read, body.size() - read, 0);
    if (n <= 0) return std::nullopt;
    read += static_cast<size_t>(n);
  }
  return header;
}

}  // namespace

TEST_CASE("update rules") {
  float w = 1, g = 2;
  std::vector<float> state(2, 0);
  UpdateRule::parse("sgd", 0.1f).apply(&w, nullptr, &g, 1, 1);
  CHECK(w == doctest::Approx(0.8));
  w = 1;
  UpdateRule::parse("adagrad", 0.1f).apply(&w, state.data(), &g, 1, 1);
  CHECK(w == doctest::Approx(0.9).epsilon(1e-4));
  w = 1;
  state = {0, 0};
  UpdateRule::parse("adam", 0.1f).apply(&w, state.data(), &g, 1, 1);
  CHECK(w == doctest::Approx(0.9).epsilon(1e-4));
  CHECK_THROWS_AS(UpdateRule::parse("lamb", 0.1f), std::invalid_argument);
}

TEST_CASE("sparse rows: zeros until pushed, then a seeded init the same everywhere") {
  SparseTable a(4, UpdateRule::parse("sgd", 1.0f), 9), b(4, UpdateRule::parse("sgd", 1.0f), 9, 0.01f, 3);
  CHECK(a.pull({5}) == std::vector<float>(4, 0.0f));
  CHECK(a.rows() == 0);
  std::vector<float> zero(4, 0.0f);
  a.push({5}, zero);
  b.push({5}, zero);
  auto row = a.pull({5});
  CHECK(row == b.pull({5}));  // independent of the shard count
  for (float v : row) CHECK(std::fabs(v) <= 0.01f);
  CHECK(row != zero);
  a.push({5}, {1, 1, 1, 1});
  CHECK(a.pull({5})[0] == doctest::Approx(row[0] - 1));
  CHECK_THROWS_AS(a.push({5}, {1}), std::invalid_argument);
}

TEST_CASE("accumulated gradients are applied once, averaged") {
  DenseTable d(2, UpdateRule::parse("sgd", 1.0f));
  d.set({1, 1});
  d.accumulate({1, 2});
  d.accumulate({3, 4});
  CHECK(d.pull() == std::vector<float>{1, 1});
  d.apply_pending(2);
  CHECK(d.pull() == std::vector<float>{-1, -2});
  SparseTable s(1, UpdateRule::parse("sgd", 1.0f), 1, 0.0f);
  s.accumulate({3, 3}, {2, 4});
  s.apply_pending(2);
  CHECK(s.pull({3})[0] == doctest::Approx(-3));
}

TEST_CASE("tables survive save and load; truncation is reported") {
  DenseTable d(3, UpdateRule::parse("adam", 0.1f));
  d.set({1, 2, 3});
  d.push({1, 1, 1});
  SparseTable s(2, UpdateRule::parse("adagrad", 0.1f), 5);
  s.push({1, 99}, {1, 2, 3, 4});
  std::stringstream out;
  d.save(out);
  s.save(out);
  DenseTable d2(3, UpdateRule::parse("adam", 0.1f));
  SparseTable s2(2, UpdateRule::parse("adagrad", 0.1f), 5);
  std::stringstream in(out.str());
  d2.load(in);
  s2.load(in);
  CHECK(d2.pull() == d.pull());
  CHECK(s2.pull({1, 99}) == s.pull({1, 99}));
  std::stringstream cut(out.str().substr(0, out.str().size() - 3));
  DenseTable d3(3, UpdateRule::parse("adam", 0.1f));
  SparseTable s3(2, UpdateRule::parse("adagrad", 0.1f), 5);
  d3.load(cut);
  CHECK_THROWS_AS(s3.load(cut), std::runtime_error);
}

TEST_CASE("the reader never reads past the body") {
  Writer w;
  w.u32(1).u64(2);
  Reader r(w.bytes().data(), w.bytes().size());
  CHECK(r.u32() == 1);
  CHECK(r.u64() == 2);
  CHECK_THROWS_AS(r.u32(), ProtocolError);
  Writer lie;
  lie.u64(1ULL << 40);  // an array length far beyond the body
  Reader big(lie.bytes().data(), lie.bytes().size());
  CHECK_THROWS_AS(big.f32s(), ProtocolError);
}

TEST_CASE("sharding: blocks cover the vector; keys spread over servers") {
  size_t covered = 0;
  for (size_t s = 0; s < 3; ++s) {
    auto [b, e] = dense_block(10, 3, s);
    CHECK(b == covered);
    covered = e;
  }
  CHECK(covered == 10);
  std::vector<int> counts(2);
  for (uint64_t k = 0; k < 1000; ++k) counts[server_of_key(k, 2)]++;
  CHECK(counts[0] == 504);  // 0..15 -> server 0, 16..31 -> server 1, ...; 992..999 -> server 0
}

TEST_CASE("client and two servers: dense blocks, sparse routing, synchronous averaging") {
  ServerOptions o;
  o.workers = 2;
  o.server_count = 2;
  RunningServer s0(o);
  o.server_index = 1;
  RunningServer s1(o);
  std::vector<std::string> eps{s0.endpoint(), s1.endpoint()};
  PsClient a(eps, quick()), b(eps, quick());
  std::vector<float> init(20);
  for (int i = 0; i < 20; ++i) init[i] = static_cast<float>(i);
  a.init_dense(0, init);  // 10 values to each server
  CHECK_THROWS_AS(a.init_dense(0, {1, 2}), PsError);  // blocks of the wrong size are refused
  CHECK(b.pull_dense(0, 20) == init);
  std::string worker_b_error;
  std::thread tb([&] {
    try {
      b.push_dense(0, std::vector<float>(20, 3.0f));
      b.push_sparse(0, {1, 17}, {1, 1, 1, 2, 2, 2}, 3);
      b.barrier();
    } catch (const std::exception& e) {
      worker_b_error = e.what();
    }
  });
  a.push_dense(0, std::vector<float>(20, 1.0f));
  a.push_sparse(0, {17}, {4, 4, 4}, 3);
  a.barrier();
  tb.join();
  CHECK(worker_b_error.empty());
  auto dense = a.pull_dense(0, 20);
  CHECK(dense[0] == doctest::Approx(0 - 0.5 * 2));  // (1 + 3) / 2 workers, lr 0.5
  auto rows = a.pull_sparse(0, {17, 1, 123}, 3);
  SparseTable reference(3, UpdateRule::parse("sgd", 0.5f), 42);
  reference.push({17}, {3, 3, 3});  // (2 + 4) / 2
  reference.push({1}, {0.5f, 0.5f, 0.5f});
  CHECK(rows[0] == doctest::Approx(reference.pull({17})[0]));
  CHECK(rows[3] == doctest::Approx(reference.pull({1})[0]));
  CHECK(rows[6] == 0.0f);  // never pushed
}

TEST_CASE("servers finish when every worker stops") {
  ServerOptions o;
  o.workers = 2;
  auto server = std::make_unique<ParameterServer>(o, small_tables());
  std::thread t([&] { server->run(); });
  const std::string ep = "127.0.0.1:" + std::to_string(server->port());
  PsClient a({ep}, quick()), b({ep}, quick());
  a.stop_worker();
  b.stop_worker();
  t.join();  // run() returned on its own
  CHECK(true);
}

TEST_CASE("a client names a server that is not up, after its timeout") {
  ClientOptions o = quick();
  o.connect_timeout = std::chrono::milliseconds(300);
  CHECK_THROWS_WITH_AS(PsClient({"127.0.0.1:1"}, o), doctest::Contains("127.0.0.1:1 not reachable"), paddle::common::TimeoutError);
}

TEST_CASE("fuzz: malformed, truncated, oversized and unknown frames never break the server") {
  ServerOptions o;
  o.max_body = 1 << 16;
  RunningServer s(o);
  const int port = s.server->port();
  std::mt19937 rng(12345);
  auto ping_works = [&] {
    int fd = raw_connect(port);
    auto reply = round_trip(fd, frame(static_cast<uint16_t>(Command::kPing), {}));
    ::close(fd);
    return reply && reply->status == static_cast<uint32_t>(Status::kOk);
  };
  REQUIRE(ping_works());

  SUBCASE("known answers") {
    int fd = raw_connect(port);
    auto unknown = round_trip(fd, frame(77, {}));
    REQUIRE(unknown);
    CHECK(unknown->status == static_cast<uint32_t>(Status::kUnknownCommand));
    auto malformed = round_trip(fd, frame(static_cast<uint16_t>(Command::kPullSparse), {1, 2, 3}));
    REQUIRE(malformed);
    CHECK(malformed->status == static_cast<uint32_t>(Status::kBadRequest));
    Writer huge_array;
    huge_array.u32(0).u64(1ULL << 50);
    auto lying = round_trip(fd, frame(static_cast<uint16_t>(Command::kPushDense), huge_array.bytes()));
    REQUIRE(lying);
    CHECK(lying->status == static_cast<uint32_t>(Status::kBadRequest));
    Writer wrong_table;
    wrong_table.u32(9);
    auto no_table = round_trip(fd, frame(static_cast<uint16_t>(Command::kPullDense), wrong_table.bytes()));
    REQUIRE(no_table);
    CHECK(no_table->status == static_cast<uint32_t>(Status::kBadRequest));
    auto version = round_trip(fd, frame(static_cast<uint16_t>(Command::kPing), {}, 99));
    REQUIRE(version);
    CHECK(version->status == static_cast<uint32_t>(Status::kBadVersion));
    ::close(fd);
    int fd2 = raw_connect(port);
    CHECK_FALSE(round_trip(fd2, frame(1, {}, kVersion, 0xdeadbeef)));      // not our magic: closed
    ::close(fd2);
    int fd3 = raw_connect(port);
    Header h;
    h.command = 1;
    h.body_bytes = 1u << 30;  // oversized: closed without reading it
    std::vector<unsigned char> bytes(kHeaderBytes);
    encode_header(h, bytes.data());
    CHECK_FALSE(round_trip(fd3, bytes));
    ::close(fd3);
  }
  SUBCASE("random frames and truncations") {
    for (int i = 0; i < 300; ++i) {
      int fd = raw_connect(port);
      std::vector<unsigned char> bytes;
      const int kind = i % 3;
      if (kind == 0) {  // random bytes
        bytes.resize(rng() % 80);
        for (auto& b : bytes) b = static_cast<unsigned char>(rng());
      } else {  // a valid header with a random command and a random body, maybe cut short
        std::vector<unsigned char> body(rng() % 64);
        for (auto& b : body) b = static_cast<unsigned char>(rng());
        bytes = frame(static_cast<uint16_t>(rng() % 12), body);
        if (kind == 2) bytes.resize(rng() % bytes.size());
      }
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      ::shutdown(fd, SHUT_WR);
      char sink[256];
      while (::recv(fd, sink, sizeof sink, 0) > 0) {
      }
      ::close(fd);
    }
  }
  CHECK(ping_works());  // still serving
}
