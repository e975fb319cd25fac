#pragma once
// What the parameter-server tests share: small tables, a server on a thread, quick client
// options, scratch directories and raw frames for talking to a server byte by byte.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "ps/client/client.h"
#include "ps/wire/protocol.h"
#include "ps/server/server.h"
#include "ps/table_spec.h"
#include "ps/table/tables.h"

namespace paddle::ps::testing {

// A dense table of `dense_size` values and two sparse tables, "embedding" of dim 3 and "wide"
// of dim 1, updated by SGD at rate 0.5.
inline TableSpecs small_specs(size_t dense_size = 10) {
  TableSpecs specs;
  specs.dense.push_back({"weights", dense_size});
  specs.sparse.push_back({"embedding", 3, /*seed=*/42});
  specs.sparse.push_back({"wide", 1, /*seed=*/7});
  specs.learning_rate = 0.5f;
  return specs;
}

inline ServerTables small_tables(size_t dense_size = 10) { return build_local_tables(small_specs(dense_size)); }

// A fresh directory under the system's temporary one, named for the test and this process.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A server on a free loopback port, run on a thread until every worker stops (or the end). It
// logs to stderr unless the options name another file.
struct RunningServer {
  std::unique_ptr<ParameterServer> server;
  std::thread thread;
  explicit RunningServer(ServerOptions options, ServerTables tables = small_tables()) {
    if (options.log == stdout) options.log = stderr;
    server = std::make_unique<ParameterServer>(options, std::move(tables));
    thread = std::thread([this] { server->run(); });
  }
  ~RunningServer() {
    server->stop();
    thread.join();
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

inline ClientOptions quick() {
  ClientOptions o;
  o.connect_timeout = std::chrono::seconds(5);
  o.request_timeout = std::chrono::seconds(5);
  return o;
}

// A plain TCP connection to a loopback server, from `source` (any 127.0.0.0/8 address), with a
// 2 s receive timeout; nothing sent yet.
inline int tcp_connect(int port, const char* source = "127.0.0.1") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// The handshake of a server without a token: its challenge in, any proof out, '+' back.
inline void handshake(int fd) {
  char greeting[kGreetingBytes];
  REQUIRE(::recv(fd, greeting, sizeof greeting, MSG_WAITALL) == static_cast<ssize_t>(sizeof greeting));
  const std::string proof(kProofBytes, '0');
  REQUIRE(::send(fd, proof.data(), proof.size(), 0) == static_cast<ssize_t>(proof.size()));
  char verdict = 0;
  REQUIRE(::recv(fd, &verdict, 1, MSG_WAITALL) == 1);
  REQUIRE(verdict == kProofAccepted);
}

inline int raw_connect(int port, const char* source = "127.0.0.1") {
  const int fd = tcp_connect(port, source);
  handshake(fd);
  return fd;
}

inline std::vector<unsigned char> frame(uint16_t command, std::vector<unsigned char> body, uint16_t version = kVersion,
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
inline std::optional<Header> round_trip(int fd, const std::vector<unsigned char>& bytes) {
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

}  // namespace paddle::ps::testing
