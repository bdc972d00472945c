#include "web_fixture.h"

namespace pg::webtest {

TempDir* WebFixture::dir_ = nullptr;
std::string WebFixture::db_;
LiveServer* WebFixture::server_ = nullptr;
std::vector<pg::Run> WebFixture::runs_;
std::vector<std::string> WebFixture::shas_;
std::string WebFixture::prefix_a_, WebFixture::prefix_b_;

void WebFixture::SetUpTestSuite() {
  dir_ = new TempDir();
  db_ = dir_->file("web.db");
  const SeedSpec spec = standard_spec();
  runs_ = make_runs(spec);
  for (const pg::Run& r : runs_) shas_.push_back(*r.git.commit);
  // Another environment: two commits whose SHAs share "abcd", and a run outside any repository.
  SeedSpec other = spec;
  other.commits = 1;
  other.hostile = false;
  pg::Run a = make_run(other, 0, 5, 0), b = make_run(other, 0, 5, 1),
          nogit = make_run(other, 0, 5, 2);
  prefix_a_ = "abcd" + commit_sha(100).substr(4);
  prefix_b_ = "abcd" + commit_sha(101).substr(4);
  for (pg::Run* r : {&a, &b, &nogit}) r->git.branch = "other";
  a.git.commit = prefix_a_;
  b.git.commit = prefix_b_;
  b.git.time = "2024-02-01T00:00:00Z";
  nogit.git = GitInfo{};
  nogit.git.state = "not-a-repository";
  nogit.git.commit.reset();
  nogit.git.branch.reset();
  nogit.git.subject.reset();
  nogit.git.time.reset();
  nogit.git.repo_path = "/tmp/not-a-repo";
  {
    store::Store s(db_);
    s.import_runs(runs_);
    s.import_runs({a, b, nogit});
  }
  web::ServeOptions opt;
  opt.db_path = db_;
  opt.token = kToken;
  server_ = new LiveServer(opt);
}

void WebFixture::TearDownTestSuite() {
  delete server_;
  delete dir_;
  server_ = nullptr;
  dir_ = nullptr;
  runs_.clear();
  shas_.clear();
}

httplib::Result WebFixture::get(const std::string& target, const httplib::Headers& headers) {
  auto c = server_->client();
  auto r = c->Get(target, headers);
  EXPECT_TRUE(r) << "GET " << target << ": " << httplib::to_string(r.error());
  return r;
}

nlohmann::json WebFixture::get_json(const std::string& target, int expect_status) {
  auto r = get(target);
  if (!r) return nullptr;
  EXPECT_EQ(r->status, expect_status) << target << "\n" << r->body.substr(0, 500);
  EXPECT_NE(r->get_header_value("Content-Type").find("application/json"), std::string::npos)
      << target;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << target << " is not JSON";
  return j;
}

}  // namespace pg::webtest
