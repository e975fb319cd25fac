#pragma once
// Little-endian encoding of the wire format's fixed-width values, written out byte by byte so
// that the byte order is the protocol's, not the host's (compilers turn the loops into plain
// loads and stores on little-endian hosts). Arrays take a bulk copy where the host order already
// is the wire order.

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>

namespace paddle::ps {

template <std::unsigned_integral T>
inline void encode_fixed(unsigned char* out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}

template <std::unsigned_integral T>
inline T decode_fixed(const unsigned char* in) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

// The unsigned integer of the same width that carries T on the wire (floats by their bits).
template <typename T>
using WireWord = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
inline void encode_array(unsigned char* out, const T* values, size_t count) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (std::endian::native == std::endian::little) {
    if (count > 0) std::memcpy(out, values, count * sizeof(T));  // an empty vector's data() may be null
  } else {
    for (size_t i = 0; i < count; ++i) encode_fixed(out + i * sizeof(T), std::bit_cast<WireWord<T>>(values[i]));
  }
}

template <typename T>
inline void decode_array(const unsigned char* in, T* values, size_t count) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (std::endian::native == std::endian::little) {
    if (count > 0) std::memcpy(values, in, count * sizeof(T));
  } else {
    for (size_t i = 0; i < count; ++i) values[i] = std::bit_cast<T>(decode_fixed<WireWord<T>>(in + i * sizeof(T)));
  }
}

}  // namespace paddle::ps
