#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "launcher/plan/address.h"
#include "launcher/plan/gpu_devices.h"

using namespace paddle::launcher;

TEST_CASE("IP lists keep their order and reject bad or repeated addresses") {
  CHECK(parse_ip_list("10.0.0.2, 10.0.0.1", "--ips") == std::vector<std::string>{"10.0.0.2", "10.0.0.1"});
  CHECK_THROWS_WITH_AS(parse_ip_list("10.0.0.1,10.0.0.256", "--ips"), doctest::Contains("--ips: '10.0.0.256'"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_ip_list("10.0.0.1,10.0.0.1", "--ips"), doctest::Contains("listed twice"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_ip_list("10.0.0.1,,10.0.0.2", "--ips"), doctest::Contains("empty item"), paddle::common::UsageError);
  CHECK_THROWS_AS(parse_ip_list("localhost", "--ips"), paddle::common::UsageError);
}

TEST_CASE("endpoint lists") {
  auto eps = parse_endpoint_list("127.0.0.1:6170,127.0.0.2:6171", "--servers", true);
  REQUIRE(eps.size() == 2);
  CHECK(eps[1].ip == "127.0.0.2");
  CHECK(*eps[1].port == 6171);
  CHECK(eps[0].str() == "127.0.0.1:6170");
  auto workers = parse_endpoint_list("127.0.0.1,127.0.0.2:7000", "--workers", false);
  CHECK_FALSE(workers[0].port);
  CHECK_THROWS_WITH_AS(parse_endpoint_list("127.0.0.1", "--servers", true), doctest::Contains("has no port"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_endpoint_list("127.0.0.1:70000", "--servers", true), doctest::Contains("1..65535"),
                       paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_endpoint_list("127.0.0.1:1,127.0.0.1:1", "--servers", true),
                       doctest::Contains("listed twice"), paddle::common::UsageError);
  CHECK_THROWS_AS(parse_endpoint_list("host:1", "--servers", true), paddle::common::UsageError);
}

TEST_CASE("this machine has a loopback address") {
  auto addrs = local_ipv4_addresses();
  CHECK(std::find(addrs.begin(), addrs.end(), "127.0.0.1") != addrs.end());
}

TEST_CASE("--gpus ids are validated and made relative to CUDA_VISIBLE_DEVICES") {
  CHECK(parse_gpu_selection("0,1,3", std::nullopt).ids == std::vector<int>{0, 1, 3});
  CHECK(parse_gpu_selection("0,1,3", std::nullopt).note.empty());
  GpuSelection relative = parse_gpu_selection("6,4", std::string("4,5,6,7"));
  CHECK(relative.ids == std::vector<int>{2, 0});
  CHECK(relative.note.find("relative") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_gpu_selection("0,x", std::nullopt), doctest::Contains("--gpus: 'x'"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_gpu_selection("-1", std::nullopt), doctest::Contains("--gpus"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_gpu_selection("1,1", std::nullopt), doctest::Contains("listed twice"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(parse_gpu_selection("2", std::string("4,5")), doctest::Contains("CUDA_VISIBLE_DEVICES"),
                       paddle::common::UsageError);
}

TEST_CASE("visible GPUs: none without an NVIDIA driver" *
          doctest::skip(std::filesystem::exists("/proc/driver/nvidia/gpus"))) {
  CHECK(visible_gpu_count({{"CUDA_VISIBLE_DEVICES", "0,1"}}) == 0);
}
