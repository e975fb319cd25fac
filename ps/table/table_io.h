#pragma once
// The tables' checkpoint bytes: values written in host order (checkpoints are read back by the
// same build of the same machine kind; the wire, not the checkpoint, is byte-order explicit),
// reads that throw common::DataError when the data ends early.

#include <fmt/format.h>

#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "common/error.h"

namespace paddle::ps::table_io {

template <typename T>
void write(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T read(std::istream& in) {
  T v;
  if (!in.read(reinterpret_cast<char*>(&v), sizeof v)) throw common::DataError("table data ends early");
  return v;
}

inline void write_floats(std::ostream& out, const float* v, size_t n) {
  out.write(reinterpret_cast<const char*>(v), static_cast<std::streamsize>(n * sizeof(float)));
}

inline void read_floats(std::istream& in, float* v, size_t n) {
  if (!in.read(reinterpret_cast<char*>(v), static_cast<std::streamsize>(n * sizeof(float))))
    throw common::DataError("table data ends early");
}

// A u64 count, then the values.
inline void write_counted(std::ostream& out, const std::vector<float>& v) {
  write<uint64_t>(out, v.size());
  write_floats(out, v.data(), v.size());
}

inline std::vector<float> read_counted(std::istream& in, size_t expected) {
  const auto n = read<uint64_t>(in);
  if (n != expected) throw common::DataError(fmt::format("table data holds {} values where {} were expected", n, expected));
  std::vector<float> v(n);
  read_floats(in, v.data(), n);
  return v;
}

}  // namespace paddle::ps::table_io
