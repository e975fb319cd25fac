#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ps/client/client.h"
#include "ps/local_parameter_store.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;

namespace {

// A dense table of 6 and a CTR table of dim 3 whose rules are SGD at rate 1.
TableSpecs ctr_specs() {
  TableSpecs specs;
  specs.dense.push_back({"deep", 6});
  SparseTableSpec ctr{.name = "embedding", .dim = 3, .seed = 9};
  ctr.accessor = SparseTableSpec::Accessor::kCtr;
  ctr.ctr.embed_rule = SparseRuleSpec::parse("sgd");
  ctr.ctr.embed_rule.learning_rate = 1.0f;
  ctr.ctr.embedx_rule = ctr.ctr.embed_rule;
  specs.sparse.push_back(ctr);
  return specs;
}

std::string read_log(std::FILE* log) {
  std::fflush(log);
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text.push_back(static_cast<char>(c));
  return text;
}

}  // namespace

TEST_CASE("server control over the wire: keys above 2^32, CTR pushes, shrink, memory and save modes as one process") {
  std::FILE* log = std::tmpfile();
  REQUIRE(log != nullptr);
  std::vector<std::unique_ptr<RunningServer>> servers;
  std::vector<std::string> endpoints;
  for (int index = 0; index < 2; ++index) {
    ServerOptions o;
    o.server_count = 2;
    o.server_index = index;
    o.log = log;
    servers.push_back(std::make_unique<RunningServer>(o, build_server_tables(ctr_specs(), index, 2)));
    endpoints.push_back(servers.back()->endpoint());
  }
  PsClient client(endpoints, ctr_specs(), quick());
  LocalParameterStore local(ctr_specs());

  const std::vector<uint64_t> keys{0xFFFFFFFF00000001ULL, ~0ULL - 5, 1ULL << 40, 3, (1ULL << 32) + 17};
  std::vector<float> pushed;
  for (size_t i = 0; i < keys.size(); ++i)
    for (float v : {i == 0 ? 20.0f : 1.0f, 0.0f, 0.5f, 1.0f, static_cast<float>(i)}) pushed.push_back(v);
  for (ParameterStore* store : {static_cast<ParameterStore*>(&client), static_cast<ParameterStore*>(&local)}) {
    store->push_sparse(0, keys, pushed);
    CHECK_THROWS_WITH_AS(store->push_sparse(0, keys, std::vector<float>(keys.size() * 3)),
                         doctest::Contains("a CTR table takes 5 per key (show, click, then the gradients)"),
                         std::invalid_argument);
  }
  client.barrier();
  local.barrier();
  const std::vector<float> pulled = client.pull_sparse(0, keys);
  CHECK(pulled == local.pull_sparse(0, keys));
  CHECK(pulled[0] == doctest::Approx(local.pull_sparse(0, {5})[0] - 0.5f).epsilon(0.01));  // pushed, moved

  std::vector<ServerMemory> memory = client.memory();
  REQUIRE(memory.size() == 2);
  CHECK(memory[1].server == 1);
  REQUIRE(memory[0].tables.size() == 2);
  CHECK(memory[0].tables[0].table == "deep");
  CHECK(memory[0].tables[0].rows == 3);  // this server's block of the dense table
  CHECK(memory[0].tables[1].table == "embedding");
  CHECK(memory[0].tables[1].rows + memory[1].tables[1].rows == keys.size());
  CHECK(memory[0].tables[1].value_bytes > 0);
  CHECK(local.memory()[0].tables[1].rows == keys.size());

  const auto dir = scratch_dir("ps-control-base");
  client.save(dir.string(), SaveMode::kBase);  // only the key shown 20 times scores 1.5 or more
  uint64_t saved = 0;
  for (int index = 0; index < 2; ++index) {
    std::ifstream manifest(dir / ("ps-server-" + std::to_string(index) + ".json"));
    const auto json = nlohmann::json::parse(manifest);
    CHECK(json["mode"] == "base");
    saved += json["sparse"][0]["rows"].get<uint64_t>();
  }
  CHECK(saved == 1);

  std::vector<ShrinkReport> shrunk = client.shrink();  // every row but the first scores under 0.8
  REQUIRE(shrunk.size() == 2);
  uint64_t before = 0, after = 0;
  for (const ShrinkReport& r : shrunk) {
    REQUIRE(r.tables.size() == 1);
    CHECK(r.tables[0].table == "embedding");
    before += r.tables[0].rows_before;
    after += r.tables[0].rows_after;
  }
  CHECK(before == keys.size());
  CHECK(after == 1);
  const std::vector<ShrinkReport> local_shrunk = local.shrink();
  CHECK(local_shrunk[0].tables[0].rows_after == 1);
  CHECK(client.pull_sparse(0, keys) == local.pull_sparse(0, keys));

  client.load(dir.string());
  CHECK(client.pull_sparse(0, keys) == local.pull_sparse(0, keys));
  servers.clear();
  const std::string text = read_log(log);
  CHECK(text.find("server 0 shrink table embedding: rows ") != std::string::npos);
  CHECK(text.find("server 1 saved its tables (base) to ") != std::string::npos);
  CHECK(text.find("server 0 memory: deep rows 3") != std::string::npos);
  std::fclose(log);
}
