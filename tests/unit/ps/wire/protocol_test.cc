#include <doctest/doctest.h>

#include "ps/wire/protocol.h"
#include "tests/unit/ps/ps_test_support.h"

using namespace paddle::ps;
using namespace paddle::ps::testing;
TEST_CASE("the reader never reads past the body") {
  Writer w;
  w.u32(1).u64(2);
  Reader r(w.bytes().data(), w.bytes().size());
  CHECK(r.u32() == 1);
  CHECK(r.u64() == 2);
  CHECK_THROWS_AS(r.u32(), ProtocolError);
  Writer lie;
  lie.u64(1ULL << 40);  // an array length far beyond the body
  Reader big(lie.bytes().data(), lie.bytes().size());
  CHECK_THROWS_AS(big.f32s(), ProtocolError);
}

TEST_CASE("the wire is little-endian whatever the host: header and body bytes") {
  Header h;
  h.command = 0x0102;
  h.request_id = 0x0807060504030201ull;
  h.body_bytes = 0x0a0b0c0d;
  unsigned char bytes[kHeaderBytes];
  encode_header(h, bytes);
  CHECK(std::vector<unsigned char>(bytes, bytes + 4) == std::vector<unsigned char>{'P', 'S', 'R', 'V'});
  CHECK(bytes[6] == 0x02);
  CHECK(bytes[7] == 0x01);
  CHECK(bytes[8] == 0x01);
  CHECK(bytes[15] == 0x08);
  CHECK(bytes[20] == 0x0d);
  CHECK(decode_header(bytes).request_id == h.request_id);

  Writer w;
  const float one = 1.0f;  // 0x3f800000
  w.u32(0x11223344).f32s(&one, 1);
  const auto& b = w.bytes();
  CHECK(std::vector<unsigned char>(b.begin(), b.begin() + 4) == std::vector<unsigned char>{0x44, 0x33, 0x22, 0x11});
  CHECK(std::vector<unsigned char>(b.end() - 4, b.end()) == std::vector<unsigned char>{0x00, 0x00, 0x80, 0x3f});
  Reader r(b.data(), b.size());
  CHECK(r.u32() == 0x11223344u);
  CHECK(r.f32s() == std::vector<float>{1.0f});
  r.expect_end();
}
