#pragma once
// ShmSegment: one POSIX shared-memory segment mapped by every rank of a node, set up through the
// job's key-value store. The group's first rank creates it (O_EXCL, its size reserved with
// posix_fallocate so a full /dev/shm is an error now rather than a SIGBUS later) and publishes
// its name; the others open and map it and say so; then the creator unlinks the name. From
// then on only the mappings keep it alive, so no exit path, SIGKILL included, leaves an entry in
// /dev/shm. Names are `paddle-<job>-g<generation>-<pid>-<random>`: the job and restart count
// for whoever looks at /dev/shm, the creator's pid and a random part so that two jobs, or two
// generations of one, never meet. Only a creator killed during the set-up leaves its name; the
// next creator of the same job removes names whose creator pid no longer exists.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace paddle::collective {

struct ShmSegmentConfig {
  std::string key_prefix;  // store keys of this group, e.g. "shm/node0"
  int index = 0;           // this rank's place in the group; 0 creates
  int group_size = 1;
  std::string job_id = "default";  // PADDLE_JOB_ID
  long generation = 0;             // PADDLE_RESTART_COUNT
  std::chrono::milliseconds timeout{300000};
};

class ShmSegment {
 public:
  // Returns once every rank of the group has mapped `bytes` bytes and the name is unlinked.
  // Throws CollectiveError naming the segment and the cause.
  ShmSegment(const ShmSegmentConfig& config, gloo::rendezvous::Store& store, size_t bytes);
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

  // The name's prefix for a job: every segment of `job_id` starts with it.
  static std::string name_prefix(const std::string& job_id);

  // Without a store, for ranks that agree on a name by other means (a communicator's own
  // segment): create() makes `name` (O_EXCL, reserved), open() maps one of exactly `bytes`; the
  // creator calls unlink() once every rank has it. Throw CollectiveError naming the segment.
  static std::unique_ptr<ShmSegment> create(const std::string& name, size_t bytes);
  static std::unique_ptr<ShmSegment> open(const std::string& name, size_t bytes);
  void unlink() const;

 private:
  ShmSegment(std::string name, size_t bytes) : name_(std::move(name)), size_(bytes) {}
  int create_file();  // name_ made and size_ reserved: its fd
  void open_file();   // name_ mapped, checked to hold size_ bytes
  void create_published(const ShmSegmentConfig& config, gloo::rendezvous::Store& store);
  void open_published(const ShmSegmentConfig& config, gloo::rendezvous::Store& store);
  void map(int fd);

  std::string name_;
  void* data_ = nullptr;
  size_t size_;
};

}  // namespace paddle::collective
