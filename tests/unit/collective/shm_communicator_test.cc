#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <thread>

#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"
#include "collective/shm_communicator.h"

using namespace paddle::collective;
using namespace std::chrono_literals;

namespace {

// Runs `body(comm)` on `world` threads, each a rank with its own communicator over one store.
template <class Body>
void on_ranks(int world, const ShmOptions& options, Body body) {
  paddle::store::KvStoreServer server("127.0.0.1", 0);
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      paddle::store::RendezvousStore client("127.0.0.1", server.port(), 10s);
      GlooStore store(client);
      ShmCommunicator comm(r, world, store, options);
      body(comm);
    }));
  for (auto& f : ranks) f.get();  // rethrows a rank's failure
}

// Not inlined, so that sums of its results are plain float adds, never fused multiply-adds.
[[gnu::noinline]] float value(int rank, size_t i) { return std::sin(static_cast<float>(i) * 0.37f + rank) * 1000.0f * (rank + 1); }

ShmOptions small_slots() {
  ShmOptions options;
  options.slot_bytes = 4096;  // 1024 floats: large messages go through many chunks
  options.timeout = 20s;
  return options;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // memcmp takes no null pointer, which an empty vector may hold.
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool in_dev_shm(const std::string& name) {
  struct stat st {};
  return stat(("/dev/shm" + name).c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("shm allreduce sums in rank order, bit-identical on every rank, for odd and chunked sizes") {
  for (int world : {2, 3}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{1025}, size_t{5 * 1024 + 3},
                         size_t{20000}, size_t{100003}}) {
      CAPTURE(world);
      CAPTURE(count);
      std::vector<float> expected(count);
      for (size_t i = 0; i < count; ++i) {
        float sum = value(0, i);
        for (int p = 1; p < world; ++p) sum += value(p, i);
        expected[i] = sum;
      }
      std::vector<std::vector<float>> results(world);
      on_ranks(world, small_slots(), [&](ShmCommunicator& comm) {
        std::vector<float> data(count);
        for (size_t i = 0; i < count; ++i) data[i] = value(comm.rank(), i);
        comm.allreduce(data.data(), count, ReduceOp::kSum);
        results[comm.rank()] = data;
      });
      for (int r = 0; r < world; ++r) CHECK(same_bits(results[r], expected));
    }
  }
}

TEST_CASE("shm allreduce of a message larger than the whole segment, sum then mean") {
  const size_t count = 3 * 2 * 2 * 1024 + 17;  // more than 2 halves x 2 slots of 1024 floats
  on_ranks(2, small_slots(), [&](ShmCommunicator& comm) {
    std::vector<float> data(count, static_cast<float>(comm.rank() + 1));
    comm.allreduce(data.data(), count, ReduceOp::kSum);
    CHECK(std::all_of(data.begin(), data.end(), [](float v) { return v == 3.0f; }));
    std::vector<float> mean(count, static_cast<float>(comm.rank()));
    comm.allreduce(mean.data(), count, ReduceOp::kAvg);
    CHECK(std::all_of(mean.begin(), mean.end(), [](float v) { return v == 0.5f; }));
    std::vector<float> one{static_cast<float>(comm.rank() * 4)};
    comm.allreduce(one.data(), 1, ReduceOp::kAvg);
    CHECK(one[0] == 2.0f);
  });
}

TEST_CASE("shm broadcast from any root and allgather in rank order, across chunks") {
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{3000}}) {
    CAPTURE(count);
    on_ranks(3, small_slots(), [&](ShmCommunicator& comm) {
      for (int root = 0; root < 3; ++root) {
        std::vector<float> data(count, static_cast<float>(comm.rank() == root ? 100 + root : -1));
        comm.broadcast(data.data(), count, root);
        CHECK(std::all_of(data.begin(), data.end(), [&](float v) { return v == 100.0f + root; }));
      }
      std::vector<float> mine(count), all(3 * count, -1.0f);
      for (size_t i = 0; i < count; ++i) mine[i] = value(comm.rank(), i);
      comm.allgather(mine.data(), all.data(), count);
      for (int p = 0; p < 3; ++p)
        for (size_t i = 0; i < count; ++i) REQUIRE(all[p * count + i] == value(p, i));
      comm.barrier();
    });
  }
}

TEST_CASE("a rank that never arrives is named after the timeout, and the communicator stays failed") {
  ShmOptions options = small_slots();
  options.timeout = 1s;
  options.names = {10, 11};  // the job's ranks of this node's members
  std::promise<void> done;
  auto finished = done.get_future().share();
  on_ranks(2, options, [&](ShmCommunicator& comm) {
    if (comm.rank() == 1) {
      finished.wait();  // never joins rank 0's allreduce
      return;
    }
    std::vector<float> data(5, 1.0f);
    const auto start = std::chrono::steady_clock::now();
    try {
      comm.allreduce(data.data(), data.size(), ReduceOp::kSum);
      FAIL("the allreduce returned without rank 1");
    } catch (const CollectiveError& e) {
      const std::string what = e.what();
      CHECK(what.find("allreduce of 5 floats") != std::string::npos);
      CHECK(what.find("rank 10 of 2") != std::string::npos);
      CHECK(what.find("rank(s) 11 did not arrive within 1 s") != std::string::npos);
    }
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    CHECK_THROWS_WITH_AS(comm.barrier(), doctest::Contains("an earlier collective failed"), CollectiveError);
    done.set_value();
  });
}

