#include "ps/wire/protocol.h"

namespace paddle::ps {
namespace {

template <typename T>
void put(unsigned char*& out, T v) {
  encode_fixed(out, v);
  out += sizeof v;
}

template <typename T>
T take(const unsigned char*& in) {
  const T v = decode_fixed<T>(in);
  in += sizeof v;
  return v;
}

}  // namespace

void encode_header(const Header& h, unsigned char* out) {
  put(out, h.magic);
  put(out, h.version);
  put(out, h.command);
  put(out, h.request_id);
  put(out, h.status);
  put(out, h.body_bytes);
}

Header decode_header(const unsigned char* in) {
  Header h;
  h.magic = take<uint32_t>(in);
  h.version = take<uint16_t>(in);
  h.command = take<uint16_t>(in);
  h.request_id = take<uint64_t>(in);
  h.status = take<uint32_t>(in);
  h.body_bytes = take<uint32_t>(in);
  return h;
}

}  // namespace paddle::ps
