#include <doctest/doctest.h>

#include <cmath>
#include <future>

#include "ps/client/client.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

namespace {

// Server `index` of two, holding its share of small_specs(20).
RunningServer server_of_two(int index, int workers = 2) {
  ServerOptions o;
  o.workers = workers;
  o.server_count = 2;
  o.server_index = index;
  return RunningServer(o, build_server_tables(small_specs(20), index, 2));
}

}  // namespace

TEST_CASE("client and two servers: dense blocks, sparse routing, synchronous averaging") {
  RunningServer s0 = server_of_two(0), s1 = server_of_two(1);
  std::vector<std::string> eps{s0.endpoint(), s1.endpoint()};
  PsClient a(eps, small_specs(20), quick()), b(eps, small_specs(20), quick());
  std::vector<float> init(20);
  for (int i = 0; i < 20; ++i) init[i] = static_cast<float>(i);
  a.init_dense(0, init);  // 10 values to each server
  CHECK(b.pull_dense(0) == init);
  std::string worker_b_error;
  std::thread tb([&] {
    try {
      b.push_dense(0, std::vector<float>(20, 3.0f));
      b.push_sparse(0, {1, 17}, {1, 1, 1, 2, 2, 2});
      b.barrier();
    } catch (const std::exception& e) {
      worker_b_error = e.what();
    }
  });
  a.push_dense(0, std::vector<float>(20, 1.0f));
  a.push_sparse(0, {17}, {4, 4, 4});
  a.barrier();
  tb.join();
  CHECK(worker_b_error.empty());
  auto dense = a.pull_dense(0);
  CHECK(dense[0] == doctest::Approx(0 - 0.5 * 2));  // (1 + 3) / 2 workers, lr 0.5
  auto rows = a.pull_sparse(0, {17, 1, 123});
  REQUIRE(rows.size() == 9);
  SparseTable reference(3, UpdateRule::parse("sgd", 0.5f), 42);
  reference.push({17}, {3, 3, 3});  // (2 + 4) / 2
  reference.push({1}, {0.5f, 0.5f, 0.5f});
  CHECK(rows[0] == doctest::Approx(reference.pull({17})[0]));
  CHECK(rows[3] == doctest::Approx(reference.pull({1})[0]));
  CHECK(rows[6] == doctest::Approx(reference.pull({123})[0]));  // never pushed: the seeded init
}

TEST_CASE("a client checks every call against the model's tables before it sends anything") {
  RunningServer s0 = server_of_two(0, 1), s1 = server_of_two(1, 1);
  PsClient client({s0.endpoint(), s1.endpoint()}, small_specs(20), quick());
  client.init_dense(0, std::vector<float>(20, 1.0f));
  client.add_sparse(1, {5}, {2.0f});

  CHECK_THROWS_WITH_AS(client.push_sparse(1, {5, 6, 7}, std::vector<float>(7, 1.0f)),
                       "push_sparse table 1 (wide): 7 values for 3 keys of dim 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(client.add_sparse(0, {5}, {1.0f, 1.0f}),
                       "add_sparse table 0 (embedding): 2 values for 1 keys of dim 3", std::invalid_argument);
  CHECK_THROWS_WITH_AS(client.init_dense(0, {1, 2}), "init_dense table 0 (weights): 2 values, the table has 20",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(client.push_dense(0, std::vector<float>(21)),
                       "push_dense table 0 (weights): 21 values, the table has 20", std::invalid_argument);
  CHECK_THROWS_WITH_AS(client.pull_sparse(2, {5}), "pull_sparse: no sparse table 2; the model has 2 (embedding, wide)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(client.pull_dense(1), "pull_dense: no dense table 1; the model has 1 (weights)",
                       std::invalid_argument);
  std::vector<float> short_buffer(19);
  CHECK_THROWS_WITH_AS(client.pull_dense_into(0, short_buffer),
                       "pull_dense table 0 (weights): 19 values, the table has 20", std::invalid_argument);

  // The refused calls changed nothing, and the connections still answer in step.
  SparseTable wide(1, UpdateRule::parse("sgd", 0.5f), 7);
  wide.add({5}, {2.0f});
  CHECK(client.pull_dense(0) == std::vector<float>(20, 1.0f));
  std::vector<float> kept(20, -1.0f);
  client.pull_dense_into(0, kept);  // both servers' blocks, into the caller's buffer
  CHECK(kept == std::vector<float>(20, 1.0f));
  CHECK(client.pull_sparse(1, {5, 6}) == std::vector<float>{wide.pull({5})[0], wide.pull({6})[0]});
}

TEST_CASE("servers refuse a client whose tables are not theirs") {
  RunningServer s0 = server_of_two(0, 1), s1 = server_of_two(1, 1);
  PsClient other_model({s0.endpoint(), s1.endpoint()}, small_specs(30), quick());
  // 15 values to servers holding blocks of 10.
  CHECK_THROWS_WITH_AS(other_model.init_dense(0, std::vector<float>(30)), doctest::Contains("refused the request"),
                       PsError);
  CHECK_THROWS_WITH_AS(other_model.pull_dense(0), doctest::Contains("(another model?)"), PsError);
}

TEST_CASE("servers finish when every worker stops") {
  ServerOptions o;
  o.workers = 2;
  auto server = std::make_unique<ParameterServer>(o, small_tables());
  std::promise<void> returned;
  std::future<void> finished = returned.get_future();
  std::thread t([&] {
    server->run();
    returned.set_value();
  });
  const std::string ep = "127.0.0.1:" + std::to_string(server->port());
  PsClient a({ep}, small_specs(), quick()), b({ep}, small_specs(), quick());
  a.stop_worker();
  CHECK(finished.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);  // one of two: serving
  b.stop_worker();
  const bool on_its_own = finished.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!on_its_own) server->stop();
  t.join();
  CHECK(on_its_own);  // run() returned once both workers stopped, without stop()
}

