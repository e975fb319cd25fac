#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/error.h"
#include "launcher/plan/port_reservation.h"

using namespace paddle::launcher;

namespace {

std::string lock_dir() {
  return (std::filesystem::temp_directory_path() / ("ports-test-" + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("two reservations never share a port, even after the first releases its sockets") {
  const std::string dir = lock_dir();
  PortReservation first(dir);
  std::vector<int> a = first.take_free_ports(8);
  first.release_sockets();  // only the locks protect the ports now
  PortReservation second(dir);
  std::vector<int> b = second.take_free_ports(8);
  std::set<int> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  CHECK(all.size() == 16);
  std::filesystem::remove_all(dir);
}

TEST_CASE("released ports can be bound by the children") {
  PortReservation r(lock_dir());
  int port = r.take_free_ports(1).front();
  r.release_sockets();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  CHECK(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
  std::filesystem::remove_all(lock_dir());
}

TEST_CASE("a fixed port with a listener on it is reported, naming the flag") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  const std::string expected = "--start_port: port " + std::to_string(port) + " on 127.0.0.1 is already in use";
  CHECK_THROWS_WITH_AS(check_ports_bindable("127.0.0.1", {port}, "--start_port"), doctest::Contains(expected.c_str()),
                       paddle::common::UsageError);
  ::close(fd);
  CHECK_NOTHROW(check_ports_bindable("127.0.0.1", {port}, "--start_port"));
  CHECK_NOTHROW(check_ports_bindable("198.18.200.1", {port}, "--start_port"));  // not an address here
}

TEST_CASE("asking for more ports than the probes can find is a 'no free ports' error") {
  PortReservation r(lock_dir());
  CHECK_THROWS_WITH_AS(r.take_free_ports(100000), doctest::Contains("no free ports"), paddle::common::UsageError);
  std::filesystem::remove_all(lock_dir());
}
