#include "ps/wire/frame.h"

#include <bit>

namespace paddle::ps {

void OutFrame::clear() {
  owned_.clear();
  pieces_.clear();
  bytes_ = 0;
  own(kHeaderBytes);
}

unsigned char* OutFrame::own(size_t n) {
  const size_t at = owned_.size();
  owned_.resize(at + n);
  if (!pieces_.empty() && pieces_.back().external == nullptr) pieces_.back().size += n;
  else pieces_.push_back(Piece{nullptr, at, n});
  bytes_ += n;
  return owned_.data() + at;
}

OutFrame& OutFrame::u32(uint32_t v) {
  encode_fixed(own(sizeof v), v);
  return *this;
}

OutFrame& OutFrame::u64(uint64_t v) {
  encode_fixed(own(sizeof v), v);
  return *this;
}

OutFrame& OutFrame::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  if (!s.empty()) std::copy(s.begin(), s.end(), own(s.size()));
  return *this;
}

template <typename T>
OutFrame& OutFrame::array(const T* v, size_t n) {
  u64(n);
  if (n == 0) return *this;
  if constexpr (std::endian::native == std::endian::little) {
    pieces_.push_back(Piece{reinterpret_cast<const unsigned char*>(v), 0, n * sizeof(T)});
    bytes_ += n * sizeof(T);
  } else {
    encode_array(own(n * sizeof(T)), v, n);
  }
  return *this;
}

OutFrame& OutFrame::f32s(const float* v, size_t n) { return array(v, n); }
OutFrame& OutFrame::u64s(const uint64_t* v, size_t n) { return array(v, n); }

const std::vector<boost::asio::const_buffer>& OutFrame::finish(Header header) {
  header.body_bytes = static_cast<uint32_t>(body_bytes());
  encode_header(header, owned_.data());
  buffers_.clear();
  for (const Piece& p : pieces_)
    buffers_.emplace_back(p.external ? p.external : owned_.data() + p.offset, p.size);
  return buffers_;
}

std::vector<unsigned char> OutFrame::flatten() const {
  std::vector<unsigned char> out;
  out.reserve(bytes_);
  for (const auto& b : buffers_) {
    const auto* p = static_cast<const unsigned char*>(b.data());
    out.insert(out.end(), p, p + b.size());
  }
  return out;
}

}  // namespace paddle::ps
