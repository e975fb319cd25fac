#pragma once
// OutFrame: one outgoing frame (PROTOCOL.md) as a list of byte ranges, sent with a single
// scatter/gather write. Small values (the header, a table id, array counts, strings) are encoded
// into the frame's own storage; arrays are referenced where they lie when their host bytes are
// their wire bytes (a little-endian host), so keys, gradients and values are never copied into a
// frame. A referenced array must outlive the write. One OutFrame is reused frame after frame:
// clear() keeps its memory.

#include <boost/asio/buffer.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ps/wire/protocol.h"

namespace paddle::ps {

class OutFrame {
 public:
  OutFrame() { clear(); }
  void clear();

  OutFrame& u32(uint32_t v);
  OutFrame& u64(uint64_t v);
  OutFrame& str(const std::string& s);
  OutFrame& f32s(const float* v, size_t n);
  OutFrame& u64s(const uint64_t* v, size_t n);

  size_t body_bytes() const { return bytes_ - kHeaderBytes; }
  // Sets the header (its body_bytes from the body so far) and returns the buffers to write,
  // the header's first.
  const std::vector<boost::asio::const_buffer>& finish(Header header);
  // The finished frame in one piece (tests, ParameterServer::answer_frame).
  std::vector<unsigned char> flatten() const;

 private:
  struct Piece {
    const unsigned char* external;  // null: owned_[offset, offset + size)
    size_t offset, size;
  };
  unsigned char* own(size_t n);  // n more bytes of the frame's own storage
  template <typename T>
  OutFrame& array(const T* v, size_t n);

  std::vector<unsigned char> owned_;
  std::vector<Piece> pieces_;
  std::vector<boost::asio::const_buffer> buffers_;
  size_t bytes_ = 0;  // header and body
};

}  // namespace paddle::ps
