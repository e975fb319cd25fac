#pragma once
// The parameter-server wire protocol (ps/wire/PROTOCOL.md): length-prefixed binary frames with a
// fixed little-endian header, a version, a request id and a status, and bodies read through a
// bounds-checked reader so that no frame, however malformed, can make a server read past it.

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/job_token.h"
#include "ps/wire/coding.h"

namespace paddle::ps {

inline constexpr uint32_t kMagic = 0x56525350;  // "PSRV" on the wire
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 24;
inline constexpr uint32_t kDefaultMaxBody = 256u << 20;

// The handshake before the first frame (PROTOCOL.md): the server greets each connection with
// kGreetingMagic and a challenge; the client answers with a proof of the job token.
inline constexpr char kGreetingMagic[4] = {'P', 'S', 'A', 'U'};
inline constexpr size_t kGreetingBytes = 4 + common::kChallengeSize;
inline constexpr size_t kProofBytes = common::kProofSize;
inline constexpr std::string_view kProofPurpose = "paddle-ps";
inline constexpr char kProofAccepted = '+', kProofRefused = '-';  // the server's one-byte verdict

enum class Command : uint16_t {
  kPullDense = 1,
  kPushDense = 2,
  kPullSparse = 3,
  kPushSparse = 4,
  kInitDense = 5,
  kBarrier = 6,
  kSave = 7,
  kLoad = 8,
  kStopWorker = 9,
  kPing = 10,
  kAddDense = 11,   // GEO: add a delta to the values, bypassing the update rule
  kAddSparse = 12,
  kPullDenseRange = 13,  // part of a dense block: several in flight make a pipelined PULL_DENSE
  kSaveMode = 14,  // SAVE with a SaveMode (ps/table/save_mode.h)
  kShrink = 15,    // shrink the sparse tables; the reply says rows before and after
  kStats = 16,     // the tables' memory (ps/table/table_reports.h)
  kPrefetchSparse = 17,  // answered at once; then a tiered table reads the keys' rows into memory
  kRejoin = 18,    // a worker restarted in place: its unfinished step is dropped; barriers completed
};
inline constexpr uint16_t kLastCommand = 18;
inline constexpr uint16_t kReplyBit = 0x8000;

enum class Status : uint32_t {
  kOk = 0,
  kBadRequest = 1,      // malformed body
  kUnknownCommand = 2,
  kBadVersion = 3,
  kServerError = 4,     // the request was well formed but failed (message in the body)
};

struct Header {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t command = 0;
  uint64_t request_id = 0;
  uint32_t status = 0;
  uint32_t body_bytes = 0;
};

// A request the server refuses, with the status its reply carries: kBadRequest for a body or
// an argument it cannot take (an unknown table, a range past a block's end), kUnknownCommand.
class RequestError : public common::PeerError {
 public:
  RequestError(Status status, const std::string& message) : common::PeerError(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

// Thrown by the reader for a body that ends early or holds impossible sizes: a bad request on
// the server; on a client, a reply out of protocol.
class ProtocolError : public RequestError {
 public:
  explicit ProtocolError(const std::string& message) : RequestError(Status::kBadRequest, message) {}
};

void encode_header(const Header& h, unsigned char* out);
Header decode_header(const unsigned char* in);

// Appends little-endian values to a body.
class Writer {
 public:
  Writer& u32(uint32_t v) { return fixed(v); }
  Writer& u64(uint64_t v) { return fixed(v); }
  Writer& f32s(const float* v, size_t n) { return array(v, n); }
  Writer& u64s(const uint64_t* v, size_t n) { return array(v, n); }
  Writer& str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<unsigned char>& bytes() { return bytes_; }

 private:
  template <typename T>
  Writer& fixed(T v) {
    bytes_.resize(bytes_.size() + sizeof v);
    encode_fixed(bytes_.data() + bytes_.size() - sizeof v, v);
    return *this;
  }
  template <typename T>
  Writer& array(const T* v, size_t n) {
    u64(n);
    bytes_.resize(bytes_.size() + n * sizeof(T));
    encode_array(bytes_.data() + bytes_.size() - n * sizeof(T), v, n);
    return *this;
  }
  std::vector<unsigned char> bytes_;
};

// Reads a body; every read checks the remaining length first.
class Reader {
 public:
  Reader(const unsigned char* data, size_t size) : data_(data), size_(size) {}
  uint32_t u32() { return value<uint32_t>(); }
  uint64_t u64() { return value<uint64_t>(); }
  std::vector<float> f32s() { return array<float>(); }
  std::vector<uint64_t> u64s() { return array<uint64_t>(); }
  // The same arrays without a copy: a view of the body where the wire order is the host's and
  // the values are aligned for their type (floats after a u32 table id and a u64 count are),
  // else decoded into `scratch`. Valid while the body and `scratch` are.
  std::span<const float> f32s(std::vector<float>& scratch) { return array_view(scratch); }
  std::span<const uint64_t> u64s(std::vector<uint64_t>& scratch) { return array_view(scratch); }
  std::string str() {
    const uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  // Whether the body is read to its end (a request whose last field is optional).
  bool at_end() const { return at_ == size_; }
  void expect_end() const {
    if (at_ != size_) throw ProtocolError("body has " + std::to_string(size_ - at_) + " trailing bytes");
  }

 private:
  void need(size_t n) const {
    if (n > size_ - at_) throw ProtocolError("body ends early: needs " + std::to_string(n) + " more bytes, has " +
                                             std::to_string(size_ - at_));
  }
  template <typename T>
  T value() {
    need(sizeof(T));
    const T v = decode_fixed<T>(data_ + at_);
    at_ += sizeof(T);
    return v;
  }
  template <typename T>
  size_t array_length() {
    const uint64_t n = u64();
    if (n > (size_ - at_) / sizeof(T)) throw ProtocolError("array of " + std::to_string(n) + " does not fit the body");
    return static_cast<size_t>(n);
  }
  template <typename T>
  std::vector<T> array() {
    std::vector<T> v(array_length<T>());
    decode_array(data_ + at_, v.data(), v.size());
    at_ += v.size() * sizeof(T);
    return v;
  }
  template <typename T>
  std::span<const T> array_view(std::vector<T>& scratch) {
    const size_t n = array_length<T>();
    const unsigned char* at = data_ + at_;
    at_ += n * sizeof(T);
    if (std::endian::native == std::endian::little && reinterpret_cast<uintptr_t>(at) % alignof(T) == 0)
      return {reinterpret_cast<const T*>(at), n};
    scratch.resize(n);
    decode_array(at, scratch.data(), n);
    return scratch;
  }
  const unsigned char* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace paddle::ps
