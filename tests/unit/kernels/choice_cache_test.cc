// ChoiceCache: a kernel choice timed once per machine and kept in a file, which later processes
// (and concurrent ones) take instead of timing again.
#include <doctest/doctest.h>

#include "kernels/context.h"

#ifdef PADDLE_LAUNCH_WITH_ONEDNN
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "kernels/onednn/choice_cache.h"
#include "kernels/onednn/onednn.h"

namespace onednn = paddle::kernels::onednn;
namespace fs = std::filesystem;

namespace {

// A file name in a fresh directory, removed with it.
struct ScratchFile {
  fs::path dir = fs::temp_directory_path() / ("choice-cache-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::string path = (dir / "nested" / "kernel-choices.json").string();
  ~ScratchFile() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("a timed choice is kept for the machine's later processes, per key, and an unknown way is timed again") {
  ScratchFile file;
  int timings = 0;
  const auto timed = [&timings](size_t index) {
    return [&timings, index] {
      ++timings;
      return onednn::Decision{index, "fast, 1 us, against slow 2 us", false};
    };
  };
  onednn::ChoiceCache first(file.path);  // its directory is made
  const onednn::Decision made = first.decide("conv A", 2, timed(1));
  CHECK(made.index == 1);
  CHECK_FALSE(made.from_cache);
  CHECK(fs::exists(file.path));

  onednn::ChoiceCache later(file.path);
  const onednn::Decision kept = later.decide("conv A", 2, timed(0));
  CHECK(kept.index == 1);
  CHECK(kept.from_cache);
  CHECK(kept.words == "fast, 1 us, against slow 2 us");
  CHECK(timings == 1);
  CHECK(later.decide("conv B", 2, timed(0)).index == 0);  // another key: timed
  CHECK(timings == 2);
  CHECK(onednn::ChoiceCache(file.path).decide("conv A", 1, timed(0)).index == 0);  // kept way 1 of 1: timed again
  CHECK(timings == 3);

  onednn::ChoiceCache none("");
  CHECK(none.decide("conv A", 2, timed(0)).index == 0);  // keeps nothing
  CHECK(none.decide("conv A", 2, timed(1)).index == 1);
  CHECK(timings == 5);
}

TEST_CASE("processes asking for one choice at once take turns: one times it, the others take its decision") {
  ScratchFile file;
  std::atomic<int> timings = 0;
  std::vector<std::future<onednn::Decision>> askers;
  for (size_t i = 0; i < 4; ++i)
    askers.push_back(std::async(std::launch::async, [&, i] {
      onednn::ChoiceCache cache(file.path);
      return cache.decide("gemm", 4, [&] {
        ++timings;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // while the others wait
        return onednn::Decision{i, "mine", false};
      });
    }));
  std::vector<onednn::Decision> got;
  for (auto& a : askers) got.push_back(a.get());
  CHECK(timings == 1);
  int timed_here = 0;
  for (const auto& d : got) {
    CHECK(d.index == got[0].index);
    timed_here += d.from_cache ? 0 : 1;
  }
  CHECK(timed_here == 1);
}

TEST_CASE("a cache that cannot be kept is left alone: the process says why and times its own choices") {
  ScratchFile file;
  fs::create_directories(fs::path(file.path).parent_path());
  {
    std::ofstream(file.path) << "not json";
  }
  onednn::ChoiceCache corrupt(file.path);
  int timings = 0;
  const auto time = [&timings] {
    ++timings;
    return onednn::Decision{1, "w", false};
  };
  CHECK(corrupt.decide("k", 2, time).index == 1);
  CHECK(corrupt.path().empty());  // given up: no more tries
  CHECK(corrupt.decide("k", 2, time).index == 1);
  CHECK(timings == 2);
  std::ifstream left(file.path);
  CHECK(std::string(std::istreambuf_iterator<char>(left), {}) == "not json");  // not overwritten

  onednn::ChoiceCache unwritable("/proc/no-such-directory/kernel-choices.json");
  CHECK(unwritable.decide("k", 2, time).index == 1);
  CHECK(unwritable.path().empty());
}

TEST_CASE("a process that holds the cache's lock too long is waited for no longer") {
  ScratchFile file;
  fs::create_directories(fs::path(file.path).parent_path());
  const int held = ::open((file.path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);  // another open file: another process, to flock
  onednn::ChoiceCache cache(file.path, std::chrono::milliseconds(100));
  int timings = 0;
  const auto start = std::chrono::steady_clock::now();
  const onednn::Decision d = cache.decide("k", 2, [&] {
    ++timings;
    return onednn::Decision{1, "w", false};
  });
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(d.index == 1);
  CHECK(timings == 1);
  CHECK(cache.path().empty());  // given up, and said why
  CHECK(waited >= std::chrono::milliseconds(100));
  CHECK(waited < std::chrono::seconds(10));
  CHECK_FALSE(fs::exists(file.path));  // nothing written without the lock
  ::close(held);
}

TEST_CASE("a OneDnn with a cache says which choices it took from it") {
  ScratchFile file;
  const auto decide = [&](onednn::OneDnn& dnn) {
    return dnn.decide("op", 2, [] { return onednn::Decision{0, "ours, 1 us, against theirs 2 us", false}; });
  };
  onednn::OneDnn timing(onednn::Pick::kFaster, onednn::Alternative::kTimed, file.path);
  CHECK(decide(timing) == 0);
  CHECK(timing.choices() == std::vector<std::string>{"op: ours, 1 us, against theirs 2 us, timed here"});
  onednn::OneDnn reading(onednn::Pick::kFaster, onednn::Alternative::kTimed, file.path);
  CHECK(decide(reading) == 0);
  CHECK(reading.choices() ==
        std::vector<std::string>{"op: ours, 1 us, against theirs 2 us, as timed before (" + file.path + ")"});
}
#endif

TEST_CASE("PADDLE_KERNEL_CACHE names the cache, off keeps none, and the default is under the user's cache") {
  using paddle::kernels::choice_cache_from;
  CHECK(choice_cache_from("/tmp/k.json", "/x", "/home/u") == "/tmp/k.json");
  CHECK(choice_cache_from("off", "/x", "/home/u").empty());
  CHECK(choice_cache_from(nullptr, "/x", "/home/u") == "/x/paddle-launch/kernel-choices.json");
  CHECK(choice_cache_from(nullptr, "", "/home/u") == "/home/u/.cache/paddle-launch/kernel-choices.json");
  CHECK(choice_cache_from(nullptr, nullptr, "/home/u") == "/home/u/.cache/paddle-launch/kernel-choices.json");
  CHECK(choice_cache_from(nullptr, nullptr, nullptr).empty());
}
