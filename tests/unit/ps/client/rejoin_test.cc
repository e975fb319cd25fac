// A worker restarted in place (paddle-launch --ps_worker_restarts) against servers that kept
// their tables: REJOIN, the barrier's numbering and order, and STOP_WORKER counted once per worker.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <fmt/format.h>

#include <future>
#include <thread>

#include "ps/client/client.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

namespace {

ClientOptions worker(uint32_t index) {
  ClientOptions o = quick();
  o.worker_index = index;
  return o;
}

ServerOptions sync_server(int workers, int index = 0, int count = 1) {
  ServerOptions o;
  o.sync = true;
  o.workers = workers;
  o.server_index = index;
  o.server_count = count;
  return o;
}

// Steps `a` and `b` through one synchronous step with the given dense gradients.
void step_together(PsClient& a, PsClient& b, float grad_a, float grad_b) {
  auto other = std::async(std::launch::async, [&] {
    b.push_dense(0, std::vector<float>(10, grad_b));
    b.barrier();
  });
  a.push_dense(0, std::vector<float>(10, grad_a));
  a.barrier();
  other.get();
}

}  // namespace

TEST_CASE("the barrier numbers itself, and a worker's pushes count only once its barrier is complete") {
  RunningServer s(sync_server(2));
  PsClient a({s.endpoint()}, small_specs(), worker(0)), b({s.endpoint()}, small_specs(), worker(1));
  a.init_dense(0, std::vector<float>(10, 0.0f));
  step_together(a, b, 1.0f, 3.0f);
  CHECK(a.barriers_completed() == 1);
  CHECK(b.barriers_completed() == 1);
  CHECK(a.pull_dense(0)[0] == doctest::Approx(-1.0f));  // -(1 + 3) / 2 * 0.5

  // Worker 1 pushes and dies before its barrier: a connection's held pushes go with it.
  {
    PsClient dying({s.endpoint()}, small_specs(), worker(1));
    dying.push_dense(0, std::vector<float>(10, 100.0f));
  }
  PsClient restarted({s.endpoint()}, small_specs(), worker(1));
  restarted.rejoin();
  CHECK(restarted.barriers_completed() == 1);
  step_together(a, restarted, 1.0f, 3.0f);
  CHECK(a.pull_dense(0)[0] == doctest::Approx(-2.0f));  // the 100s never counted
  CHECK(restarted.barriers_completed() == 2);
}

