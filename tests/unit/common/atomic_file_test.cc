#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/checksum.h"
#include "common/error.h"
#include "common/file.h"

using namespace paddle::common;
namespace fs = std::filesystem;

TEST_CASE("a streamed file: pieces small and large, the running CRC, and the target replaced only at commit") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-stream-" + std::to_string(::getpid()));
  const fs::path file = dir / "ps-server-0.bin";
  fs::create_directories(dir);
  std::ofstream(file) << "the old file";
  std::string expected;
  {
    AtomicFile out(file);
    for (int i = 0; i < 300000; ++i) {  // 2.6 MB of small writes: several buffers' worth
      const std::string piece = std::to_string(i) + ",";
      out.stream() << piece;
      expected += piece;
    }
    const std::string big(3 << 20, 'x');  // larger than the buffer: straight to the file
    out.stream().write(big.data(), static_cast<std::streamsize>(big.size()));
    expected += big;
    CHECK(out.crc() == crc32(expected));
    CHECK(read_file(file).value_or("") == "the old file");  // nothing replaced before commit
    out.append_checksum();
    out.commit();
  }
  const std::string written = read_file(file).value_or("");
  REQUIRE(written.size() == expected.size() + 4);
  CHECK(written.substr(0, expected.size()) == expected);
  const uint32_t crc = crc32(expected);
  for (int i = 0; i < 4; ++i) CHECK(static_cast<unsigned char>(written[expected.size() + i]) == ((crc >> (8 * i)) & 0xFF));
  CHECK(crc32(crc32(std::string_view(expected).substr(0, 1000)), std::string_view(expected).substr(1000)) == crc);
  CHECK_FALSE(fs::exists(file.string() + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("a streamed file abandoned by an exception leaves the old file and no temporary") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-abandon-" + std::to_string(::getpid()));
  const fs::path file = dir / "ps-server-0.bin";
  fs::create_directories(dir);
  std::ofstream(file) << "the old file";
  try {
    AtomicFile out(file);
    out.stream() << std::string(5 << 20, 'y');
    throw std::runtime_error("a table failed halfway");
  } catch (const std::runtime_error&) {
  }
  CHECK(read_file(file).value_or("") == "the old file");
  CHECK_FALSE(fs::exists(file.string() + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("a streamed write that fails names the target and the reason") {
  if (!fs::exists("/dev/full")) return;
  // /dev/full as the temporary file: every write fails with ENOSPC. The target is a link to it.
  const fs::path dir = fs::temp_directory_path() / ("atomic-full-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::create_symlink("/dev/full", dir / "model.bin.tmp");
  const std::string named = (dir / "model.bin").string() + ": cannot write: No space left on device";
  AtomicFile out(dir / "model.bin");
  CHECK_THROWS_WITH_AS(out.stream() << std::string(2 << 20, 'z'), doctest::Contains(named.c_str()), DataError);
  fs::remove_all(dir);
}

TEST_CASE("an empty streamed file, written from no data at all") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-empty-" + std::to_string(::getpid()));
  AtomicFile out(dir / "empty");
  out.stream().write(nullptr, 0);
  out.commit();
  CHECK(fs::file_size(dir / "empty") == 0);
  fs::remove_all(dir);
}

TEST_CASE("a readers-only write replaces the target whole, without waiting for the disk") {
  const fs::path dir = fs::temp_directory_path() / ("atomic-readers-" + std::to_string(::getpid()));
  for (const std::string text : {"first version\n", "second\n"}) {
    AtomicFile out(dir / "job.json", Durability::kReadersOnly);
    out.stream() << text;
    out.commit();
    std::ifstream in(dir / "job.json");
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == text);
  }
  CHECK_FALSE(fs::exists(dir / "job.json.tmp"));
  fs::remove_all(dir);
}
