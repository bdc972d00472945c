// Commit links from the git remote a run recorded: no serve flag needed, --repo-url overrides, and
// a credential in a remote URL (from an older client, or a hand-written document) never reaches
// the database or a page.
#include <gtest/gtest.h>

#include "common/git_remote.h"
#include "seed_data.h"
#include "store/run_json.h"
#include "store/store.h"
#include "web_test_util.h"

namespace pg::webtest {
namespace {

TEST(GitRemote, RedactsCredentialsQueryAndFragment) {
  EXPECT_EQ(redact_remote_url("https://user:tok@host.example/o/r.git"),
            "https://host.example/o/r.git");
  EXPECT_EQ(redact_remote_url("https://oauth2:glpat-x@gitlab.example/g/s/r"),
            "https://gitlab.example/g/s/r");
  EXPECT_EQ(redact_remote_url("https://host/o/r.git?private_token=x#y"), "https://host/o/r.git");
  EXPECT_EQ(redact_remote_url("ssh://git@host:2222/o/r.git"), "ssh://host:2222/o/r.git");
  EXPECT_EQ(redact_remote_url("git@github.com:o/r.git"), "git@github.com:o/r.git");
  EXPECT_EQ(redact_remote_url("/srv/git/r.git"), "/srv/git/r.git");
}

TEST(GitRemote, WebUrlOfCommonRemoteForms) {
  EXPECT_EQ(remote_web_url("https://github.com/o/r.git"), "https://github.com/o/r");
  EXPECT_EQ(remote_web_url("git@github.com:o/r.git"), "https://github.com/o/r");
  EXPECT_EQ(remote_web_url("ssh://git@gitlab.example:2222/g/sub/r.git"),
            "https://gitlab.example/g/sub/r");
  EXPECT_EQ(remote_web_url("https://git.example:8443/o/r/"), "https://git.example:8443/o/r");
  EXPECT_FALSE(remote_web_url("/srv/git/r.git"));
  EXPECT_FALSE(remote_web_url("file:///srv/git/r.git"));
  EXPECT_FALSE(remote_web_url("https://host/"));
  EXPECT_FALSE(remote_web_url("https://host/o/r\"><script>"));
}

class RepoLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("links.db");
    store::Store store(db_);
    SeedSpec spec;
    spec.commits = 3;
    spec.envs = 1;
    spec.models = {"tiny"};
    spec.batch_sizes = {1};
    spec.seq_lens = {64};
    auto runs = make_runs(spec);
    // The latest run names the remote, with a token in it as an older client would send it.
    runs.back().git.remote = "https://ci-bot:ghp_SECRETtoken123@git.example.com/org/model.git";
    for (const auto& r : store.import_runs(runs)) ids_.push_back(r.id);
    sha_ = *runs.back().git.commit;
    first_ = *runs.front().git.commit;
  }
  std::string page(LiveServer& s, const std::string& target) {
    auto r = s.client()->Get(target);
    EXPECT_TRUE(r && r->status == 200) << target;
    return r ? r->body : "";
  }
  TempDir dir_;
  std::string db_, sha_, first_;
  std::vector<int64_t> ids_;
};

TEST_F(RepoLinks, ShasLinkToTheRecordedRemoteAndNoCredentialIsStoredOrShown) {
  {
    store::Store store(db_);
    auto run = store.load_run(ids_.back(), {false, false});
    ASSERT_TRUE(run && run->git.remote);
    EXPECT_EQ(*run->git.remote, "https://git.example.com/org/model.git");
  }
  web::ServeOptions opt;
  opt.db_path = db_;
  LiveServer s(opt);
  const std::string link = "https://git.example.com/org/model/commit/" + sha_;
  const std::string run_page = page(s, "/runs/" + std::to_string(ids_.back()));
  EXPECT_NE(run_page.find(link), std::string::npos);
  EXPECT_NE(page(s, "/compare?base=" + first_ + "&head=" + sha_).find(link), std::string::npos);
  for (const std::string& t :
       std::vector<std::string>{"/", "/runs/" + std::to_string(ids_.back()), "/api/v1/runs",
                                "/api/v1/runs/" + std::to_string(ids_.back())})
    EXPECT_EQ(page(s, t).find("SECRETtoken"), std::string::npos) << t;
}

TEST_F(RepoLinks, RepoUrlFlagOverridesTheRemote) {
  web::ServeOptions opt;
  opt.db_path = db_;
  opt.repo_url = "https://mirror.example/org/model";
  LiveServer s(opt);
  const std::string run_page = page(s, "/runs/" + std::to_string(ids_.back()));
  EXPECT_NE(run_page.find("https://mirror.example/org/model/commit/" + sha_), std::string::npos);
  EXPECT_EQ(run_page.find("git.example.com/org/model/commit"), std::string::npos);
}

}  // namespace
}  // namespace pg::webtest
