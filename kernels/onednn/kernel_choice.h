#pragma once
// Choosing between two kernels for one op and shape by timing both on this machine, once, at the
// shape's first use: where we keep a kernel of our own beside one of oneDNN's, which is faster
// depends on the CPU kind (our max pooling was 1.7x faster than oneDNN's on an Intel Xeon and 6x
// slower on an AMD EPYC before it was rewritten), so neither a fixed choice nor a rule keyed on
// the vendor holds on the next machine. A timing costs a few milliseconds per shape.

#include <functional>
#include <string>
#include <vector>

namespace paddle::kernels::onednn {

// Microseconds per call of an op's forward and backward halves: the fastest of `runs` calls
// each, after one call to warm the caches.
struct OpTiming {
  double forward_us = 0, backward_us = 0;
  double total_us() const { return forward_us + backward_us; }
};
OpTiming time_op(const std::function<void()>& forward, const std::function<void()>& backward, int runs = 5);

// Which of the two is faster, forward and backward together, and the line that says so:
// "<what>: ours, 85 + 58 us forward + backward, against oneDNN's 73 + 120 us, timed here".
struct KernelChoice {
  bool ours = false;
  std::string line;
};
KernelChoice choose_faster(const std::string& what, const OpTiming& ours, const OpTiming& library);

// Microseconds per call of each of several ways to run the same op (algorithms of one library):
// one call each to warm the caches, then `rounds` rounds of one call each, the fastest counting.
// A way already 25% slower than the fastest after a round is a clear loser and is timed no further
// (its figure is its best so far), and a lone leader is not timed further either: a clear choice
// costs two calls of each way.
// `timer` times one call in microseconds (the steady clock; tests give a scripted one).
using CallTimer = std::function<double(const std::function<void()>&)>;
std::vector<double> race(const std::vector<std::function<void()>>& ways, int rounds = 3, const CallTimer& timer = {});

// One way, named, and its time per call.
struct TimedWay {
  std::string name;
  double us = 0;
};
// The fastest of `ways` (the first among equals) and the words that say so: "Winograd's, 836 us,
// against direct 898 us".
struct FastestWay {
  size_t index = 0;
  std::string words;
};
FastestWay fastest_way(const std::vector<TimedWay>& ways);

}  // namespace paddle::kernels::onednn
