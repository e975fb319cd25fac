// control_plane_bench: the multi-node control plane at thousands of nodes, on one machine (one
// program for its three scenarios, which share the agents, the master and their timing).
//
//   control_plane_bench nodes K   K node agents, each the real ClusterLink code (launcher/cluster/)
//                                 on its own loopback address 127.100.X.Y: node 0, which hosts
//                                 the master store and judges, in a child process of its own;
//                                 the other K-1 on threads of child processes of 1,024 agents.
//                                 Prints, on one line: the rendezvous (start to every agent
//                                 joined), the member list's size, the master's CPU seconds per
//                                 second and requests per second in steady state (3 s, and at
//                                 least four heartbeats), a failure reported by the last node to
//                                 every agent holding the verdict (settle_time included), and a
//                                 restart generation (the verdict to every agent joined again),
//                                 with the master's open connections. Each agent receives the
//                                 whole member list; a process's agents share its decoding, as
//                                 K machines would each decode their own at the same time.
//   control_plane_bench ranks K   the workers' store (store/kv_store_server.h, in a child
//                                 process, as rank 0 hosts it) with K simulated ranks, each
//                                 setting its address and reading its ring neighbour's (Gloo's
//                                 set and get), over 64 shared connections.
//
// Each agent holds one connection to the master (two while it reports), its own event loop's
// descriptors and two threads (its watch and its caller), so K nodes need 2K threads here:
// scripts/bench_control_plane.sh raises what it can.

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/rendezvous_store.h"
#include "store/store_client.h"
#include "store/store_verbs.h"
#include "store/kv_store_server.h"
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
  // Past 4,096 agents, 2 cores cannot wake every agent's watch within two heartbeats, and a node
  // not heard from for that long holds the verdict (judge.h): the heartbeat grows with K there.
  s.heartbeat_interval = std::max(s.heartbeat_interval, s.heartbeat_interval * k / 4096);
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
  bool verdict_right = false;  // the verdict named the failing node (not the provisional, its wait run out)
  std::string verdict_what;    // what it named
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
  while (!link.wait_for_failure(milliseconds(60000))) {
  }
  const auto root = link.verdict(0, failure_of(i), [] { return false; });
  t.verdict = Clock::now();
  t.verdict_right = root.node_rank == k - 1 && root.exit_status == 3 && root.ip == agent_ip(k - 1);
  t.verdict_what = fmt::format("node {} ({}): {}", root.node_rank, root.ip, root.what);
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
  store::KvStoreServer probe(ip, 0, common::JobToken(kToken));  // binds a free port, then lets it go
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

// A process of agents first..end-1 (the agents' processes: each agent needs about five open
// files, so one process cannot hold thousands under the open-file limit). It says on stdout
// "joined T" when all of them have joined (T: the last one's steady-clock nanoseconds), waits
// for a line on stdin before the last node of the job reports its failure, and says
// "done V R" when all of them have held the verdict (V) and joined the restart (R).
int agents(int port, int k, int first, int end) {
  raise_open_files();
  launcher::LaunchLog log(std::fopen("/dev/null", "w"));
  // K machines would each decode the member list at the same time, on a CPU of their own; here
  // a process's agents share one decoding (member_list.h). Each still receives the whole list.
  const auto member_lists = std::make_shared<launcher::MemberLists>();
  const int count = end - first;
  std::vector<std::unique_ptr<launcher::ClusterLink>> links(count);
  std::vector<Times> times(count);
  std::mutex mutex;
  std::condition_variable all_joined;
  int joined = 0;
  Clock::time_point last_joined{};
  std::atomic<bool> fail_now = false;
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (int i = first; i < end; ++i)
    threads.emplace_back([&, i] {
      links[i - first] = std::make_unique<launcher::ClusterLink>(settings_of(i, port, k), log, member_lists);
      times[i - first] = live(*links[i - first], i, k, [&] {
        std::lock_guard lock(mutex);
        last_joined = Clock::now();
        if (++joined == count) all_joined.notify_all();
      }, fail_now);
    });
  {
    std::unique_lock lock(mutex);
    all_joined.wait(lock, [&] { return joined == count; });
    fmt::print("joined {}\n", last_joined.time_since_epoch().count());
  }
  std::fflush(stdout);
  auto latest = [&](Clock::time_point Times::*field) {
    Clock::time_point t{};
    for (const auto& x : times) t = std::max(t, x.*field);
    return t.time_since_epoch().count();
  };
  char line[16];
  if (!std::fgets(line, sizeof(line), stdin)) return 1;
  fail_now = true;
  for (auto& t : threads) t.join();
  const auto wrong = std::count_if(times.begin(), times.end(), [](const Times& t) { return !t.verdict_right; });
  if (wrong) {
    const auto example = std::find_if(times.begin(), times.end(), [](const Times& t) { return !t.verdict_right; });
    fmt::print(stderr, "agents {} to {}: {} of them had no verdict naming the failure in time (agent {} had: {})\n", first,
               end - 1, wrong, first + (example - times.begin()), example->verdict_what);
  }
  fmt::print("done {} {}\n", latest(&Times::verdict), latest(&Times::rejoined));
  std::fflush(stdout);
  return wrong ? 1 : 0;
}

// A child of this program (`args`) whose stdin and stdout are pipes to this process.
struct Child {
  pid_t pid = -1;
  FILE* to = nullptr;
  FILE* from = nullptr;
};

Child spawn_piped(const char* self, std::vector<std::string> args) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    std::vector<char*> argv{const_cast<char*>(self)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(in[0]), close(out[1]);
  c.to = fdopen(in[1], "w");
  c.from = fdopen(out[0], "r");
  return c;
}

