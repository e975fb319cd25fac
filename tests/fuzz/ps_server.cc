// Fuzz target: a parameter server's frame handling after the handshake (ps/server/server.h
// answer_frame): the header decoder and every command handler, on a real server with two dense
// and two sparse tables. The input's first byte picks the mode (sync or async, 1 or 2 workers,
// the update rule); the rest is a stream of frames, each a 24-byte header and as much of the
// body it announces as the input still holds (the header is made to say so). SAVE and LOAD get
// the scratch folder in place of the folder they name. Every reply must be a well-formed frame
// answering its request.

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ps/server/server.h"
#include "ps/table_spec.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

using namespace paddle::ps;

void require(bool ok) {
  if (!ok) std::abort();
}

ParameterServer make_server(uint8_t mode) {
  TableSpecs specs;
  specs.dense = {{"a", 3}, {"b", 5}};
  specs.sparse = {{"e", 2, 7}, {"w", 1, 9}};
  specs.update_rule = (mode >> 2) % 3 == 0   ? paddle::common::OptimizerKind::kSgd
                      : (mode >> 2) % 3 == 1 ? paddle::common::OptimizerKind::kAdagrad
                                             : paddle::common::OptimizerKind::kAdam;
  ServerOptions options;
  options.sync = mode & 1;
  options.workers = 1 + ((mode >> 1) & 1);
  return ParameterServer(options, build_server_tables(specs, 0, 1));
}

// FRAME with a SAVE or LOAD body's folder replaced by `dir` (the bytes after it kept).
void redirect_folder(std::vector<unsigned char>& frame, const std::string& dir) {
  std::vector<unsigned char> body(frame.begin() + kHeaderBytes, frame.end());
  if (body.size() < 4) return;
  const uint64_t length = decode_fixed<uint32_t>(body.data());
  if (length > body.size() - 4) return;
  Writer w;
  w.str(dir);
  w.bytes().insert(w.bytes().end(), body.begin() + 4 + static_cast<long>(length), body.end());
  Header h = decode_header(frame.data());
  h.body_bytes = static_cast<uint32_t>(w.bytes().size());
  frame.resize(kHeaderBytes);
  encode_header(h, frame.data());
  frame.insert(frame.end(), w.bytes().begin(), w.bytes().end());
}

void check_reply(const std::vector<unsigned char>& reply, const Header& request) {
  if (reply.empty()) return;  // dropped or deferred
  require(reply.size() >= kHeaderBytes);
  const Header h = decode_header(reply.data());
  require(h.magic == kMagic && h.version == kVersion);
  require(h.command == static_cast<uint16_t>(request.command | kReplyBit) && h.request_id == request.request_id);
  require(h.body_bytes == reply.size() - kHeaderBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  if (size == 0) return 0;
  auto server = make_server(data[0]);
  size_t at = 1;
  while (size - at >= kHeaderBytes) {
    Header h = decode_header(data + at);
    at += kHeaderBytes;
    h.body_bytes = static_cast<uint32_t>(std::min<size_t>(h.body_bytes, size - at));
    std::vector<unsigned char> frame(kHeaderBytes);
    encode_header(h, frame.data());
    frame.insert(frame.end(), data + at, data + at + h.body_bytes);
    at += h.body_bytes;
    if (h.command == static_cast<uint16_t>(Command::kSave) || h.command == static_cast<uint16_t>(Command::kLoad))
      redirect_folder(frame, scratch.path());
    check_reply(server.answer_frame(frame), h);
  }
  scratch.clear();
  return 0;
}
