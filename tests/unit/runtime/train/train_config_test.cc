#include <doctest/doctest.h>

#include "runtime/train/train_config.h"

using namespace paddle::runtime;

TEST_CASE("config overrides reach nested keys and reject unknown ones") {
  auto c = load_train_config("", {"optimizer.lr=0.5", "epochs=3", "model=fit_a_line", "cnn.channels=[4,8]"});
  CHECK(c["optimizer"]["lr"] == 0.5);
  CHECK(c["epochs"] == 3);
  CHECK(c["model"] == "fit_a_line");
  CHECK(c["cnn"]["channels"][1] == 8);
  CHECK_THROWS_WITH_AS(load_train_config("", {"optimizer.rate=1"}), doctest::Contains("optimizer.rate: unknown key"),
                       paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("", {"epochs=many"}), doctest::Contains("'many' is not a number"), paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(load_train_config("/nonexistent.json", {}), doctest::Contains("cannot open"), paddle::common::ConfigError);
}
