#include <doctest/doctest.h>

#include <cmath>

#include "ps/client.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;
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
