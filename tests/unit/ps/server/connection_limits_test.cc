#include "ps/server/connection_limits.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "common/error.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// Seconds until the server closes `fd` (a recv that returns 0 or fails), at most `limit`.
double seconds_until_closed(int fd, std::chrono::milliseconds limit) {
  timeval tv{0, 50000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto start = Clock::now();
  char sink[64];
  while (Clock::now() - start < limit) {
    const ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) break;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool ping_works(int port, const char* source = "127.0.0.1") {
  const int fd = raw_connect(port, source);
  auto reply = round_trip(fd, frame(static_cast<uint16_t>(Command::kPing), {}));
  ::close(fd);
  return reply && reply->status == static_cast<uint32_t>(Status::kOk);
}

// The server's log, in a temporary file the test reads back.
struct CapturedLog {
  std::FILE* file = std::tmpfile();
  ~CapturedLog() { std::fclose(file); }
  std::string text() const {
    std::fflush(file);
    std::string out;
    std::rewind(file);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) out.append(buffer, n);
    std::fseek(file, 0, SEEK_END);
    return out;
  }
};

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST_CASE("the limits come from the environment, and a bad value names its variable") {
  const auto defaults = ConnectionLimits::from_environment({});
  CHECK(defaults.max_frame_bytes == kDefaultMaxBody);
  CHECK(defaults.idle_timeout == std::chrono::hours(1));
  const auto set = ConnectionLimits::from_environment({{"PADDLE_PS_MAX_FRAME_BYTES", "65536"},
                                                       {"PADDLE_PS_FRAME_TIMEOUT", "2.5"},
                                                       {"PADDLE_PS_IDLE_TIMEOUT", "0"},
                                                       {"PADDLE_PS_MAX_CONNECTIONS_PER_PEER", "8"},
                                                       {"PADDLE_PS_MAX_CONNECTIONS", "100"}});
  CHECK(set.max_frame_bytes == 65536);
  CHECK(set.frame_timeout == 2500ms);
  CHECK(set.idle_timeout == 0ms);
  CHECK(set.max_connections_per_peer == 8);
  CHECK(set.max_connections == 100);
  CHECK_THROWS_WITH_AS(ConnectionLimits::from_environment({{"PADDLE_PS_MAX_FRAME_BYTES", "8000000000"}}),
                       doctest::Contains("PADDLE_PS_MAX_FRAME_BYTES=8000000000 is out of range"),
                       paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(ConnectionLimits::from_environment({{"PADDLE_PS_MAX_CONNECTIONS_PER_PEER", "many"}}),
                       doctest::Contains("PADDLE_PS_MAX_CONNECTIONS_PER_PEER"), paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(ConnectionLimits::from_environment({{"PADDLE_PS_FRAME_TIMEOUT", "-1"}}),
                       doctest::Contains("PADDLE_PS_FRAME_TIMEOUT"), paddle::common::ConfigError);
}

TEST_CASE("a frame over the size limit is closed unread, and the server names the peer") {
  CapturedLog log;
  ServerOptions o;
  o.log = log.file;
  o.limits.max_frame_bytes = 1 << 16;
  RunningServer s(o);
  const int fd = raw_connect(s.server->port());
  Header h;
  h.command = static_cast<uint16_t>(Command::kPushDense);
  h.body_bytes = 0xffffffffu;  // 4 GB announced
  std::vector<unsigned char> bytes(kHeaderBytes);
  encode_header(h, bytes.data());
  CHECK_FALSE(round_trip(fd, bytes));
  sockaddr_in mine{};
  socklen_t len = sizeof mine;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &len);
  ::close(fd);
  CHECK(log.text().find(fmt::format("refused 127.0.0.1:{}: a frame of 4294967295 bytes is over 65536 "
                                    "(PADDLE_PS_MAX_FRAME_BYTES)", ntohs(mine.sin_port))) != std::string::npos);
  CHECK(ping_works(s.server->port()));
}

TEST_CASE("a body is held only as far as it has arrived") {
  ServerOptions o;
  o.limits.frame_timeout = 10s;
  RunningServer s(o);
  // Sixteen connections each announce 200 MB and send 1 KB of it: the server must not reserve 3 GB.
  const long before = resident_bytes();
  std::vector<int> fds;
  for (int i = 0; i < 16; ++i) {
    const int fd = raw_connect(s.server->port());
    Header h;
    h.command = static_cast<uint16_t>(Command::kPushDense);
    h.body_bytes = 200u << 20;
    std::vector<unsigned char> bytes(kHeaderBytes + 1024, 0);
    encode_header(h, bytes.data());
    REQUIRE(::send(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    fds.push_back(fd);
  }
  CHECK(ping_works(s.server->port()));  // every partial body has been read as far as it goes
  CHECK(resident_bytes() - before < (64l << 20));
  for (int fd : fds) ::close(fd);
}

TEST_CASE("the handshake, a begun frame and a reply each have the frame timeout, however slowly bytes come") {
  CapturedLog log;
  ServerOptions o;
  o.log = log.file;
  o.limits.frame_timeout = 400ms;
  RunningServer s(o);
  const int port = s.server->port();

  SUBCASE("a connection that never answers the challenge") {
    const int fd = tcp_connect(port);
    const double closed = seconds_until_closed(fd, 3s);
    CHECK(closed > 0.3);
    CHECK(closed < 1.5);
    ::close(fd);
    CHECK(log.text().find("closed 127.0.0.1:" ) != std::string::npos);
    CHECK(log.text().find("the handshake did not come within 0.4 s (PADDLE_PS_FRAME_TIMEOUT)") != std::string::npos);
  }
  SUBCASE("a frame sent one byte every 100 ms") {
    const int fd = raw_connect(port);
    const auto bytes = frame(static_cast<uint16_t>(Command::kPing), {});
    const auto start = Clock::now();
    bool closed = false;
    for (unsigned char b : bytes) {  // 24 bytes would take 2.4 s
      if (::send(fd, &b, 1, MSG_NOSIGNAL) != 1) {
        closed = true;
        break;
      }
      std::this_thread::sleep_for(100ms);
      if (Clock::now() - start > 1s) break;
    }
    closed = closed || seconds_until_closed(fd, 2s) < 1.9;
    CHECK(closed);
    CHECK(Clock::now() - start < 2s);
    ::close(fd);
    CHECK(log.text().find("the rest of a frame did not come within 0.4 s") != std::string::npos);
    CHECK(ping_works(port));  // meanwhile and after, others are served
  }
}

TEST_CASE("an idle connection is closed after the idle timeout, and never when it is zero") {
  ServerOptions o;
  o.limits.idle_timeout = 300ms;
  RunningServer s(o);
  const int fd = raw_connect(s.server->port());
  const double closed = seconds_until_closed(fd, 3s);
  CHECK(closed > 0.2);
  CHECK(closed < 1.5);
  ::close(fd);

  ServerOptions never;
  never.limits.idle_timeout = 0ms;
  RunningServer patient(never);
  const int kept = raw_connect(patient.server->port());
  CHECK(seconds_until_closed(kept, 800ms) >= 0.75);
  auto reply = round_trip(kept, frame(static_cast<uint16_t>(Command::kPing), {}));
  CHECK((reply && reply->status == static_cast<uint32_t>(Status::kOk)));
  ::close(kept);
}

TEST_CASE("connections per peer and in all are bounded, and a closed one frees its place") {
  CapturedLog log;
  ServerOptions o;
  o.log = log.file;
  o.limits.max_connections_per_peer = 3;
  o.limits.max_connections = 5;
  RunningServer s(o);
  const int port = s.server->port();
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(raw_connect(port, "127.0.0.2"));
  const int fourth = tcp_connect(port, "127.0.0.2");
  CHECK(seconds_until_closed(fourth, 2s) < 1.0);  // refused at accept: no greeting, closed
  ::close(fourth);
  CHECK(log.text().find("127.0.0.2 holds 3 connections already (PADDLE_PS_MAX_CONNECTIONS_PER_PEER)") !=
        std::string::npos);

  // Another peer still gets in. Its connection is held, not closed: a closed one counts until
  // the server has seen the close, which under TSan came after the next connection.
  held.push_back(raw_connect(port, "127.0.0.3"));
  auto pong = round_trip(held.back(), frame(static_cast<uint16_t>(Command::kPing), {}));
  CHECK((pong && pong->status == static_cast<uint32_t>(Status::kOk)));
  held.push_back(raw_connect(port, "127.0.0.4"));
  const int sixth = tcp_connect(port, "127.0.0.5");
  CHECK(seconds_until_closed(sixth, 2s) < 1.0);
  ::close(sixth);
  CHECK(log.text().find("5 connections are open already (PADDLE_PS_MAX_CONNECTIONS)") != std::string::npos);

  ::close(held.front());
  held.erase(held.begin());
  bool admitted = false;
  for (int attempt = 0; attempt < 50 && !admitted; ++attempt) {  // the server sees the close a moment later
    std::this_thread::sleep_for(20ms);
    const int fd = tcp_connect(port, "127.0.0.2");
    char greeting[kGreetingBytes];
    admitted = ::recv(fd, greeting, sizeof greeting, MSG_WAITALL) == static_cast<ssize_t>(sizeof greeting);
    ::close(fd);
  }
  CHECK(admitted);
  for (int fd : held) ::close(fd);
}

TEST_CASE("a flood of refused connections is logged once per peer and limit, then every 1000th") {
  CapturedLog log;
  ServerOptions o;
  o.log = log.file;
  o.limits.max_connections_per_peer = 1;
  RunningServer s(o);
  const int held = raw_connect(s.server->port(), "127.0.0.6");
  for (int i = 0; i < 20; ++i) {
    const int fd = tcp_connect(s.server->port(), "127.0.0.6");
    seconds_until_closed(fd, 2s);
    ::close(fd);
  }
  const std::string text = log.text();
  size_t lines = 0;
  for (size_t at = text.find("PADDLE_PS_MAX_CONNECTIONS_PER_PEER"); at != std::string::npos;
       at = text.find("PADDLE_PS_MAX_CONNECTIONS_PER_PEER", at + 1))
    ++lines;
  CHECK(lines == 1);
  ::close(held);
}
