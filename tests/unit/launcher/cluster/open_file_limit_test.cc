#include <doctest/doctest.h>

#include <fstream>

#include "launcher/cluster/open_file_limit.h"

using namespace paddle::launcher;

TEST_CASE("the master says when the kernel's listen queue is shorter than the nodes that connect at once") {
  int somaxconn = 0;
  if (!(std::ifstream("/proc/sys/net/core/somaxconn") >> somaxconn)) return;  // no /proc to compare against
  CHECK(listen_queue_warning(1) == std::nullopt);
  const auto warning = listen_queue_warning(somaxconn + 1);
  REQUIRE(warning);
  CHECK(warning->starts_with("--nnodes=" + std::to_string(somaxconn + 1) + ": "));
  CHECK(warning->find("net.core.somaxconn = " + std::to_string(somaxconn)) != std::string::npos);
  CHECK(warning->find("sysctl -w") != std::string::npos);
  CHECK(warning->find('\n') == std::string::npos);
}