TEST_CASE("the segment is named for the job and generation and gone from /dev/shm once every rank has it") {
  ShmOptions options = small_slots();
  options.job_id = "job/with odd*chars";
  options.generation = 3;
  std::vector<std::string> names(2);
  on_ranks(2, options, [&](ShmCommunicator& comm) {
    names[comm.rank()] = comm.segment_name();
    comm.barrier();
  });
  CHECK(names[0] == names[1]);
  CHECK(names[0].rfind("/" + ShmSegment::name_prefix(options.job_id) + "g3-", 0) == 0);
  CHECK(names[0].find("job_with_odd_chars") != std::string::npos);
  CHECK_FALSE(in_dev_shm(names[0]));
}

TEST_CASE("two jobs with the same id on one machine get separate segments") {
  std::vector<std::string> names(2);
  std::vector<std::thread> jobs;
  for (int job = 0; job < 2; ++job)
    jobs.emplace_back([&, job] {
      on_ranks(2, small_slots(), [&](ShmCommunicator& comm) {
        std::vector<float> data(3000, static_cast<float>(job + 1));
        comm.allreduce(data.data(), data.size(), ReduceOp::kSum);
        CHECK(data[2999] == 2.0f * (job + 1));
        if (comm.rank() == 0) names[job] = comm.segment_name();
      });
    });
  for (auto& t : jobs) t.join();
  CHECK(names[0] != names[1]);
}

TEST_CASE("a segment left by a creator killed during set-up is removed by the job's next creator") {
  ShmOptions options = small_slots();
  options.job_id = "stale-test";
  const std::string stale = "/" + ShmSegment::name_prefix(options.job_id) + "g0-999999999-0badf00d";
  const std::string alive = "/" + ShmSegment::name_prefix(options.job_id) + "g0-" + std::to_string(getpid()) + "-1";
  for (const auto& name : {stale, alive}) {
    const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    close(fd);
  }
  on_ranks(2, options, [](ShmCommunicator& comm) { comm.barrier(); });
  CHECK_FALSE(in_dev_shm(stale));
  CHECK(in_dev_shm(alive));  // its creator (this process) still runs
  shm_unlink(alive.c_str());
}

TEST_CASE("a bucket reduced where it lies gives allreduce's bits, sum and mean, round after round") {
  for (int world : {2, 3}) {
    for (size_t count : {size_t{1}, size_t{7}, size_t{1025}, size_t{100003}}) {
      CAPTURE(world);
      CAPTURE(count);
      on_ranks(world, small_slots(), [&](ShmCommunicator& comm) {
        auto first = comm.reduce_buffer(count);
        auto second = comm.reduce_buffer(count + 5);  // a second bucket, used in turn with the first
        REQUIRE(first != nullptr);
        REQUIRE(second != nullptr);
        CHECK(first->size() == count);
        CHECK(second->size() == count + 5);
        for (int round = 0; round < 4; ++round) {
          ReduceBuffer& bucket = round % 2 == 0 ? *first : *second;
          const ReduceOp op = round < 2 ? ReduceOp::kSum : ReduceOp::kAvg;
          std::vector<float> plain(bucket.size());
          for (size_t i = 0; i < plain.size(); ++i) plain[i] = bucket.data()[i] = value(comm.rank(), i) + round;
          bucket.allreduce(op);
          comm.allreduce(plain.data(), plain.size(), op);
          REQUIRE(same_bits(std::vector<float>(bucket.data(), bucket.data() + bucket.size()), plain));
        }
      });
    }
  }
}

TEST_CASE("bucket segments are gone from /dev/shm once made, and one rank has no bucket") {
  std::string segment;
  on_ranks(2, small_slots(), [&](ShmCommunicator& comm) {
    auto bucket = comm.reduce_buffer(1000);
    REQUIRE(bucket != nullptr);
    if (comm.rank() == 0) segment = comm.segment_name();
    comm.barrier();
  });
  for (int r = 0; r < 2; ++r) CHECK_FALSE(in_dev_shm(segment + "-b0-r" + std::to_string(r)));
  on_ranks(1, small_slots(), [](ShmCommunicator& comm) { CHECK(comm.reduce_buffer(10) == nullptr); });
}

TEST_CASE("a rank that cannot make its bucket fails on every rank, named, and the communicator goes on") {
  ShmOptions options = small_slots();
  options.names = {4, 5};
  on_ranks(2, options, [&](ShmCommunicator& comm) {
    const std::string taken = comm.segment_name() + "-b0-r1";
    if (comm.rank() == 1) {  // rank 1's bucket name exists already: its O_EXCL create fails
      const int fd = shm_open(taken.c_str(), O_CREAT | O_RDWR, 0600);
      REQUIRE(fd >= 0);
      close(fd);
    }
    comm.barrier();
    try {
      comm.reduce_buffer(100);
      FAIL("reduce_buffer returned with rank 1's bucket unmade");
    } catch (const CollectiveError& e) {
      const std::string what = e.what();
      if (comm.rank() == 0) CHECK(what == "rank(s) 5 could not make a shared-memory bucket");
      else CHECK(what.find(taken + ": shm_open failed: File exists") != std::string::npos);
    }
    comm.barrier();  // each rank removes its own bucket's name before it throws
    CHECK_FALSE(in_dev_shm(comm.segment_name() + "-b0-r0"));
    if (comm.rank() == 1) shm_unlink(taken.c_str());
    std::vector<float> data(10, 1.0f);
    comm.allreduce(data.data(), data.size(), ReduceOp::kSum);
    CHECK(data[9] == 2.0f);
  });
}
