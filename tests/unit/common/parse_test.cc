#include <doctest/doctest.h>

#include "common/error.h"
#include "common/parse.h"

using namespace paddle::common;

TEST_CASE("integers: whole text, in range, or an error naming the source") {
  CHECK(parse_int("42", "X") == 42);
  CHECK(parse_int("-3", "X") == -3);
  CHECK_THROWS_WITH_AS(parse_int("4x", "PADDLE_RESTART_COUNT"),
                       "PADDLE_RESTART_COUNT: '4x' is not a whole number", ConfigError);
  CHECK_THROWS_WITH_AS(parse_int("", "X"), "X: '' is not a whole number", ConfigError);
  CHECK_THROWS_WITH_AS(parse_int("9", "--n", 0, 8), "--n: 9 is outside 0..8", ConfigError);
}

TEST_CASE("numbers and ports") {
  CHECK(parse_double("2.5", "X") == 2.5);
  CHECK_THROWS_AS(parse_double("nan", "X"), ConfigError);
  CHECK_THROWS_AS(parse_double("1e", "X"), ConfigError);
  CHECK(parse_port("65535", "X") == 65535);
  CHECK_THROWS_WITH_AS(parse_port("0", "--port"), "--port: port '0' is not a number in 1..65535", ConfigError);
  CHECK_THROWS_AS(parse_port("70000", "X"), ConfigError);
}

TEST_CASE("endpoints split at the last colon") {
  CHECK(parse_endpoint("127.0.0.1:6170", "X") == Endpoint{"127.0.0.1", 6170});
  CHECK(parse_endpoint("::1:80", "X") == Endpoint{"::1", 80});
  CHECK(parse_endpoint("10.0.0.2:7", "X").to_string() == "10.0.0.2:7");
  CHECK_THROWS_WITH_AS(parse_endpoint("10.0.0.2", "PADDLE_CURRENT_ENDPOINT"),
                       "PADDLE_CURRENT_ENDPOINT: '10.0.0.2' is not an ip:port endpoint", ConfigError);
  CHECK_THROWS_AS(parse_endpoint(":80", "X"), ConfigError);
  CHECK_THROWS_AS(parse_endpoint("a:b", "X"), ConfigError);
}

TEST_CASE("lists reject empty entries") {
  CHECK(split_list("a,b,c", "X") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_list("a", "X") == std::vector<std::string>{"a"});
  CHECK_THROWS_WITH_AS(split_list("a,,b", "--ips"), "--ips: empty item in 'a,,b'", ConfigError);
}

TEST_CASE("plain names: letters, digits, '_', '-' and '.' only, never empty") {
  CHECK(is_plain_name("job-1_a.b"));
  CHECK(is_plain_name(".."));  // refused as a path component by the callers that make one
  CHECK_FALSE(is_plain_name(""));
  CHECK_FALSE(is_plain_name("a/b"));
  CHECK_FALSE(is_plain_name("a b"));
}

TEST_CASE("every error kind carries its exit status") {
  CHECK(UsageError("u").exit_code() == 2);
  CHECK(ConfigError("c").exit_code() == 2);
  CHECK(DataError("d").exit_code() == 1);
  CHECK(PeerError("p").exit_code() == 1);
  CHECK(TimeoutError("t").exit_code() == 1);
  CHECK(Error("custom", 3).exit_code() == 3);
}
