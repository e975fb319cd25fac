// control_plane_bench: the multi-node control plane at thousands of nodes, on one machine.
//
//   control_plane_bench nodes K   K node agents, each the real ClusterLink code (launcher/cluster/)
//                                 on its own loopback address 127.100.X.Y: node 0, which hosts
//                                 the master store and judges, in a child process of its own;
//                                 the other K-1 on threads of this one. Prints, on one line:
//                                 the rendezvous (start to every agent joined), the master's CPU
//                                 seconds per second and requests per second over 3 s of steady
//                                 state, a failure reported by the last node to every agent
//                                 holding the verdict (settle_time included), and a restart
//                                 generation (the verdict to every agent joined again).
//   control_plane_bench ranks K   the workers' store (collective/kv_store_server.h, in a child
//                                 process, as rank 0 hosts it) with K simulated ranks, each
//                                 setting its address and reading its ring neighbour's (Gloo's
//                                 set and get), over 64 shared connections.
//
// Each agent holds one connection to the master and two threads (its watch and its caller), so
// K nodes need K open files and 2K threads here: scripts/bench_control_plane.sh raises what it can.

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collective/http_store.h"
#include "collective/kv_store_server.h"
#include "launcher/cluster/cluster_link.h"

namespace {

using namespace paddle;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kToken = "control-plane-bench";

std::string agent_ip(int i) { return fmt::format("127.100.{}.{}", i / 250, i % 250 + 1); }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

launcher::ClusterSettings settings_of(int i, int port, int k) {
  launcher::ClusterSettings s;
  s.master_ip = agent_ip(0);
  s.master_port = port;
  s.job_id = "bench";
  s.nnodes = k;
  s.min_nodes = k;
  s.node_ip = agent_ip(i);
  s.host_master = i == 0;
  s.node_rank = i;
  s.rendezvous_timeout = milliseconds(600000);
  // One machine plays every node: while K agents each read a K-node member list, some get no CPU
  // for seconds, which on a real cluster (a CPU per node) does not happen. A longer dead_after
  // keeps them from being judged gone; the master's work does not depend on it.
  s.dead_after = milliseconds(60000);
  s.token = common::JobToken(kToken);
  return s;
}

launcher::NodeRegistration registration_of(int i) {
  launcher::NodeRegistration me;
  me.ip = agent_ip(i);
  me.hostname = fmt::format("agent{}", i);
  me.requested_rank = i;
  me.endpoints = {me.ip + ":6170"};
  me.tcp_store = me.ip + ":6171";
  return me;
}

launcher::JobFailure failure_of(int i) {
  launcher::JobFailure f;
  f.cause = launcher::JobFailure::Cause::kProcessFailed;
  f.node_rank = i;
  f.ip = agent_ip(i);
  f.hostname = fmt::format("agent{}", i);
  f.what = "trainer (local 0) ended with exit code 3";
  f.exit_status = 3;
  return f;
}

// One node's life in the scenario: join, wait for the failure and its verdict, join again, finish.
// `failed` is set by the bench when the last node is to report; returns the verdict's exit status.
struct Times {
  Clock::time_point joined, verdict, rejoined;
};

Times live(launcher::ClusterLink& link, int i, int k, const std::function<void()>& joined, std::atomic<bool>& fail_now) {
  Times t;
  link.join(0, registration_of(i));
  t.joined = Clock::now();
  joined();
  if (i == k - 1) {
    while (!fail_now) std::this_thread::sleep_for(milliseconds(10));
    link.report(0, failure_of(i));
  }
  // As the supervisor does: it asks for the verdict once it knows of a failure.
  while (!link.failure()) std::this_thread::sleep_for(milliseconds(50));
  const auto root = link.verdict(0, failure_of(i), [] { return false; });
  if (root.node_rank != k - 1) fmt::print(stderr, "agent {}: the verdict is not the failure: {}\n", i, root.describe());
  t.verdict = Clock::now();
  link.join(1, registration_of(i));
  t.rejoined = Clock::now();
  link.finish(1);
  return t;
}

void raise_open_files() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// utime + stime of process `pid`, in seconds.
double cpu_seconds(pid_t pid) {
  FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (!f) return 0;
  char buffer[4096];
  const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  buffer[n] = 0;
  const std::string text(buffer);
  size_t pos = text.rfind(')') + 2;
  unsigned long long utime = 0, stime = 0;
  for (int field = 3; field <= 15; ++field) {
    const size_t end = text.find(' ', pos);
    if (field == 14) utime = std::stoull(text.substr(pos, end - pos));
    if (field == 15) stime = std::stoull(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pid_t spawn_self(const char* self, std::vector<std::string> args) {
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the master goes with the bench, whatever ends it
    std::vector<char*> argv{const_cast<char*>(self)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

int free_port(const std::string& ip) {
  collective::KvStoreServer probe(ip, 0, common::JobToken(kToken));  // binds a free port, then lets it go
  return probe.port();
}

int master(int port, int k) {
  launcher::LaunchLog log(std::fopen("/dev/null", "w"));
  launcher::ClusterLink link(settings_of(0, port, k), log);
  link.join(0, registration_of(0));
  while (!link.failure()) std::this_thread::sleep_for(milliseconds(20));
  link.verdict(0, failure_of(0), [] { return false; });
  link.join(1, registration_of(0));
  link.finish(1);
  return 0;
}

int nodes(const char* self, int k) {
  raise_open_files();
  const int port = free_port(agent_ip(0));
  const auto started = Clock::now();
  const pid_t master_pid = spawn_self(self, {"master", std::to_string(port), std::to_string(k)});
  // When the master published each generation's member list: the control plane's own part of
  // the rendezvous, before every agent has read it.
  Clock::time_point published[2];
  std::thread publish_watch([&] {
    collective::HttpStore store(agent_ip(0), port, milliseconds(600000), milliseconds(10000), common::JobToken(kToken));
    for (int g = 0; g < 2; ++g)
      while (true) {
        try {
          if (store.wait_value(fmt::format("bench.g{}.members", g), milliseconds(1000))) {
            published[g] = Clock::now();
            break;
          }
        } catch (const common::PeerError&) {
          std::this_thread::sleep_for(milliseconds(20));  // the master is not up yet
        }
      }
  });
  launcher::LaunchLog log(std::fopen("/dev/null", "w"));
  std::vector<std::unique_ptr<launcher::ClusterLink>> links(k);
  std::vector<Times> times(k);
  std::mutex mutex;
  std::condition_variable all_joined;
  int joined = 0;
  std::atomic<bool> fail_now = false;
  std::vector<std::thread> agents;
  agents.reserve(k);
  for (int i = 1; i < k; ++i)
    agents.emplace_back([&, i] {
      links[i] = std::make_unique<launcher::ClusterLink>(settings_of(i, port, k), log);
      times[i] = live(*links[i], i, k, [&] {
        std::lock_guard lock(mutex);
        if (++joined == k - 1) all_joined.notify_all();
      }, fail_now);
    });
  {
    std::unique_lock lock(mutex);
    all_joined.wait(lock, [&] { return joined == k - 1; });
  }
  const double rendezvous = seconds_since(started);
  // Steady state: every node waits in its watch; the master answers each once per heartbeat.
  std::this_thread::sleep_for(milliseconds(1000));
  collective::HttpStore stats(agent_ip(0), port, milliseconds(10000), milliseconds(10000), common::JobToken(kToken));
  const auto requests_before = nlohmann::json::parse(stats.stats())["requests"].get<double>();
  const double cpu_before = cpu_seconds(master_pid);
  const auto window_start = Clock::now();
  std::this_thread::sleep_for(milliseconds(3000));
  const double window = seconds_since(window_start);
  const double cpu = (cpu_seconds(master_pid) - cpu_before) / window;
  const double requests = (nlohmann::json::parse(stats.stats())["requests"].get<double>() - requests_before - 1) / window;
  const auto failed_at = Clock::now();
  fail_now = true;
  for (auto& a : agents) a.join();
  publish_watch.join();
  int status = 0;
  waitpid(master_pid, &status, 0);
  Clock::time_point last_verdict = failed_at, last_rejoin = failed_at;
  for (int i = 1; i < k; ++i) {
    last_verdict = std::max(last_verdict, times[i].verdict);
    last_rejoin = std::max(last_rejoin, times[i].rejoined);
  }
  auto since = [](Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); };
  fmt::print("{} nodes: rendezvous {:.2f} s (member list published at {:.2f} s), master CPU {:.1f}% of a core and "
             "{:.0f} requests/s in steady state, failure to every agent holding the verdict {:.2f} s (settle_time "
             "1.5 s included), restart generation {:.2f} s (member list published at {:.2f} s), master exit {}\n",
             k, rendezvous, since(started, published[0]), cpu * 100, requests, since(failed_at, last_verdict),
             since(last_verdict, last_rejoin), since(last_verdict, published[1]),
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

int store(int port) {
  collective::KvStoreServer server("127.0.0.1", port, common::JobToken(kToken));
  // Serves until its parent closes the pipe on stdin.
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}

int ranks(const char* self, int k) {
  const int port = free_port("127.0.0.1");
  int to_child[2];
  if (pipe(to_child) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(to_child[0], 0);
    close(to_child[1]);
    const std::string p = std::to_string(port);
    execl("/proc/self/exe", self, "store", p.c_str(), nullptr);
    _exit(127);
  }
  close(to_child[0]);
  constexpr int kConnections = 64;
  const auto started = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> wrong = 0;
  for (int t = 0; t < kConnections; ++t)
    threads.emplace_back([&, t] {
      collective::HttpStore store("127.0.0.1", port, milliseconds(120000), milliseconds(10000), common::JobToken(kToken));
      for (int r = t; r < k; r += kConnections) {
        const std::string address = fmt::format("127.{}.{}.{}:6170", r >> 16, (r >> 8) & 255, r & 255);
        store.set(fmt::format("rank/{}", r), std::vector<char>(address.begin(), address.end()));
      }
      for (int r = t; r < k; r += kConnections) {
        const int next = (r + 1) % k;
        const auto value = store.get(fmt::format("rank/{}", next));
        const std::string expected = fmt::format("127.{}.{}.{}:6170", next >> 16, (next >> 8) & 255, next & 255);
        if (std::string(value.begin(), value.end()) != expected) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  const double elapsed = seconds_since(started);
  close(to_child[1]);
  waitpid(child, nullptr, 0);
  fmt::print("{} ranks: each set its address and read its ring neighbour's in {:.2f} s ({:.0f} requests/s over {} "
             "connections), {} wrong\n",
             k, elapsed, 2.0 * k / elapsed, kConnections, wrong.load());
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "nodes" && argc == 3) return nodes(argv[0], std::stoi(argv[2]));
    if (mode == "ranks" && argc == 3) return ranks(argv[0], std::stoi(argv[2]));
    if (mode == "master" && argc == 4) return master(std::stoi(argv[2]), std::stoi(argv[3]));
    if (mode == "store" && argc == 3) return store(std::stoi(argv[2]));
  } catch (const std::exception& e) {
    fmt::print(stderr, "control_plane_bench {}: {}\n", mode, e.what());
    return 1;
  }
  fmt::print(stderr, "usage: control_plane_bench nodes K | ranks K\n");
  return 2;
}
