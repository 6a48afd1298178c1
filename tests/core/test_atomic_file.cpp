// Every output goes through AtomicFile: what it writes over, what it refuses,
// the modes it leaves and what a signal leaves behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>

#include "hetstencil/error.hpp"
#include "core/atomic_file.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hetstencil_atomic_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write_file(const std::string& path, const std::string& text) {
    AtomicFile f(path);
    f.write(text.data(), text.size());
    f.commit();
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Files whose names say they are temporaries.
  int temporaries() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string().find(".tmp") != std::string::npos;
    return n;
  }
  static mode_t mode_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  // The message of the InvalidArgument that writing `path` throws ("" if none).
  static std::string refusal(const std::string& path) {
    try {
      write_file(path, "x");
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesThroughASymlinkWhichStaysALink) {
  const fs::path target = dir_ / "target.txt", link = dir_ / "link.txt";
  write_file(target, "old");
  fs::create_symlink("target.txt", link);  // relative, as users make them
  write_file(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new");
  // A dangling link creates its target.
  const fs::path dangling = dir_ / "dangling.txt";
  fs::create_symlink(dir_ / "made.txt", dangling);
  write_file(dangling, "made");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read(dir_ / "made.txt"), "made");
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(AtomicFileTest, RefusesWhatIsNotARegularFileNamingIt) {
  const std::string folder = refusal(dir_.string());
  EXPECT_NE(folder.find(dir_.string()), std::string::npos) << folder;
  EXPECT_NE(folder.find("is a directory"), std::string::npos) << folder;

  // A device node: as root, a node of the test's own like /dev/null (a faulty
  // writer must not replace the machine's); otherwise /dev/null itself.
  std::string device = "/dev/null";
  if (geteuid() == 0) {
    device = (dir_ / "null").string();
    ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  const std::string null = refusal(device);
  EXPECT_NE(null.find("'" + device + "'"), std::string::npos) << null;
  EXPECT_NE(null.find("not a regular file"), std::string::npos) << null;
  struct stat st {};
  ASSERT_EQ(stat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node is left as it is";

  // A FIFO is refused without being opened: opening it would wait for a reader.
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  auto refused = std::async(std::launch::async, [&] { return refusal(fifo.string()); });
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "writing a FIFO blocked";
  EXPECT_NE(refused.get().find("not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_fifo(fifo));

  // Through a link too.
  fs::create_symlink(device, dir_ / "to_null");
  EXPECT_NE(refusal((dir_ / "to_null").string()).find("a link to '" + device + "'"), std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(AtomicFileTest, ARefusedReadOnlyFileIsLeftAsItWas) {
  const fs::path path = dir_ / "read_only.txt";
  write_file(path, "keep me");
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  const std::string why = refusal(path.string());
  EXPECT_NE(why.find(path.string()), std::string::npos) << why;
  EXPECT_NE(why.find("read-only"), std::string::npos) << why;
  EXPECT_EQ(read(path), "keep me");
  EXPECT_EQ(mode_of(path), 0444u);
}

TEST_F(AtomicFileTest, ReplacedFileKeepsItsModeAndNewFilesGetTheUmasksMode) {
  const fs::path kept = dir_ / "kept.txt";
  write_file(kept, "a");
  ASSERT_EQ(chmod(kept.c_str(), 0640), 0);
  write_file(kept, "b");
  EXPECT_EQ(read(kept), "b");
  EXPECT_EQ(mode_of(kept), 0640u);

  const mode_t old = umask(022);
  write_file(dir_ / "new_022.txt", "c");
  umask(027);
  write_file(dir_ / "new_027.txt", "d");
  umask(old);
  EXPECT_EQ(mode_of(dir_ / "new_022.txt"), 0644u);
  EXPECT_EQ(mode_of(dir_ / "new_027.txt"), 0640u);
}

TEST_F(AtomicFileTest, ASignalDuringTheWriteLeavesNoTemporaryFile) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const fs::path path = dir_ / ("signalled_" + std::to_string(sig) + ".txt");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      AtomicFile f(path.string());
      f.write("partial", 7);
      raise(sig);
      _exit(0);  // not reached: the signal's default action ends the process
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the signal still ends the process (" << sig << ")";
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), sig);
    }
    EXPECT_EQ(temporaries(), 0) << "signal " << sig;
    EXPECT_FALSE(fs::exists(path));
  }
}

TEST_F(AtomicFileTest, AnInterruptedWriteLeavesTheOldFileWhole) {
  const fs::path path = dir_ / "whole.txt";
  write_file(path, "old contents");
  {
    AtomicFile f(path.string());
    f.write("new", 3);
  }  // destroyed uncommitted
  EXPECT_EQ(read(path), "old contents");
  EXPECT_EQ(temporaries(), 0);
}

}  // namespace
}  // namespace hetstencil
