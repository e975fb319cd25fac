#include <doctest/doctest.h>

#include <zlib.h>

#include <thread>

#include "common/base64.h"
#include "common/error.h"
#include "launcher/cluster/member_list.h"

using namespace paddle::launcher;
using paddle::common::PeerError;
using paddle::common::UsageError;

namespace {

NodeRegistration node(int i, std::optional<int> rank = std::nullopt) {
  NodeRegistration n;
  n.ip = "10." + std::to_string(i / 62500) + "." + std::to_string(i / 250 % 250) + "." + std::to_string(i % 250 + 1);
  n.hostname = "trainer-" + std::to_string(i);
  n.requested_rank = rank;
  n.endpoints = {n.ip + ":6170", n.ip + ":6171"};
  n.tcp_store = n.ip + ":6172";
  n.devices = "0,1";
  return n;
}

std::vector<NodeRegistration> nodes(int count) {
  std::vector<NodeRegistration> list;
  for (int i = 0; i < count; ++i) list.push_back(node(i));
  return list;
}

}  // namespace

TEST_CASE("a member list travels in columns, deflated and base64-encoded, and comes back whole") {
  std::vector<NodeRegistration> list = nodes(3);
  list[1].requested_rank = 2;
  list[2].server_endpoints = {"10.0.0.3:6200"};
  list[2].ps_store_port = 6201;
  list[2].job_lists = "--ips=10.0.0.1,10.0.0.2,10.0.0.3";
  list[2].restarts_used = 1;
  list[0].hostname = "@home";             // a string of its own that starts with '@'
  list[0].tcp_store = "10.0.0.10:6172";    // another node's address, which starts with this one's
  list[1].endpoints = {"10.0.0.2:6170", "10.0.0.20:6171"};
  const std::string value = encode_member_list(list);
  CHECK(value.starts_with("zcol:"));
  CHECK(value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", 5) == std::string::npos);
  const std::vector<NodeRegistration> back = decode_member_list(value);
  REQUIRE(back.size() == 3);
  for (size_t i = 0; i < list.size(); ++i) CHECK(back[i].to_json() == list[i].to_json());
}

TEST_CASE("a member list's strings come back exactly, however they begin") {
  std::vector<NodeRegistration> list = nodes(2);
  list[0].hostname = "@";
  list[0].devices = "@:6170";  // not this node's address: a string that starts like the shorthand
  list[0].job_lists = "";
  list[1].ip = "::1";
  list[1].endpoints = {"[::1]:6170", "::1:6171", "::10:6172"};
  list[1].tcp_store = "@@";
  const std::vector<NodeRegistration> back = decode_member_list(encode_member_list(list));
  REQUIRE(back.size() == 2);
  for (size_t i = 0; i < list.size(); ++i) CHECK(back[i].to_json() == list[i].to_json());
  CHECK(decode_member_list(encode_member_list({})).empty());
}

TEST_CASE("a 4,096-node member list is a small fraction of its registrations' JSON") {
  const std::vector<NodeRegistration> list = nodes(4096);
  size_t plain = 0;
  for (const auto& n : list) plain += n.to_json().dump().size() + 1;
  const std::string value = encode_member_list(list);
  CHECK(value.size() * 20 < plain);
  CHECK(decode_member_list(value).size() == 4096);
}

TEST_CASE("a malformed member list is a peer error that says what is wrong") {
  CHECK_THROWS_WITH_AS(decode_member_list(node(0).to_json().dump()), doctest::Contains("not 'zcol:' (did a paddle-launch of another version"), PeerError);
  CHECK_THROWS_WITH_AS(decode_member_list("zcol:abc$def"), doctest::Contains("not base64 at byte 8"), PeerError);
  std::string value = encode_member_list(nodes(50));
  value.resize(value.size() / 2 / 4 * 4);
  CHECK_THROWS_WITH_AS(decode_member_list(value), doctest::Contains("cut short or corrupt"), PeerError);
  CHECK_THROWS_WITH_AS(decode_member_list("zcol:" + std::string(40, 'A')), doctest::Contains("zlib stream"), PeerError);
}

TEST_CASE("a member list whose text is not the column form is a peer error naming what is wrong") {
  auto packed = [](const std::string& text) {
    uLongf size = compressBound(static_cast<uLong>(text.size()));
    std::string out(size, '\0');
    compress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(text.data()), text.size());
    out.resize(size);
    return "zcol:" + paddle::common::to_base64(out);
  };
  CHECK_THROWS_WITH_AS(decode_member_list(packed("not json")), doctest::Contains("malformed"), PeerError);
  CHECK_THROWS_WITH_AS(decode_member_list(packed(R"({"nodes": 2, "columns": {"ip": ["10.0.0.1", "10.0.0.2"], "hostname": ["a"]}})")),
                       doctest::Contains("its column 'hostname' does not hold 2 values"), PeerError);
  CHECK_THROWS_WITH_AS(decode_member_list(packed(R"({"nodes": 1, "columns": {"ip": ["10.0.0.1"]}})")),
                       doctest::Contains("registration at the master is malformed"), PeerError);
}

TEST_CASE("MemberLists decodes a list once for every reader, and a new list anew") {
  MemberLists lists;
  const std::string first = encode_member_list(nodes(5));
  const auto a = lists.list(first, {}).ranked;
  const auto b = lists.list(first, {}).ranked;
  CHECK(a == b);  // the same decoding, shared
  REQUIRE(a->size() == 5);
  CHECK((*a)[4].first_global_rank == 8);
  const auto reordered = lists.list(first, {node(4).ip}).ranked;
  CHECK(reordered != a);
  CHECK((*reordered)[0].node.ip == node(4).ip);
  std::vector<NodeRegistration> clash = nodes(2);
  clash[0].requested_rank = clash[1].requested_rank = 1;
  const std::string bad = encode_member_list(clash);
  CHECK_THROWS_AS(lists.list(bad, {}), UsageError);
  CHECK_THROWS_AS(lists.list(bad, {}), UsageError);  // never kept as if it had ranked
  CHECK(lists.list(first, {}).ranked != a);  // only the last list is kept
}

TEST_CASE("MemberLists gives readers arriving at once one decoding, and the job's restarts used") {
  std::vector<NodeRegistration> list = nodes(300);
  list[7].restarts_used = 2;  // a node that has seen the most restarts
  list[9].restarts_used = 1;
  const std::string value = encode_member_list(list);
  MemberLists lists;
  std::vector<MemberLists::List> got(32);
  std::vector<std::thread> readers;
  for (auto& g : got) readers.emplace_back([&] { g = lists.list(value, {}); });
  for (auto& r : readers) r.join();
  for (const auto& g : got) {
    CHECK(g.ranked == got[0].ranked);
    CHECK(g.restarts_used == 2);
  }
  CHECK(got[0].ranked->size() == 300);
}
