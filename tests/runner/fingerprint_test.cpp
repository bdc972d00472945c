// The git part of the fingerprint, read with libgit2 from real repositories the git CLI makes.
#include <gtest/gtest.h>

#include <regex>

#include "common/errors.h"
#include "common/version.h"
#include "e2e_process.h"
#include "runner/fingerprint.h"
#include "runner/text.h"

namespace pg {
namespace {

using pgtest::git;
using pgtest::TempDir;
using pgtest::trim;
using pgtest::write_file;

bool is_sha(const std::optional<std::string>& s) {
  return s && std::regex_match(*s, std::regex("[0-9a-f]{40}"));
}

// A repository on branch main with one commit made at a fixed time in a +02:00 zone.
void make_repo_with_commit(const TempDir& dir, const std::string& message = "first line\n\nbody") {
  git(dir.path(), {"init", "-q"});
  write_file(dir / "a.txt", "hello\n");
  git(dir.path(), {"add", "a.txt"});
  write_file(dir / "msg", message);
  git(dir.path(), {"commit", "-q", "-F", "msg"},
      {"GIT_COMMITTER_DATE=2024-01-02T03:04:05+02:00",
       "GIT_AUTHOR_DATE=2024-01-02T03:04:05+02:00"});
  std::filesystem::remove(dir / "msg");
}

TEST(Fingerprint, CleanRepository) {
  TempDir dir;
  make_repo_with_commit(dir);
  const GitInfo g = runner::read_git_info(dir.str());
  EXPECT_EQ(g.state, "ok");
  ASSERT_TRUE(is_sha(g.commit));
  EXPECT_EQ(*g.commit, trim(git(dir.path(), {"rev-parse", "HEAD"}).out));
  EXPECT_EQ(g.branch, "main");
  EXPECT_EQ(g.subject, "first line");
  EXPECT_EQ(g.time, "2024-01-02T01:04:05Z");  // the same instant in UTC
  EXPECT_FALSE(g.dirty);
  EXPECT_EQ(g.repo_path, dir.str());
}

TEST(Fingerprint, OriginRemoteIsKeptWithoutItsCredentials) {
  TempDir dir;
  make_repo_with_commit(dir);
  EXPECT_FALSE(runner::read_git_info(dir.str()).remote) << "no origin: nothing to link to";
  git(dir.path(), {"remote", "add", "origin",
                   "https://ci-bot:ghp_SECRETtoken123@git.example.com/org/model.git"});
  const GitInfo g = runner::read_git_info(dir.str());
  ASSERT_TRUE(g.remote);
  EXPECT_EQ(*g.remote, "https://git.example.com/org/model.git");
  git(dir.path(), {"remote", "set-url", "origin", "git@github.com:org/model.git"});
  EXPECT_EQ(runner::read_git_info(dir.str()).remote, "git@github.com:org/model.git");
}

TEST(Fingerprint, UntrackedFilesDoNotMakeItDirtyTrackedChangesDo) {
  TempDir dir;
  make_repo_with_commit(dir);
  write_file(dir / "perfgate.db", "untracked");
  EXPECT_FALSE(runner::read_git_info(dir.str()).dirty);

  write_file(dir / "a.txt", "changed\n");  // modified in the work tree
  EXPECT_TRUE(runner::read_git_info(dir.str()).dirty);
  git(dir.path(), {"checkout", "-q", "--", "a.txt"});
  EXPECT_FALSE(runner::read_git_info(dir.str()).dirty);

  write_file(dir / "b.txt", "new\n");  // staged new file
  git(dir.path(), {"add", "b.txt"});
  EXPECT_TRUE(runner::read_git_info(dir.str()).dirty);
  git(dir.path(), {"reset", "-q"});
  EXPECT_FALSE(runner::read_git_info(dir.str()).dirty);

  std::filesystem::remove(dir / "a.txt");  // deleted tracked file
  EXPECT_TRUE(runner::read_git_info(dir.str()).dirty);
}

TEST(Fingerprint, DetachedHeadAndBranchNames) {
  TempDir dir;
  make_repo_with_commit(dir);
  git(dir.path(), {"checkout", "-q", "-b", "feature/fast-decode"});
  EXPECT_EQ(runner::read_git_info(dir.str()).branch, "feature/fast-decode");
  const std::string head = trim(git(dir.path(), {"rev-parse", "HEAD"}).out);
  git(dir.path(), {"checkout", "-q", "--detach"});
  const GitInfo g = runner::read_git_info(dir.str());
  EXPECT_EQ(g.state, "ok");
  EXPECT_EQ(g.branch, "detached");
  EXPECT_EQ(g.commit, head);
  EXPECT_EQ(g.subject, "first line");
}

TEST(Fingerprint, NoCommitYet) {
  TempDir dir;
  git(dir.path(), {"init", "-q"});
  write_file(dir / "a.txt", "x");
  const GitInfo g = runner::read_git_info(dir.str());
  EXPECT_EQ(g.state, "no-commit");
  EXPECT_FALSE(g.commit);
  EXPECT_FALSE(g.branch);
  EXPECT_FALSE(g.subject);
  EXPECT_FALSE(g.time);
  EXPECT_FALSE(g.dirty);  // only an untracked file
  EXPECT_EQ(g.repo_path, dir.str());
  git(dir.path(), {"add", "a.txt"});
  EXPECT_TRUE(runner::read_git_info(dir.str()).dirty);
}

TEST(Fingerprint, NotARepository) {
  TempDir dir;
  // Only meaningful when the temporary directory is not itself inside some repository.
  const auto probe = pgtest::run({"git", "rev-parse", "--git-dir"}, {dir.str(), {}, "/dev/null"});
  if (probe.exit_code == 0) GTEST_SKIP() << "the temp directory lies inside a git repository";
  std::filesystem::create_directory(dir / "sub");
  const GitInfo g = runner::read_git_info((dir / "sub").string());
  EXPECT_EQ(g.state, "not-a-repository");
  EXPECT_FALSE(g.commit);
  EXPECT_FALSE(g.branch);
  EXPECT_FALSE(g.subject);
  EXPECT_FALSE(g.time);
  EXPECT_FALSE(g.dirty);
  EXPECT_EQ(g.repo_path, (dir / "sub").string());
}

TEST(Fingerprint, SubdirectoryFindsTheRepositoryAbove) {
  TempDir dir;
  make_repo_with_commit(dir);
  std::filesystem::create_directories(dir / "src" / "deep");
  const GitInfo g = runner::read_git_info((dir / "src" / "deep").string());
  EXPECT_EQ(g.state, "ok");
  EXPECT_EQ(g.repo_path, dir.str());
  EXPECT_TRUE(is_sha(g.commit));
}

TEST(Fingerprint, LinkedWorktree) {
  TempDir dir;
  make_repo_with_commit(dir);
  const std::string wt = (dir / "wt").string();
  git(dir.path(), {"worktree", "add", "-q", "-b", "side", wt});
  const GitInfo g = runner::read_git_info(wt);
  EXPECT_EQ(g.state, "ok");
  EXPECT_EQ(g.branch, "side");
  EXPECT_EQ(g.repo_path, wt);
}

TEST(Fingerprint, InvalidUtf8SubjectIsNeverRawBytes) {
  TempDir dir;
  make_repo_with_commit(dir);
  // `git commit` repairs bad UTF-8 itself, so write the raw commit object (as other tools may).
  const std::string tree = trim(git(dir.path(), {"rev-parse", "HEAD^{tree}"}).out);
  write_file(dir / "obj",
             "tree " + tree +
                 "\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000"
                 "\n\nspeed \xff\xfe up\x1b[31m\nmore\n");
  const std::string sha =
      trim(pgtest::run({"git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"},
                       {dir.str(), {}, (dir / "obj").string()})
               .out);
  ASSERT_EQ(sha.size(), 40u);
  git(dir.path(), {"update-ref", "refs/heads/main", sha});
  const GitInfo g = runner::read_git_info(dir.str());
  EXPECT_EQ(g.commit, sha);
  ASSERT_TRUE(g.subject);
  EXPECT_EQ(*g.subject, runner::to_valid_utf8(*g.subject));
  EXPECT_EQ(*g.subject, "speed \xEF\xBF\xBD\xEF\xBF\xBD up\xEF\xBF\xBD[31m");
  EXPECT_EQ(g.time, "2023-11-14T22:13:20Z");
}

TEST(Text, Utf8Repair) {
  EXPECT_EQ(runner::to_valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(runner::to_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80");
  EXPECT_EQ(runner::to_valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(runner::to_valid_utf8("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");                           // surrogate
  EXPECT_EQ(runner::to_valid_utf8("a\xE2\x82"), "a\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
  EXPECT_EQ(runner::to_valid_utf8(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(Fingerprint, HostEnvironment) {
  const Environment env = runner::host_environment();
  for (const char* k : {"cpu", "hostname", "os", "compiler", "build_type", "perfgate"}) {
    ASSERT_TRUE(env.count(k)) << k;
    EXPECT_FALSE(env.at(k).empty()) << k;
  }
  EXPECT_EQ(env.at("perfgate"), kVersion);
  EXPECT_NE(env.at("os").find("Linux"), std::string::npos);
  const Environment run = runner::run_environment("cpu");
  EXPECT_EQ(run.at("hostname"), env.at("hostname"));
  EXPECT_TRUE(run.count("device"));  // from the device side
}

}  // namespace
}  // namespace pg
