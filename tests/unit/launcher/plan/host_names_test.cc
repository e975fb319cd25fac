#include "launcher/plan/host_names.h"

#include <doctest/doctest.h>

#include <map>

#include "common/error.h"
#include "launcher/plan/launch_options.h"
#include "tests/unit/launcher/test_support.h"

namespace paddle::launcher {
namespace {

using namespace std::chrono_literals;
using testing::parse;

// A resolver over a fixed table; a name listed with `after` answers only from that lookup on,
// as a pod's service record appears once the pod is ready.
struct FakeDns {
  std::map<std::string, std::string> names;
  std::map<std::string, int> after;
  std::map<std::string, int> asked;
  std::vector<std::string> said;

  HostNameResolver resolver(std::chrono::milliseconds patience = 2000ms) {
    HostNameResolver::Settings s;
    s.lookup = [this](const std::string& name) -> std::optional<std::string> {
      const int n = ++asked[name];
      if (!names.contains(name) || n <= after[name]) return std::nullopt;
      return names[name];
    };
    s.patience = patience;
    s.poll = 1ms;
    s.say = [this](const std::string& line) { said.push_back(line); };
    return HostNameResolver(std::move(s));
  }
};

TEST_CASE("every address of the options and the environment may be a host name") {
  FakeDns dns;
  dns.names = {{"node-a", "10.0.0.1"}, {"node-b", "10.0.0.2"}, {"pj-worker-0", "10.0.0.9"}, {"me", "10.0.0.2"}};
  auto resolver = dns.resolver();
  LaunchOptions o = parse({"--ips=node-a, node-b", "--host=me", "--servers=node-a:6170,10.0.0.3:6170",
                           "--workers=node-b,node-a:6200", "--heter_workers=node-a:7000;node-b:7001", "t"});
  EnvMap env = {{"PADDLE_MASTER", "pj-worker-0:36543"}, {"POD_IP", "me"}};
  resolve_host_names(o, env, resolver);
  CHECK(o.ips == "10.0.0.1,10.0.0.2");
  CHECK(*o.host == "10.0.0.2");
  CHECK(*o.servers == "10.0.0.1:6170,10.0.0.3:6170");
  CHECK(*o.workers == "10.0.0.2,10.0.0.1:6200");
  CHECK(*o.heter_workers == "10.0.0.1:7000;10.0.0.2:7001");
  CHECK(env["PADDLE_MASTER"] == "10.0.0.9:36543");
  CHECK(env["POD_IP"] == "me");  // --host was given: POD_IP is not read
  CHECK(resolver.resolved() == std::vector<std::string>{"node-a=10.0.0.1", "node-b=10.0.0.2", "me=10.0.0.2",
                                                         "pj-worker-0=10.0.0.9"});
  CHECK(dns.said.empty());
}

TEST_CASE("--master wins over PADDLE_MASTER, which is then left alone; etcd masters are the etcd client's") {
  FakeDns dns;
  dns.names = {{"m", "10.0.0.5"}};
  auto resolver = dns.resolver();
  LaunchOptions o = parse({"--master=m:9000", "t"});
  EnvMap env = {{"PADDLE_MASTER", "unknown-name:1"}};
  resolve_host_names(o, env, resolver);
  CHECK(*o.master == "10.0.0.5:9000");
  CHECK(env["PADDLE_MASTER"] == "unknown-name:1");
  LaunchOptions e = parse({"--master=etcd://etcd-0:2379", "t"});
  resolve_host_names(e, env, resolver);
  CHECK(*e.master == "etcd://etcd-0:2379");
}

TEST_CASE("a name that resolves late is waited for, saying once which name") {
  FakeDns dns;
  dns.names = {{"pj-worker-0", "10.0.0.9"}};
  dns.after = {{"pj-worker-0", 5}};
  auto resolver = dns.resolver();
  CHECK(resolver.endpoint("pj-worker-0:36543", "PADDLE_MASTER") == "10.0.0.9:36543");
  CHECK(dns.asked["pj-worker-0"] == 6);
  REQUIRE(dns.said.size() == 1);
  CHECK(dns.said[0].find("waiting for the host name 'pj-worker-0' (PADDLE_MASTER) to resolve") != std::string::npos);
}

TEST_CASE("a name still unknown at the deadline is an error naming it and its flag; a bad spelling is refused at once") {
  FakeDns dns;
  auto resolver = dns.resolver(30ms);
  CHECK_THROWS_WITH_AS(resolver.list("10.0.0.1,ghost", "--ips"),
                       doctest::Contains("--ips: the host name 'ghost' does not resolve to an IPv4 address"),
                       common::UsageError);
  FakeDns none;
  auto quick = none.resolver(60000ms);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(quick.address("10.0.0.300", "--host"),
                       doctest::Contains("--host: '10.0.0.300' is not an IPv4 address or a host name"), common::UsageError);
  CHECK_THROWS_WITH_AS(quick.endpoint("bad/name:80", "--master"),
                       doctest::Contains("--master: 'bad/name' is not an IPv4 address or a host name"), common::UsageError);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK(none.asked.empty());
}

TEST_CASE("a stop requested while a name is waited for ends the wait through the caller's hook") {
  std::stop_source stop;
  HostNameResolver::Settings s;
  s.lookup = [&](const std::string&) -> std::optional<std::string> {
    stop.request_stop();
    return std::nullopt;
  };
  s.poll = 10000ms;
  s.stop = stop.get_token();
  s.say = [](const std::string&) {};
  s.stopped = [](const std::string& waiting_for) { throw common::ConfigError("caller's: " + waiting_for); };
  HostNameResolver resolver(std::move(s));
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(resolver.address("late", "--ips"),
                       doctest::Contains("caller's: waiting for the host name 'late' (--ips) to resolve"),
                       common::ConfigError);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("the system resolver gives an address back as it is, and nothing for a name that cannot exist") {
  // A machine's /etc/hosts is its own (a minimal root may have none): no name of it is assumed here.
  CHECK(system_lookup("127.0.0.1") == "127.0.0.1");
  CHECK_FALSE(system_lookup("no-such-host.invalid"));
  CHECK(resolve_ipv4("10.1.2.3") == "10.1.2.3");
  CHECK_FALSE(resolve_ipv4("no-such-host.invalid"));
}

}  // namespace
}  // namespace paddle::launcher
