#pragma once
// Choosing between kernels for one op and shape by timing them on this machine: which is faster
// depends on the CPU kind (our max pooling was 1.7x faster than oneDNN's on an Intel Xeon and 6x
// slower on an AMD EPYC before it was rewritten; Winograd's convolution beats direct on the EPYC's
// gradients and loses its forward), so neither a fixed choice nor a rule keyed on the vendor holds
// on the next machine. Our kernel against oneDNN's is timed once, on scratch data, at the shape's
// first use (a few milliseconds); oneDNN's alternatives race on the op's own first calls.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
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

// A race between several ways to run the same op (algorithms of one library: Winograd's
// convolution or direct, sgemm or matmul), run on the op's own calls, so it costs no call that
// was not needed anyway and times each way as the job runs it, its caches as they are between
// the other layers. Until decided, each call runs next() and reports its microseconds to
// record(): a first pass warms each way (untimed), then `rounds` timed passes, the fastest call
// of each way counting. After a pass, a way 25% slower than the fastest is a clear loser and runs
// no more, and a lone leader is the winner; so a clear choice costs two calls of each way. A race
// of one way is decided from the start.
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

// An op's ways, named, and the Race between them, run on the op's calls.
template <class Way>
class RacedWays {
 public:
  explicit RacedWays(std::vector<std::pair<std::string, Way>> ways, int rounds = 3)
      : ways_(std::move(ways)), race_(ways_.size(), rounds) {}

  // The way the op's results are shaped by (its output layout): the first.
  const Way& first() const { return ways_.front().second; }
  // Runs `call(way)` on this call's way, timed while the race is on. Returns, on the call that
  // decides a race of two or more, the words that say so ("Winograd's, 836 us, against direct
  // 898 us"), else nothing.
  template <class Call>
  std::optional<std::string> run(Call&& call);

 private:
  std::vector<std::pair<std::string, Way>> ways_;
  Race race_;
};

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

template <class Way>
template <class Call>
std::optional<std::string> RacedWays<Way>::run(Call&& call) {
  if (race_.decided()) {
    call(ways_[race_.next()].second);
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  call(ways_[race_.next()].second);
  race_.record(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  if (!race_.decided()) return std::nullopt;
  std::vector<TimedWay> timings;
  for (size_t i = 0; i < ways_.size(); ++i) timings.push_back({ways_[i].first, race_.best_us()[i]});
  return fastest_way(timings).words;
}

}  // namespace paddle::kernels::onednn