TEST_CASE("a client names a server that is not up, after its timeout") {
  ClientOptions o = quick();
  o.connect_timeout = std::chrono::milliseconds(300);
  CHECK_THROWS_WITH_AS(PsClient({"127.0.0.1:1"}, small_specs(), o), doctest::Contains("127.0.0.1:1 not reachable"),
                       paddle::common::TimeoutError);
}

TEST_CASE("a client gives up on a peer that accepts and never greets, after the request timeout") {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);  // the kernel accepts; nobody ever writes
  socklen_t length = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  ClientOptions o = quick();
  o.request_timeout = std::chrono::seconds(1);
  const std::string endpoint = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const std::string expected = "parameter server " + endpoint + ": no greeting (none within 1 s";
  CHECK_THROWS_WITH_AS(PsClient({endpoint}, small_specs(), o), doctest::Contains(expected.c_str()),
                       paddle::common::PeerError);
  ::close(listener);
}

TEST_CASE("a request a server holds longer than the request timeout fails naming the server") {
  ServerOptions so;
  so.workers = 2;  // the barrier waits for a second worker that never comes
  RunningServer s(so, build_server_tables(small_specs(4), 0, 1));
  ClientOptions o = quick();
  o.request_timeout = std::chrono::seconds(1);
  PsClient lone({s.endpoint()}, small_specs(4), o);
  const std::string expected = "parameter server " + s.endpoint() + " did not answer within 1 s";
  CHECK_THROWS_WITH_AS(lone.barrier(), doctest::Contains(expected.c_str()), paddle::common::Error);
}

TEST_CASE("a server with the job's token serves only workers that prove it") {
  ServerOptions o;
  o.workers = 1;
  o.token = paddle::common::JobToken("the job's secret");
  RunningServer s(o, build_server_tables(small_specs(4), 0, 1));
  ClientOptions member = quick();
  member.token = o.token;
  PsClient a({s.endpoint()}, small_specs(4), member);
  a.init_dense(0, {1, 2, 3, 4});
  CHECK(a.pull_dense(0) == std::vector<float>{1, 2, 3, 4});

  CHECK_THROWS_WITH_AS(PsClient({s.endpoint()}, small_specs(4), quick()),
                       doctest::Contains("refused this worker: it has no job token"), paddle::common::PeerError);
  ClientOptions impostor = quick();
  impostor.token = paddle::common::JobToken("a guess");
  CHECK_THROWS_WITH_AS(PsClient({s.endpoint()}, small_specs(4), impostor),
                       doctest::Contains("its job token is not the job's"), paddle::common::PeerError);
  CHECK(a.pull_dense(0) == std::vector<float>{1, 2, 3, 4});  // the refused never reached the tables
}

TEST_CASE("pipelined calls: big dense pulls and sparse batches in many requests give what one request would") {
  constexpr size_t kDense = (1 << 18) * 2 + 12345;  // several PULL_DENSE_RANGE requests per server
  auto server = [&](int index) {
    ServerOptions o;
    o.workers = 1;
    o.sync = false;
    o.server_count = 2;
    o.server_index = index;
    return RunningServer(o, build_server_tables(small_specs(kDense), index, 2));
  };
  RunningServer s0 = server(0), s1 = server(1);
  PsClient client({s0.endpoint(), s1.endpoint()}, small_specs(kDense), quick());
  std::vector<float> init(kDense);
  for (size_t i = 0; i < kDense; ++i) init[i] = static_cast<float>(i % 1000) * 0.5f;
  client.init_dense(0, init);
  CHECK(client.pull_dense(0) == init);

  std::vector<uint64_t> keys;  // several requests of 16384 keys per server, a key twice
  for (uint64_t k = 0; k < 50000; ++k) keys.push_back(k * 7 % 40000);
  std::vector<float> grads(keys.size() * 3);
  for (size_t i = 0; i < grads.size(); ++i) grads[i] = static_cast<float>(i % 7) * 0.1f;
  client.push_sparse(0, keys, grads);
  SparseTable reference(3, UpdateRule::parse("sgd", 0.5f), 42);
  reference.push(keys, grads);
  CHECK(client.pull_sparse(0, keys) == reference.pull(keys));
  client.stop_worker();
}
