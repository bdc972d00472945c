// Readers (export, runs, compare) work on a store that sits on a read-only mount, as the docs
// promise: SQLite cannot create a -shm there, so the store opens it immutable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/errors.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

constexpr int kNoNamespace = 77;

// In a child: a private mount namespace (and a user namespace when not root) in which `dir` is
// bind-mounted read-only, then `body`'s result as exit status.
template <typename F>
int in_read_only_mount(const std::string& dir, F body) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(kNoNamespace);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      _exit(kNoNamespace);
    // Proof that it is read-only before the store is asked anything.
    if (open((dir + "/probe").c_str(), O_CREAT | O_WRONLY, 0644) >= 0) _exit(kNoNamespace);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ReadOnlyMount, ReadersOpenTheStoreAndWritersAreRefusedClearly) {
  test::TempDir dir;
  const std::string db = dir.file("pg.db");
  {
    store::Store w(db);
    test::write_run(w, test::sample_run(0));
    test::write_run(w, test::sample_run(1));
  }  // closed cleanly: the WAL is checkpointed and removed, as after `perfgate run`
  ASSERT_FALSE(std::filesystem::exists(db + "-wal"));

  const int read = in_read_only_mount(dir.str(), [&] {
    try {
      store::Store r(db, /*read_only=*/true);
      const auto runs = r.list_runs({true, true});
      return runs.size() == 2 && runs[1].cells.size() == 3 ? 0 : 10;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "reader: %s\n", e.what());
      return 11;
    }
  });
  if (read == kNoNamespace) GTEST_SKIP() << "no mount namespace here (unshare refused)";
  EXPECT_EQ(read, 0) << "a reader could not read the store on a read-only mount";

  const int write = in_read_only_mount(dir.str(), [&] {
    try {
      store::Store w(db);
      w.begin_run(test::sample_git(), test::sample_env(), "{}");
      return 20;
    } catch (const std::exception& e) {
      // Either error type is right (exit 2 or 4); it must name the file.
      std::fprintf(stderr, "writer: %s\n", e.what());
      return std::string(e.what()).find(db) != std::string::npos ? 0 : 21;
    }
  });
  EXPECT_EQ(write, 0) << "a writer on a read-only mount must fail with a message";
  EXPECT_FALSE(std::filesystem::exists(dir.file("probe")));
}

}  // namespace
}  // namespace pg
