// Revision resolution against a real temporary git repository and a real SQLite store.
#include <gtest/gtest.h>

#include "app/revision.h"
#include "ci_fixtures.h"
#include "common/errors.h"
#include "store/store.h"

namespace pg {
namespace {

using test::git;

// History: c1 (tag v1) -- c2 -- c3 on main; f1 on feature, branched from c1.
class RevisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = dir / "repo";
    test::git_init(repo);
    c1 = test::git_commit(repo, "a.txt", "1", "c1");
    git(repo, {"tag", "-a", "v1", "-m", "release 1"});
    c2 = test::git_commit(repo, "a.txt", "2", "c2");
    c3 = test::git_commit(repo, "a.txt", "3", "c3");
    git(repo, {"checkout", "-q", "-b", "feature", c1});
    f1 = test::git_commit(repo, "b.txt", "f", "f1");
    git(repo, {"checkout", "-q", "main"});

    store = std::make_unique<store::Store>(dir / "perfgate.db");
    for (const std::string& sha : std::vector<std::string>{c2, kStoredA, kStoredB, kStoredC}) {
      store->import_run(
          test::synthetic_run(sha, {test::cpu_key(1, 16)}, {1.0, 1.1, 0.9}, test::cpu_env()));
    }
    ctx = app::RevisionContext{store.get(), repo, "main"};
  }

  // Stored only in the database (never in git): two share the prefix "abcd".
  static constexpr const char* kStoredA = "abcd111111111111111111111111111111111111";
  static constexpr const char* kStoredB = "abcd222222222222222222222222222222222222";
  static constexpr const char* kStoredC = "fedc333333333333333333333333333333333333";

  test::TempDir dir;
  std::string repo, c1, c2, c3, f1;
  std::unique_ptr<store::Store> store;
  app::RevisionContext ctx;
};

TEST_F(RevisionTest, BranchResolvesThroughGit) {
  app::ResolvedRevision r = app::resolve_revision("feature", ctx);
  EXPECT_EQ(r.sha, f1);
  EXPECT_EQ(r.source, "git");
  EXPECT_EQ(app::resolve_revision("main", ctx).sha, c3);
}

TEST_F(RevisionTest, AnnotatedTagPeelsToItsCommit) {
  EXPECT_EQ(app::resolve_revision("v1", ctx).sha, c1);
}

TEST_F(RevisionTest, RelativeRevision) {
  EXPECT_EQ(app::resolve_revision("HEAD~1", ctx).sha, c2);
  EXPECT_EQ(app::resolve_revision("HEAD", ctx).sha, c3);
}

TEST_F(RevisionTest, StoredFullShaAndUniquePrefixComeFromTheDatabase) {
  app::ResolvedRevision full = app::resolve_revision(kStoredC, ctx);
  EXPECT_EQ(full.sha, kStoredC);
  EXPECT_EQ(full.source, "database");
  app::ResolvedRevision prefix = app::resolve_revision("fedc33", ctx);
  EXPECT_EQ(prefix.sha, kStoredC);
  EXPECT_EQ(prefix.source, "database");
  // Upper case is the same hex.
  EXPECT_EQ(app::resolve_revision("FEDC33", ctx).sha, kStoredC);
  // A real commit that is also stored is found in the database first.
  EXPECT_EQ(app::resolve_revision(c2.substr(0, 10), ctx).source, "database");
}

TEST_F(RevisionTest, AmbiguousStoredPrefixIsAUsageErrorListingTheCandidates) {
  try {
    app::resolve_revision("abcd", ctx);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("ambiguous"), std::string::npos) << msg;
    EXPECT_NE(msg.find(kStoredA), std::string::npos) << msg;
    EXPECT_NE(msg.find(kStoredB), std::string::npos) << msg;
  }
  EXPECT_EQ(app::resolve_revision("abcd1", ctx).sha, kStoredA);
}

TEST_F(RevisionTest, ShortShaOnlyInGitResolvesThroughGit) {
  app::ResolvedRevision r = app::resolve_revision(f1.substr(0, 9), ctx);
  EXPECT_EQ(r.sha, f1);
  EXPECT_EQ(r.source, "git");
}

TEST_F(RevisionTest, UnknownRevisionIsAUsageErrorNamingIt) {
  try {
    app::resolve_revision("no-such-branch", ctx);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-branch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(app::resolve_revision("", ctx), UsageError);
  EXPECT_THROW(app::resolve_revision("merge-base", ctx), UsageError);
  // A hex prefix that neither the database nor git knows.
  EXPECT_THROW(app::resolve_revision("0123456789", ctx), UsageError);
}

TEST_F(RevisionTest, MergeBaseOfHeadAndMain) {
  app::ResolvedRevision r = app::resolve_merge_base(f1, ctx);
  EXPECT_EQ(r.sha, c1);
  EXPECT_EQ(r.source, "merge-base");
  // Head on main itself: the merge-base is head.
  EXPECT_EQ(app::resolve_merge_base(c3, ctx).sha, c3);
}

TEST_F(RevisionTest, MergeBaseFallsBackToTheRemoteTrackingBranch) {
  // A CI checkout often has origin/<main> but no local <main>.
  git(repo, {"update-ref", "refs/remotes/origin/trunk", c2});
  app::RevisionContext remote_ctx{store.get(), repo, "trunk"};
  EXPECT_EQ(app::resolve_merge_base(f1, remote_ctx).sha, c1);
}

TEST_F(RevisionTest, MergeBaseErrors) {
  app::RevisionContext bad_main{store.get(), repo, "no-such-main"};
  EXPECT_THROW(app::resolve_merge_base(f1, bad_main), UsageError);
  // Head known only to the database, not to git.
  EXPECT_THROW(app::resolve_merge_base(kStoredC, ctx), UsageError);
  // Unrelated history: an orphan branch has no common ancestor with main.
  git(repo, {"checkout", "-q", "--orphan", "island"});
  std::string orphan = test::git_commit(repo, "c.txt", "x", "island");
  EXPECT_THROW(app::resolve_merge_base(orphan, ctx), UsageError);
}

TEST_F(RevisionTest, OutsideAGitRepository) {
  test::TempDir plain;
  app::RevisionContext no_git{store.get(), plain.path(), "main"};
  EXPECT_EQ(app::resolve_revision("fedc3", no_git).sha, kStoredC);
  EXPECT_THROW(app::resolve_revision("main", no_git), UsageError);
  EXPECT_THROW(app::resolve_merge_base(f1, no_git), UsageError);
  // A full SHA nobody knows is still unambiguous: the gate reports it has no stored run.
  const std::string unknown = "0000000000000000000000000000000000000001";
  app::ResolvedRevision r = app::resolve_revision(unknown, no_git);
  EXPECT_EQ(r.sha, unknown);
  EXPECT_EQ(r.source, "sha");
}

}  // namespace
}  // namespace pg