// Reads "WORD A [B]" from `c`: the steady-clock times it gives.
std::vector<Clock::time_point> read_times(Child& c, const char* word) {
  char line[128];
  if (!std::fgets(line, sizeof(line), c.from) || !std::string_view(line).starts_with(word))
    throw std::runtime_error(fmt::format("an agents' process (pid {}) ended before it said '{}'", c.pid, word));
  std::vector<Clock::time_point> t;
  char* p = line + std::strlen(word);
  while (*p && *p != '\n') t.push_back(Clock::time_point(Clock::duration(std::strtoll(p, &p, 10))));
  return t;
}

constexpr int kAgentsPerProcess = 1024;

int nodes(const char* self, int k) {
  raise_open_files();
  const int port = free_port(agent_ip(0));
  const auto started = Clock::now();
  const pid_t master_pid = spawn_self(self, {"master", std::to_string(port), std::to_string(k)});
  // When the master published each generation's member list: the control plane's own part of
  // the rendezvous, before every agent has read it.
  Clock::time_point published[2];
  size_t list_bytes = 0;
  std::vector<Child> groups;
  std::thread publish_watch([&] {
    store::StoreClient store(agent_ip(0), port, milliseconds(10000), common::JobToken(kToken));
    for (int g = 0; g < 2; ++g)
      while (true) {
        try {
          if (auto value = store::wait_value(store, fmt::format("bench.g{}.members", g), milliseconds(1000))) {
            published[g] = Clock::now();
            list_bytes = value->size();
            break;
          }
        } catch (const common::PeerError&) {
          std::this_thread::sleep_for(milliseconds(20));  // the master is not up yet
        }
      }
  });
  for (int first = 1; first < k; first += kAgentsPerProcess)
    groups.push_back(spawn_piped(self, {"agents", std::to_string(port), std::to_string(k), std::to_string(first),
                                        std::to_string(std::min(first + kAgentsPerProcess, k))}));
  Clock::time_point last_joined = started;
  for (auto& g : groups) last_joined = std::max(last_joined, read_times(g, "joined ").at(0));
  const double rendezvous = std::chrono::duration<double>(last_joined - started).count();
  // Steady state: every node waits in its watch; the master answers each once per heartbeat.
  std::this_thread::sleep_for(milliseconds(1000));
  store::StoreClient stats_client(agent_ip(0), port, milliseconds(10000), common::JobToken(kToken));
  const auto stats = [&] {
    return nlohmann::json::parse(stats_client.checked(boost::beast::http::verb::get, "/stats", "", "stats").body);
  };
  const auto requests_before = stats()["requests"].get<double>();
  const double cpu_before = cpu_seconds(master_pid);
  const auto window_start = Clock::now();
  // Each node's watch returns every two heartbeats, and the nodes joined at about the same time,
  // so their requests come in bursts: the window holds two of them, and at least 3 s.
  std::this_thread::sleep_for(std::max(milliseconds(3000), 4 * settings_of(1, port, k).heartbeat_interval));
  const double window = seconds_since(window_start);
  const double cpu = (cpu_seconds(master_pid) - cpu_before) / window;
  const auto steady = stats();
  const double requests = (steady["requests"].get<double>() - requests_before - 1) / window;
  const auto failed_at = Clock::now();
  for (auto& g : groups) {
    std::fputs("fail\n", g.to);
    std::fflush(g.to);
  }
  Clock::time_point last_verdict = failed_at, last_rejoin = failed_at;
  for (auto& g : groups) {
    const auto t = read_times(g, "done ");
    last_verdict = std::max(last_verdict, t.at(0));
    last_rejoin = std::max(last_rejoin, t.at(1));
  }
  publish_watch.join();
  int failed_groups = 0;
  for (auto& g : groups) {
    int status = 0;
    waitpid(g.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_groups;
  }
  int status = 0;
  waitpid(master_pid, &status, 0);
  auto since = [](Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); };
  fmt::print("{} nodes: rendezvous {:.2f} s (member list of {} KB published at {:.2f} s), master CPU {:.1f}% of a core "
             "and {:.0f} requests/s in steady state (heartbeat {:.1f} s; {} connections, {} requests parked), failure to every agent holding the verdict {:.2f} s (settle_time "
             "1.5 s included), restart generation {:.2f} s (member list published at {:.2f} s); {} agents' process(es), "
             "{} failed; master exit {}\n",
             k, rendezvous, list_bytes / 1024, since(started, published[0]), cpu * 100, requests,
             settings_of(1, port, k).heartbeat_interval.count() / 1000.0, steady["connections"].get<int>(),
             steady["parked"].get<int>(),
             since(failed_at, last_verdict), since(last_verdict, last_rejoin), since(last_verdict, published[1]),
             groups.size(), failed_groups, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return failed_groups == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int serve_store(int port) {
  store::KvStoreServer server("127.0.0.1", port, common::JobToken(kToken));
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
      store::RendezvousStore store("127.0.0.1", port, milliseconds(120000), milliseconds(10000), common::JobToken(kToken));
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
    if (mode == "agents" && argc == 6)
      return agents(std::stoi(argv[2]), std::stoi(argv[3]), std::stoi(argv[4]), std::stoi(argv[5]));
    if (mode == "store" && argc == 3) return serve_store(std::stoi(argv[2]));
  } catch (const std::exception& e) {
    fmt::print(stderr, "control_plane_bench {}: {}\n", mode, e.what());
    return 1;
  }
  fmt::print(stderr, "usage: control_plane_bench nodes K | ranks K\n");
  return 2;
}
