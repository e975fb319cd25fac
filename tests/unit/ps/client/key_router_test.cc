#include <doctest/doctest.h>

#include "ps/client/key_router.h"
#include "ps/wire/sharding.h"

using namespace paddle::ps;

TEST_CASE("key router: shares by server in batch order, rows gathered and scattered back") {
  const std::vector<uint64_t> keys{0, 16, 1, 17, 33, 2};  // 2 servers: 0,1,33,2 on server 0; 16,17 on 1
  std::vector<float> rows;
  for (size_t i = 0; i < keys.size(); ++i) rows.insert(rows.end(), {float(i), float(i) + 0.5f});
  KeyRouter router;
  router.route(keys, 2);
  CHECK_FALSE(router.in_order());
  CHECK(std::vector<uint64_t>(router.keys(0).begin(), router.keys(0).end()) == std::vector<uint64_t>{0, 1, 33, 2});
  CHECK(std::vector<uint64_t>(router.keys(1).begin(), router.keys(1).end()) == std::vector<uint64_t>{16, 17});
  for (size_t s = 0; s < 2; ++s)
    for (uint64_t k : router.keys(s)) CHECK(server_of_key(k, 2) == s);
  router.gather(rows, 2);
  CHECK(std::vector<float>(router.rows(1).begin(), router.rows(1).end()) == std::vector<float>{1, 1.5f, 3, 3.5f});
  std::vector<float> back(rows.size(), -1);
  for (size_t s = 0; s < 2; ++s) router.scatter(s, router.rows(s).data(), back.data(), 2);
  CHECK(back == rows);
}

TEST_CASE("key router: one server, or every key on one, is the batch itself, uncopied") {
  const std::vector<uint64_t> keys{16, 17, 48};
  const std::vector<float> rows{1, 2, 3};
  KeyRouter router;
  router.route(keys, 2);
  CHECK(router.in_order());
  CHECK(router.count(0) == 0);
  CHECK(router.keys(1).data() == keys.data());
  router.gather(rows, 1);
  CHECK(router.rows(1).data() == rows.data());
  router.route(keys, 1);
  CHECK(router.keys(0).size() == 3);
  router.route({}, 3);
  CHECK(router.in_order());
}
