// ps_abuse_bench: one parameter server on loopback, 64 honest workers pushing and pulling through
// PsClient, first alone and then beside abusers on other loopback addresses:
//   - droppers that hang up in the middle of a frame, over and over;
//   - tricklers that send a frame one byte a second;
//   - announcers of a 4 GB frame;
//   - 1,000 idle connections (half of them silent from the start, half after the handshake).
// It prints the honest requests per second of both phases, the process's resident memory and
// what the server refused or closed. With --check it exits 1 unless every honest request
// succeeded, memory stayed bounded and each kind of abuser was cut off (CTest runs it so).
//
//   ps_abuse_bench [--seconds S] [--clients N] [--check]

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ps/client/client.h"
#include "ps/wire/protocol.h"
#include "ps/server/server.h"
#include "ps/table_spec.h"

using namespace paddle;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr size_t kDim = 8;
constexpr size_t kDense = 1 << 16;
constexpr size_t kKeys = 512;

long resident_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE) >> 20;
}

// A connection from `source` to the server; -1 when refused or failed.
int connect_from(const char* source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{}, to{};
  from.sin_family = to.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// The handshake with a server that has no token; false when the server hung up instead.
bool handshake(int fd) {
  char greeting[ps::kGreetingBytes];
  if (::recv(fd, greeting, sizeof greeting, MSG_WAITALL) != static_cast<ssize_t>(sizeof greeting)) return false;
  const std::string proof(ps::kProofBytes, '0');
  char verdict = 0;
  return ::send(fd, proof.data(), proof.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(proof.size()) &&
         ::recv(fd, &verdict, 1, MSG_WAITALL) == 1 && verdict == ps::kProofAccepted;
}

std::vector<unsigned char> header(ps::Command command, uint32_t body_bytes) {
  ps::Header h;
  h.command = static_cast<uint16_t>(command);
  h.body_bytes = body_bytes;
  std::vector<unsigned char> bytes(ps::kHeaderBytes);
  ps::encode_header(h, bytes.data());
  return bytes;
}

// True once the server has closed `fd`: past what it sent (a greeting), end of file or an error.
bool closed_by_server(int fd) {
  char sink[256];
  ssize_t n;
  while ((n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {
  }
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

struct Abuse {
  std::atomic<bool> stop{false};
  std::atomic<long> dropped{0}, announced{0}, announced_cut{0}, trickled_cut{0}, idle_refused{0}, idle_cut{0};
  std::vector<std::thread> threads;
  std::vector<int> idle;

  void start(int port) {
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([this, port] {  // droppers: half a frame, then hang up
        while (!stop) {
          const int fd = connect_from("127.0.0.2", port);
          if (fd < 0) continue;
          if (handshake(fd)) {
            auto bytes = header(ps::Command::kPushDense, 4096);
            bytes.resize(bytes.size() + 1000, 0);
            ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
          }
          ::close(fd);
          ++dropped;
        }
      });
    threads.emplace_back([this, port] {  // announcers of a 4 GB frame, pushing junk until cut off
      std::vector<unsigned char> junk(1 << 20, 0);
      while (!stop) {
        const int fd = connect_from("127.0.0.3", port);
        if (fd < 0) continue;
        if (handshake(fd)) {
          const auto h = header(ps::Command::kPushDense, 0xffffffffu);
          ::send(fd, h.data(), h.size(), MSG_NOSIGNAL);
          ++announced;
          while (!stop && ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL) > 0) {
          }
          stop ? --announced : ++announced_cut;  // the last one is cut by the end of the phase
        }
        ::close(fd);
      }
    });
    threads.emplace_back([this, port] {  // tricklers: 16 frames, a byte a second each
      std::vector<int> fds;
      for (int i = 0; i < 16; ++i) {
        const int fd = connect_from("127.0.0.4", port);
        if (fd >= 0 && handshake(fd)) fds.push_back(fd);
      }
      const auto frame = header(ps::Command::kPing, 0);
      for (size_t byte = 0; !stop; ++byte) {
        for (int& fd : fds) {
          if (fd < 0) continue;
          if (::send(fd, &frame[byte % frame.size()], 1, MSG_NOSIGNAL) != 1 || closed_by_server(fd)) {
            ::close(fd);
            fd = -1;
            ++trickled_cut;
          }
        }
        for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(100ms);
      }
      for (int fd : fds)
        if (fd >= 0) ::close(fd);
    });
    for (int i = 0; i < 1000; ++i) {  // idle: 500 silent from the start, 500 silent after the handshake
      const int fd = connect_from(i < 500 ? "127.0.0.5" : "127.0.0.6", port);
      if (fd < 0) continue;
      if (i >= 500) handshake(fd);
      idle.push_back(fd);
    }
  }

  void finish() {
    stop = true;
    for (auto& t : threads) t.join();
    for (int fd : idle) {
      if (closed_by_server(fd)) ++idle_cut;
      ::close(fd);
    }
  }
};

struct Honest {
  std::atomic<long> requests{0}, failures{0};
  std::string first_failure;
  std::mutex failure_mutex;

  void run(const std::string& endpoint, const ps::TableSpecs& tables, int clients, std::chrono::milliseconds length) {
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
      threads.emplace_back([&, c] {
        try {
          ps::ClientOptions options;
          options.connect_timeout = 10s;
          options.request_timeout = 30s;
          ps::PsClient client({endpoint}, tables, options);
          std::mt19937_64 rng(static_cast<uint64_t>(c) + 1);
          std::vector<uint64_t> keys(kKeys);
          std::vector<float> grads(kKeys * kDim, 0.001f);
          const auto end = Clock::now() + length;
          while (Clock::now() < end) {
            for (auto& k : keys) k = rng() % 1000000;
            client.push_sparse(0, keys, grads);
            client.pull_sparse(0, keys);
            client.pull_dense(0);
            requests += 3;
          }
        } catch (const std::exception& e) {
          ++failures;
          std::lock_guard lock(failure_mutex);
          if (first_failure.empty()) first_failure = e.what();
        }
      });
    for (auto& t : threads) t.join();
  }
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int clients = 64;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (arg == "--clients" && i + 1 < argc) clients = std::stoi(argv[++i]);
    else if (arg == "--check") check = true;
    else {
      fmt::print(stderr, "usage: ps_abuse_bench [--seconds S] [--clients N] [--check]\n");
      return 2;
    }
  }
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);  // 1,000 idle connections need both their ends
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);

  ps::TableSpecs tables;
  tables.dense.push_back({"dense", kDense});
  tables.sparse.push_back({"sparse", kDim, /*seed=*/1});
  ps::ServerOptions options;
  options.sync = false;
  options.workers = 1 << 30;  // never ends by STOP_WORKER
  options.limits.frame_timeout = std::chrono::milliseconds(static_cast<long>(seconds * 400));
  options.log = std::tmpfile();
  ps::ParameterServer server(options, ps::build_server_tables(tables, 0, 1));
  std::thread serving([&] { server.run(); });
  const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
  const auto length = std::chrono::milliseconds(static_cast<long>(seconds * 1000));

  fmt::print("{} honest clients, 1 server (2 threads), {} s a phase, {} keys x dim {} pushed and pulled, "
             "{} floats dense pulled\n", clients, seconds, kKeys, kDim, kDense);
  Honest warm_up;  // creates the rows the phases then pull
  warm_up.run(endpoint, tables, clients, 1s);
  Honest alone;
  alone.run(endpoint, tables, clients, length);
  const long memory_alone = resident_mb();

  Abuse abuse;
  long memory_peak = 0;
  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling) {
      memory_peak = std::max(memory_peak, resident_mb());
      std::this_thread::sleep_for(50ms);
    }
  });
  abuse.start(server.port());
  Honest beside;
  beside.run(endpoint, tables, clients, length);
  abuse.finish();
  sampling = false;
  sampler.join();
  server.stop();
  serving.join();

  const double alone_rate = alone.requests / seconds, beside_rate = beside.requests / seconds;
  fmt::print("honest alone:           {:9.0f} requests/s  ({} failed)  resident {} MB\n", alone_rate,
             alone.failures.load(), memory_alone);
  fmt::print("honest beside abusers:  {:9.0f} requests/s  ({} failed)  resident peak {} MB  ({:.0f}% of alone)\n",
             beside_rate, beside.failures.load(), memory_peak, 100 * beside_rate / std::max(alone_rate, 1.0));
  fmt::print("abusers: {} dropped mid-frame, {} 4 GB frames announced ({} cut off), {} of 16 tricklers cut off, "
             "{} of {} idle connections closed by the server\n", abuse.dropped.load(), abuse.announced.load(),
             abuse.announced_cut.load(), abuse.trickled_cut.load(), abuse.idle_cut.load(), abuse.idle.size());
  if (!alone.first_failure.empty() || !beside.first_failure.empty())
    fmt::print("first failure: {}\n", alone.first_failure.empty() ? beside.first_failure : alone.first_failure);
  if (!check) return 0;
  std::vector<std::string> wrong;
  if (alone.failures || beside.failures) wrong.push_back("honest requests failed");
  if (beside.requests == 0) wrong.push_back("no honest request was served beside the abusers");
  if (memory_peak - memory_alone > 256) wrong.push_back(fmt::format("memory grew by {} MB", memory_peak - memory_alone));
  if (abuse.announced == 0 || abuse.announced_cut != abuse.announced) wrong.push_back("a 4 GB frame was not cut off");
  if (abuse.trickled_cut != 16) wrong.push_back("a trickler outlived the frame timeout");
  if (abuse.idle_cut < 744) wrong.push_back("idle connections over the per-peer limit were kept");
  for (const auto& w : wrong) fmt::print("FAILED: {}\n", w);
  return wrong.empty() ? 0 : 1;
}
