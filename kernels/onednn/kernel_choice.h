#pragma once
// Choosing between kernels for one op and shape by timing them on this machine: which is faster
// depends on the CPU kind (our max pooling was 1.7x faster than oneDNN's on an Intel Xeon and 6x
// slower on an AMD EPYC before it was rewritten; Winograd's convolution beats direct on the EPYC's
// gradients and loses its forward), so neither a fixed choice nor a rule keyed on the vendor holds
// on the next machine. Our kernel against oneDNN's is timed once, on scratch data, at the shape's
// first use (a few milliseconds), and so are oneDNN's alternatives, raced; a ChoiceCache keeps each
// decision for the machine's later processes.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kernels/onednn/choice_cache.h"

namespace paddle::kernels::onednn {

// Microseconds per call of an op's forward and backward halves: the fastest of `runs` calls
// each, after one call to warm the caches.
struct OpTiming {
  double forward_us = 0, backward_us = 0;
  double total_us() const { return forward_us + backward_us; }
};
OpTiming time_op(const std::function<void()>& forward, const std::function<void()>& backward, int runs = 5);

// Which of the two is faster, forward and backward together (index 0: ours, 1: oneDNN's), and
// the words that say so: "ours, 85 + 58 us forward + backward, against oneDNN's 73 + 120 us".
Decision choose_faster(const OpTiming& ours, const OpTiming& library);

// A race between several ways to run the same op (algorithms of one library: Winograd's
// convolution or direct, sgemm or matmul). Until decided, each call runs next() and reports its
// microseconds to record(): a first pass warms each way (untimed), then `rounds` timed passes, the
// fastest call of each way counting. After a pass, a way 25% slower than the fastest is a clear
// loser and runs no more, and a lone leader is the winner; so a clear choice costs two calls of
// each way. A race of one way is decided from the start.
class Race {
 public:
  explicit Race(size_t ways, int rounds = 3);

  bool decided() const { return decided_; }
  // The way the next call runs: the winner once decided.
  size_t next() const { return next_; }
  void record(double us);
  // Each way's fastest timed call (infinity for one never timed).
  const std::vector<double>& best_us() const { return best_; }

 private:
  std::vector<double> best_;
  std::vector<bool> running_;
  int rounds_, pass_ = 0;
  size_t next_ = 0;
  bool decided_;
};

// The microseconds per call of each of `ways`, raced on scratch data (Race).
std::vector<double> race(const std::vector<std::function<void()>>& ways, int rounds = 3);

// One way, named, and its time per call.
struct TimedWay {
  std::string name;
  double us = 0;
};
// The fastest of `ways` (the first among equals) and the words that say so: "Winograd's, 836 us,
// against direct 898 us".
Decision fastest_way(const std::vector<TimedWay>& ways);

}  // namespace paddle::kernels::onednn
