// The one atomic writer of output files (--json, --csv, compare --output): replaces regular files
// only, follows symlinks on purpose, and fails cleanly (target untouched) when the disk refuses.
#include "store/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/errors.h"
#include "test_util.h"

namespace pg {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AtomicFile, WritesAndReplacesKeepingPermissions) {
  test::TempDir dir;
  const std::string path = dir.file("out.json");
  store::write_file_atomically(path, "one", "--json");
  EXPECT_EQ(test::read_bytes(path), "one");
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  store::write_file_atomically(path, "two", "--json");
  EXPECT_EQ(test::read_bytes(path), "two");
  EXPECT_EQ(fs::status(path).permissions(), fs::perms(0640));
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.json"});  // no temporary left
}

TEST(AtomicFile, ReplacesTheTargetOfASymlinkAndKeepsTheLink) {
  test::TempDir dir;
  fs::create_directory(dir / "real");
  test::write_bytes(dir.file("real/report.md"), "old");
  fs::create_symlink("real/report.md", dir / "hop");  // relative, resolved against its directory
  fs::create_symlink(dir / "hop", dir / "report.md");
  store::write_file_atomically(dir.file("report.md"), "new", "--output");
  EXPECT_TRUE(fs::is_symlink(dir / "report.md"));
  EXPECT_TRUE(fs::is_symlink(dir / "hop"));
  EXPECT_EQ(test::read_bytes(dir.file("real/report.md")), "new");
  // A dangling link creates its target.
  fs::create_symlink("real/fresh.csv", dir / "fresh.csv");
  store::write_file_atomically(dir.file("fresh.csv"), "a,b\n", "--csv");
  EXPECT_EQ(test::read_bytes(dir.file("real/fresh.csv")), "a,b\n");
  EXPECT_EQ(names_in(dir / "real"), (std::vector<std::string>{"fresh.csv", "report.md"}));
}

TEST(AtomicFile, RefusesWhatIsNotARegularFile) {
  test::TempDir dir;
  fs::create_directory(dir / "sub");
  fs::create_symlink(dir / "sub", dir / "to_dir");
  fs::create_symlink("loop", dir / "loop");
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0600), 0);
  for (const std::string& target : {dir.file("sub"), dir.file("to_dir"), dir.file("fifo"),
                                    dir.file("loop"), std::string("/dev/null")}) {
    try {
      store::write_file_atomically(target, "x", "--json");
      ADD_FAILURE() << "wrote to " << target;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--json '" + target + "'"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_directory(dir / "sub"));
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));
  EXPECT_THROW(store::write_file_atomically(dir.file("no/such/dir/x"), "x", "--csv"), UsageError);
}

// `ulimit -f`: with SIGXFSZ ignored (as perfgate's main does) write() fails with EFBIG, which
// must surface as a RuntimeFailure naming the file, with the old content left in place.
TEST(AtomicFile, FileSizeLimitIsARuntimeFailureAndLeavesTheTarget) {
  test::TempDir dir;
  const std::string path = dir.file("big.json");
  test::write_bytes(path, "old");
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{1024, 1024};
    setrlimit(RLIMIT_FSIZE, &lim);
    try {
      store::write_file_atomically(path, std::string(4096, 'x'), "--json");
    } catch (const RuntimeFailure& e) {
      const std::string m = e.what();
      _exit(m.find(path) != std::string::npos && m.find("File too large") != std::string::npos ? 0
                                                                                               : 2);
    } catch (...) {
      _exit(3);
    }
    _exit(1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(test::read_bytes(path), "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"big.json"});
}

}  // namespace
}  // namespace pg
