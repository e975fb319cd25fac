#include <doctest/doctest.h>

#include "common/environment.h"
#include "common/error.h"

using namespace paddle::common;
using namespace std::chrono_literals;

TEST_CASE("an environment captured from NAME=VALUE strings") {
  const char* envp[] = {"A=1", "B=", "C=x=y", "NOEQUALS", nullptr};
  Environment env = capture_environment(envp);
  CHECK(env.size() == 3);
  CHECK(get_env(env, "A") == "1");
  CHECK(get_env(env, "B") == "");  // empty counts as set
  CHECK(get_env(env, "C") == "x=y");
  CHECK_FALSE(get_env(env, "D").has_value());
}

TEST_CASE("typed reads name the variable at fault") {
  Environment env{{"N", "7"}, {"BAD", "seven"}, {"EMPTY", ""}, {"T", "1.5"}, {"NEG", "-1"}};
  CHECK(env_int(env, "N", 0) == 7);
  CHECK(env_int(env, "MISSING", 5) == 5);
  CHECK(env_int(env, "EMPTY", 5) == 5);
  CHECK_THROWS_WITH_AS(env_int(env, "BAD", 0), "BAD: 'seven' is not a whole number", ConfigError);
  CHECK(env_seconds(env, "T", 1s) == 1500ms);
  CHECK(env_seconds(env, "MISSING", 300s) == 300s);
  CHECK_THROWS_WITH_AS(env_seconds(env, "NEG", 1s), "NEG='-1' is not a positive number of seconds", ConfigError);
}
