#include <doctest/doctest.h>

#include <random>
#include <tuple>

#include <fmt/format.h>

#include "ps/server/server.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

TEST_CASE("a refused request's reply carries its error's status and names its command") {
  ServerOptions o;
  RunningServer s(o);
  auto reply_to = [&](Command command, const std::vector<unsigned char>& body) {
    const std::vector<unsigned char> reply = s.server->answer_frame(frame(static_cast<uint16_t>(command), body));
    REQUIRE(reply.size() >= kHeaderBytes);
    const Header header = decode_header(reply.data());
    Reader message(reply.data() + kHeaderBytes, reply.size() - kHeaderBytes);
    return std::pair{static_cast<Status>(header.status), message.str()};
  };
  Writer wrong_table;
  wrong_table.u32(9);
  auto [status, message] = reply_to(Command::kPullDense, wrong_table.bytes());
  CHECK(status == Status::kBadRequest);
  CHECK(message.starts_with("PULL_DENSE: no dense table 9 (this server has "));
  Writer bad_mode;
  bad_mode.str("/tmp/x").u32(7);
  std::tie(status, message) = reply_to(Command::kSaveMode, bad_mode.bytes());
  CHECK(status == Status::kBadRequest);
  CHECK(message == "SAVE_MODE: save mode 7 is not 0 (all), 1 (base) or 2 (delta)");
  std::tie(status, message) = reply_to(static_cast<Command>(kLastCommand + 1), {});
  CHECK(status == Status::kUnknownCommand);
  CHECK(message == fmt::format("unknown command {}", kLastCommand + 1));
}

TEST_CASE("fuzz: malformed, truncated, oversized and unknown frames never break the server") {
  ServerOptions o;
  o.limits.max_frame_bytes = 1 << 16;
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