namespace {

// A worker's dead self, as raw connections: it pushed 100s to the dense table and sent BARRIER
// (with its index) to the servers of `reached`, then died there, its connections left open.
std::vector<int> died_at_barrier(const std::vector<RunningServer*>& reached, uint32_t index, size_t block) {
  std::vector<int> fds;
  for (RunningServer* s : reached) {
    const int fd = raw_connect(s->server->port());
    const std::vector<float> hundreds(block, 100.0f);
    Writer push;
    push.u32(0).f32s(hundreds.data(), hundreds.size());
    REQUIRE(round_trip(fd, frame(static_cast<uint16_t>(Command::kPushDense), push.bytes())));
    Writer body;
    body.u32(index);
    const auto barrier = frame(static_cast<uint16_t>(Command::kBarrier), body.bytes());
    REQUIRE(::send(fd, barrier.data(), barrier.size(), 0) == static_cast<ssize_t>(barrier.size()));
    fds.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // it waits there
  return fds;
}

}  // namespace

TEST_CASE("a dead worker's barrier that reached every server counts: the restarted one waits for it, then goes on") {
  RunningServer s(sync_server(2));
  PsClient a({s.endpoint()}, small_specs(), worker(0));
  a.init_dense(0, std::vector<float>(10, 0.0f));
  const std::vector<int> dead = died_at_barrier({&s}, 1, 10);
  PsClient restarted({s.endpoint()}, small_specs(), worker(1));
  auto rejoined = std::async(std::launch::async, [&] { restarted.rejoin(); });
  CHECK(rejoined.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);  // barrier 1 is not complete
  a.push_dense(0, std::vector<float>(10, 2.0f));
  a.barrier();
  rejoined.get();
  CHECK(restarted.barriers_completed() == 1);
  CHECK(a.pull_dense(0)[0] == doctest::Approx(-25.5f));  // -(2 + 100) / 2 x 0.5: its step counted once
  step_together(a, restarted, 1.0f, 3.0f);
  CHECK(a.pull_dense(0)[0] == doctest::Approx(-26.5f));
  for (int fd : dead) ::close(fd);
}

TEST_CASE("a dead worker's barrier that reached some servers only is dropped everywhere, its pushes with it") {
  RunningServer s0(sync_server(2, 0, 2)), s1(sync_server(2, 1, 2));
  const std::vector<std::string> eps{s0.endpoint(), s1.endpoint()};
  PsClient a(eps, small_specs(20), worker(0));
  a.init_dense(0, std::vector<float>(20, 0.0f));
  const std::vector<int> dead = died_at_barrier({&s0}, 1, 10);  // server 0 only
  PsClient restarted(eps, small_specs(20), worker(1));
  restarted.rejoin();
  CHECK(restarted.barriers_completed() == 0);
  char byte = 0;
  CHECK(::recv(dead[0], &byte, 1, 0) <= 0);  // its connection was closed, unanswered
  auto other = std::async(std::launch::async, [&] {
    restarted.push_dense(0, std::vector<float>(20, 3.0f));
    restarted.barrier();
  });
  a.push_dense(0, std::vector<float>(20, 1.0f));
  a.barrier();
  other.get();
  const std::vector<float> dense = a.pull_dense(0);
  CHECK(dense[0] == doctest::Approx(-1.0f));   // server 0's block: the 100s never counted
  CHECK(dense[19] == doctest::Approx(-1.0f));  // server 1's
  for (int fd : dead) ::close(fd);
}

TEST_CASE("held pushes are summed in the order of the workers' indexes, whoever reaches the barrier first") {
  // A float sum that depends on its order: (1e8 + 1) - 1e8 is 0, (1e8 - 1e8) + 1 is 1.
  const auto run = [](std::vector<int> arrivals) {
    RunningServer s(sync_server(3));
    PsClient w0({s.endpoint()}, small_specs(), worker(0)), w1({s.endpoint()}, small_specs(), worker(1)),
        w2({s.endpoint()}, small_specs(), worker(2));
    w0.init_dense(0, std::vector<float>(10, 0.0f));
    const std::pair<PsClient*, float> workers[] = {{&w0, 1e8f}, {&w1, 1.0f}, {&w2, -1e8f}};
    std::vector<std::future<void>> waiting;
    for (int w : arrivals) {
      auto [client, grad] = workers[w];
      client->push_dense(0, std::vector<float>(10, grad));
      waiting.push_back(std::async(std::launch::async, [client] { client->barrier(); }));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // arrivals in this order
    }
    for (auto& w : waiting) w.get();
    return w0.pull_dense(0)[0];
  };
  CHECK(run({0, 1, 2}) == 0.0f);  // (1e8 + 1 - 1e8) / 3: the order of the indexes
  CHECK(run({0, 2, 1}) == 0.0f);  // in the order of arrival it would be 1 / 3 x 0.5
  CHECK(run({2, 1, 0}) == 0.0f);
}

TEST_CASE("servers that disagree on the barriers completed refuse the rejoin, naming both") {
  RunningServer s0(sync_server(1, 0, 2)), s1(sync_server(2, 1, 2));
  const std::vector<std::string> eps{s0.endpoint(), s1.endpoint()};
  // Server 0 counts one worker, so one barrier there completes alone; server 1 waits for two.
  const int fd = raw_connect(s0.server->port());
  Writer index;
  index.u32(0);
  REQUIRE(round_trip(fd, frame(static_cast<uint16_t>(Command::kBarrier), index.bytes())));
  ::close(fd);
  PsClient restarted(eps, small_specs(20), worker(0));
  const std::string expected =
      fmt::format("REJOIN: parameter server {} has completed 1 barrier(s) but {} has completed 0", eps[0], eps[1]);
  CHECK_THROWS_WITH_AS(restarted.rejoin(), doctest::Contains(expected.c_str()), PsError);
}

TEST_CASE("a worker's STOP_WORKER counts once, however often it comes") {
  ServerOptions o;
  o.workers = 2;
  auto server = std::make_unique<ParameterServer>(o, small_tables());
  std::thread t([&] { server->run(); });
  const std::string ep = "127.0.0.1:" + std::to_string(server->port());
  {
    PsClient first({ep}, small_specs(), worker(1));
    first.stop_worker();
  }
  PsClient again({ep}, small_specs(), worker(1));
  again.stop_worker();  // worker 1 restarted after it had told this server: still one worker
  PsClient other({ep}, small_specs(), worker(0));
  CHECK(other.pull_dense(0).size() == 10);  // still serving
  other.stop_worker();
  t.join();  // run() returned once both workers had stopped
}
