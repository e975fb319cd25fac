#include <doctest/doctest.h>

#include "ps/wire/frame.h"

using namespace paddle::ps;

TEST_CASE("an out frame gathers its header, small values and the caller's arrays, which it does not copy") {
  const std::vector<uint64_t> keys{1, 2, 3};
  const std::vector<float> rows{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  OutFrame frame;
  frame.u32(7).u64s(keys.data(), keys.size()).f32s(rows.data(), rows.size()).str("ok");
  Header h;
  h.command = 3;
  h.request_id = 99;
  const auto& buffers = frame.finish(h);
  CHECK(frame.body_bytes() == 4 + 8 + 24 + 8 + 24 + 4 + 2);
  if constexpr (std::endian::native == std::endian::little) {
    REQUIRE(buffers.size() == 5);  // header+table+count, keys, count, rows, string
    CHECK(buffers[1].data() == keys.data());
    CHECK(buffers[3].data() == rows.data());
  }
  // The bytes are those a Writer gives after the header.
  const auto bytes = frame.flatten();
  REQUIRE(bytes.size() == kHeaderBytes + frame.body_bytes());
  const Header back = decode_header(bytes.data());
  CHECK(back.request_id == 99);
  CHECK(back.body_bytes == frame.body_bytes());
  Writer w;
  w.u32(7).u64s(keys.data(), keys.size()).f32s(rows.data(), rows.size()).str("ok");
  CHECK(std::vector<unsigned char>(bytes.begin() + kHeaderBytes, bytes.end()) == w.bytes());

  frame.clear();  // reused: an empty body
  CHECK(frame.body_bytes() == 0);
  CHECK(frame.finish(h).size() == 1);
}

TEST_CASE("the reader's array views: in place when aligned, decoded into the scratch otherwise") {
  const std::vector<float> values{1, 2, 3};
  Writer w;
  w.u32(1).f32s(values.data(), values.size());  // floats at offset 12: aligned
  std::vector<unsigned char> body(w.bytes());
  Reader r(body.data(), body.size());
  r.u32();
  std::vector<float> scratch;
  auto view = r.f32s(scratch);
  CHECK(std::vector<float>(view.begin(), view.end()) == values);
  if constexpr (std::endian::native == std::endian::little)
    CHECK(static_cast<const void*>(view.data()) == body.data() + 12);
  r.expect_end();

  const std::vector<uint64_t> keys{5, 6};
  Writer k;
  k.u32(1).u64s(keys.data(), keys.size());  // keys at offset 12: not aligned for u64
  Reader rk(k.bytes().data(), k.bytes().size());
  rk.u32();
  std::vector<uint64_t> key_scratch;
  auto key_view = rk.u64s(key_scratch);
  CHECK(std::vector<uint64_t>(key_view.begin(), key_view.end()) == keys);
  CHECK(key_view.data() == key_scratch.data());

  Writer lie;
  lie.u64(1000);
  Reader rl(lie.bytes().data(), lie.bytes().size());
  CHECK_THROWS_AS(rl.f32s(scratch), ProtocolError);
}
