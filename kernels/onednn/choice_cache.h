#pragma once
// ChoiceCache: the kernel choices timed on this machine (kernel_choice.h), kept in a file so that
// every later process with the same CPU, thread count and oneDNN takes the same ones without
// timing them again. So a restarted or resumed job computes what an undisturbed one did, bit for
// bit, though Winograd's convolution and direct (or matmul and sgemm) round differently; and a
// job's first steps time nothing once any job has run its shapes on this machine.
//
// The file is JSON: {"<machine> | <op and shape>": {"index": 1, "words": "Winograd's, 765 us,
// against direct 1036 us"}, ...}, where <machine> names the CPU model, the OpenMP threads and the
// oneDNN version. Processes that ask for one key at once take turns (an flock on "<file>.lock"),
// so the ranks of a node agree and only the first times; the file is replaced whole (a rename),
// so a reader never sees half of one. A file that cannot be read or written is left alone: the
// process says why once on stderr and times its own choices.
//
// PADDLE_KERNEL_CACHE names the file (kernels::choice_cache_from); delete it to time again.

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>

namespace paddle::kernels::onednn {

// Which way a choice took, and the words that say why ("Winograd's, 765 us, against direct 1036 us").
struct Decision {
  size_t index = 0;
  std::string words;
  bool from_cache = false;  // taken from the file, not timed by this process
};

class ChoiceCache {
 public:
  // `path` "" keeps nothing: every decide() times. A turn takes milliseconds (one op's timing);
  // a process holding the file's lock past `longest_turn` (stopped, or hung) is waited for no
  // longer: this one then times its own choices, as with a file it cannot keep.
  explicit ChoiceCache(std::string path, std::chrono::milliseconds longest_turn = std::chrono::seconds(30));

  const std::string& path() const { return path_; }
  // The decision kept under `key` for this machine (one of `ways`), or the one `time` makes,
  // kept for the next process. `time` runs with the file locked, so a second process asking for
  // the key waits for it and reads it.
  Decision decide(const std::string& key, size_t ways, const std::function<Decision()>& time);

 private:
  void give_up(const std::exception& e);  // says why on stderr; keeps nothing from then on

  std::string path_;
  std::string machine_;  // the key prefix: CPU model, threads, oneDNN version
  std::chrono::milliseconds longest_turn_;
};

}  // namespace paddle::kernels::onednn
