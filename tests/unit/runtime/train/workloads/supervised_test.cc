#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "common/error.h"
#include "runtime/models/recommender.h"
#include "runtime/train/workloads/layer_ps_workload.h"
#include "runtime/train/workloads/supervised.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

namespace {

// The facts load_supervised_data learns from config's data set.
DataFacts loaded_facts(TrainConfig config) {
  DataFacts facts;
  load_supervised_data(config, facts, {});
  return facts;
}

bool same(const DataFacts& a, const DataFacts& b) {
  const bool vocabulary = a.movielens.has_value() == b.movielens.has_value() &&
                          (!a.movielens || (a.movielens->users == b.movielens->users &&
                                            a.movielens->movies == b.movielens->movies &&
                                            a.movielens->words == b.movielens->words &&
                                            a.movielens->genre_slots == b.movielens->genre_slots &&
                                            a.movielens->title_slots == b.movielens->title_slots &&
                                            a.movielens->occupations == b.movielens->occupations));
  return a.sample_shape == b.sample_shape && a.classes == b.classes && vocabulary;
}

}  // namespace

TEST_CASE("a data set's facts without its samples are those its loading learns") {
  const std::string shared = PADDLE_SHARED_DATA;
  TrainConfig config;
  config.data.kind = DatasetKind::kUciHousing;
  config.data.dir = shared + "/uci_housing";
  CHECK(supervised_data_facts(config, {}).sample_shape == std::vector<int64_t>{13});
  CHECK(same(supervised_data_facts(config, {}), loaded_facts(config)));

  config.data.kind = DatasetKind::kMovieLens;
  config.data.dir = shared + "/ml-100k";
  CHECK(same(supervised_data_facts(config, {}), loaded_facts(config)));
  config.data.dir = shared + "/ml-1m";
  if (fs::exists(config.data.dir + "/ratings.dat")) CHECK(same(supervised_data_facts(config, {}), loaded_facts(config)));

  config.data.kind = DatasetKind::kFashionMnist;
  config.data.dir = TrainConfig{}.data.dir;  // Debian's package, which scripts/setup.sh installs
  REQUIRE_MESSAGE(fs::exists(config.data.dir + "/train-images-idx3-ubyte.gz"), "no Fashion-MNIST in " << config.data.dir);
  CHECK(same(supervised_data_facts(config, {}), loaded_facts(config)));
  config.data.image_shape = {1, 14, 14};
  CHECK(supervised_data_facts(config, {}).sample_shape == std::vector<int64_t>{1, 14, 14});
  CHECK(same(supervised_data_facts(config, {}), loaded_facts(config)));

  config.data.kind = DatasetKind::kUciHousing;
  config.data.dir = shared + "/uci_housing";
  CHECK_THROWS_WITH_AS(supervised_data_facts(config, {}), "image_shape: the data set has no images",
                       paddle::common::ConfigError);
  config.data.image_shape.clear();
  config.data.kind = DatasetKind::kCriteo;
  CHECK_THROWS_WITH_AS(supervised_data_facts(config, {}), doctest::Contains("is click data for model wide_deep"),
                       paddle::common::ConfigError);
}

TEST_CASE("a parameter server is told a layer model's tables without its ratings or a model") {
  // MovieLens with its users and movies but ratings that do not parse: the servers never read them.
  const fs::path dir = fs::temp_directory_path() / ("supervised_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"u.user", "u.item", "u.occupation"}) fs::copy_file(std::string(PADDLE_SHARED_DATA) + "/ml-100k/" + name, dir / name, fs::copy_options::overwrite_existing);
  std::ofstream(dir / "u.data") << "not a rating\n";
  TrainConfig config;
  config.model.kind = ModelKind::kRecommender;
  config.data.kind = DatasetKind::kMovieLens;
  config.data.dir = dir.string();
  const paddle::ps::TableSpecs tables = LayerPsWorkload::tables_for(config, supervised_data_facts(config, {}));
  CHECK(tables.sparse.size() == 7);
  CHECK(tables.dense.at(0).size == Recommender::table_shapes(config.model.recommender).dense);
  CHECK(tables.update_rule == config.ps.server_optimizer);
  CHECK_THROWS_AS(loaded_facts(config), paddle::common::DataError);  // a worker reads them, and fails
  fs::remove_all(dir);
}
