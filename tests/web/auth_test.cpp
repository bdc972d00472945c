// Who may triage, and who did: named credentials by role, the legacy --token-file token, and an
// SSO proxy's user header believed only from a trusted peer -- each against a real database and a
// live server on loopback. Every triage event records the authenticated name.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"
#include "web/http/trusted_proxy.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class Auth : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("credentials.db");
    store::Store s(db_);
    SeedSpec spec = standard_spec();  // 30% slower from commit 8: four open regressions
    spec.envs = 2;
    s.import_runs(make_runs(spec));
    ingest_ = s.add_credential("ci-main", "ingest").token;
    triage_ = s.add_credential("ana", "triage").token;
    admin_ = s.add_credential("ops", "admin").token;
  }
  void start(const std::string& auth_header = "", const std::string& trusted_proxy = "") {
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;  // the legacy credential, beside the named ones
    opt.auth_header = auth_header;
    opt.trusted_proxy = trusted_proxy;
    server_ = std::make_unique<LiveServer>(opt);
  }
  // A triage of the first listed regression; `extra` headers (the proxy's), the bearer token.
  httplib::Result triage(const std::string& token, const char* action = "acknowledge",
                         httplib::Headers extra = {}, const char* type = "application/json") {
    auto j = get_json(*server_, "/api/v1/regressions");
    nlohmann::json body = {{"series_id", j["regressions"][0]["series_id"]},
                           {"commit", j["regressions"][0]["commit"]},
                           {"action", action},
                           {"author", "mallory"}};  // what a writer says is never recorded
    if (!token.empty()) extra.emplace("Authorization", "Bearer " + token);
    auto r = server_->client()->Post("/api/v1/regressions", extra, body.dump(), type);
    EXPECT_TRUE(r);
    return r;
  }
  httplib::Result ingest(const std::string& token) {
    SeedSpec spec = standard_spec();
    spec.first_commit = 1000 + static_cast<int>(store::Store(db_).run_count());
    const std::string doc = store::runs_to_json({make_run(spec, 1, 0, 0)}, true);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto r = server_->client()->Post("/api/v1/runs", h, doc, "application/json");
    EXPECT_TRUE(r);
    return r;
  }
  nlohmann::json last_event() {
    auto regs = get_json(*server_, "/api/v1/regressions")["regressions"];
    nlohmann::json last;
    for (const auto& r : regs)
      for (const auto& e : r["events"])
        if (last.is_null() || e["id"] > last["id"]) last = e;
    return last;
  }
  size_t events() { return store::Store(db_).regression_events().size(); }

  TempDir dir_;
  std::string db_, ingest_, triage_, admin_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(Auth, ATriageTokenAcknowledgesAndTheEventShowsItsName) {
  start();
  auto r = triage(triage_);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["author"], "ana");
  const auto e = last_event();
  EXPECT_EQ(e["author"], "ana");
  EXPECT_EQ(e["via"], "token");
  EXPECT_EQ(get_json(*server_, "/api/v1/regressions")["acknowledged"], 1);
  const auto stored = store::Store(db_).regression_events();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].author, "ana");
  // Its last use is recorded; the ones not used stay "never".
  for (const auto& c : store::Store(db_).credentials())
    EXPECT_EQ(c.last_used_at.has_value(), c.name == "ana") << c.name;
}

TEST_F(Auth, AnIngestTokenCannotTriage) {
  start();
  auto r = triage(ingest_);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_NE(r->body.find("role ingest"), std::string::npos) << r->body;
  EXPECT_NE(r->get_header_value("WWW-Authenticate").find("insufficient_scope"), std::string::npos);
  EXPECT_EQ(events(), 0u);
}

TEST_F(Auth, ATriageTokenCannotIngestButAnIngestOrAdminTokenCan) {
  start();
  const int64_t before = store::Store(db_).run_count();
  auto r = ingest(triage_);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(store::Store(db_).run_count(), before);
  r = ingest(ingest_);
  EXPECT_EQ(r->status, 201) << r->body;
  r = ingest(admin_);
  EXPECT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(store::Store(db_).run_count(), before + 2);
  r = triage(admin_);
  EXPECT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(last_event()["author"], "ops");
}

TEST_F(Auth, ARevokedTokenIs401FromItsNextRequest) {
  start();
  ASSERT_EQ(triage(triage_)->status, 201);
  store::Store(db_).revoke_credential("ana");  // as `perfgate token revoke` does, beside the server
  auto r = triage(triage_, "fix");
  EXPECT_EQ(r->status, 401) << r->body;
  EXPECT_NE(r->body.find("revoked"), std::string::npos) << r->body;
  store::Store(db_).revoke_credential("ci-main");
  EXPECT_EQ(ingest(ingest_)->status, 401);
  EXPECT_EQ(triage("pgt_" + std::string(64, '0'))->status, 401);
  EXPECT_EQ(triage("")->status, 401);
  EXPECT_EQ(events(), 1u);
}

TEST_F(Auth, TheLegacyTokenStillIngestsAndTriagesUnderItsOwnName) {
  start();
  EXPECT_EQ(ingest(kToken)->status, 201);
  ASSERT_EQ(triage(kToken)->status, 201);
  const auto e = last_event();
  EXPECT_EQ(e["author"], "(ingest token)");
  EXPECT_EQ(e["via"], "legacy");
}

TEST_F(Auth, WhoamiNamesTheCredentialAndWritesNothing) {
  start();
  auto c = server_->client();
  auto r = c->Get("/api/v1/whoami", {{"Authorization", "Bearer " + triage_}});
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["name"], "ana");
  EXPECT_EQ(j["role"], "triage");
  EXPECT_EQ(j["may_triage"], true);
  EXPECT_EQ(j["may_ingest"], false);
  auto nobody = c->Get("/api/v1/whoami");  // nobody is an answer, not an error
  ASSERT_EQ(nobody->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(nobody->body)["name"].is_null());
  EXPECT_EQ(c->Get("/api/v1/whoami", {{"Authorization", "Bearer wrong"}})->status, 401);
  for (const auto& cr : store::Store(db_).credentials()) EXPECT_FALSE(cr.last_used_at) << cr.name;
  EXPECT_EQ(get_page(*server_, "/regressions").find("your name"), std::string::npos);
}

TEST_F(Auth, TheProxysHeaderFromATrustedPeerIsATriageIdentity) {
  start("X-Forwarded-User", "10.0.0.0/8, 127.0.0.1");  // the test connects from 127.0.0.1
  auto r = triage("", "acknowledge", {{"X-Forwarded-User", "bo@example.com"}});
  ASSERT_EQ(r->status, 201) << r->body;
  auto e = last_event();
  EXPECT_EQ(e["author"], "bo@example.com");
  EXPECT_EQ(e["via"], "header");
  // Header users triage only; a cross-site form (not JSON) is refused; odd names are refused.
  auto c = server_->client();
  SeedSpec spec = standard_spec();
  spec.first_commit = 2000;
  auto in = c->Post("/api/v1/runs", {{"X-Forwarded-User", "bo@example.com"}},
                    store::runs_to_json({make_run(spec, 1, 0, 0)}, true), "application/json");
  EXPECT_EQ(in->status, 403) << in->body;
  EXPECT_EQ(triage("", "fix", {{"X-Forwarded-User", "bo@example.com"}}, "text/plain")->status, 415);
  EXPECT_EQ(triage("", "fix", {{"X-Forwarded-User", "bo <script>"}})->status, 401);
  // A bearer token wins over the header: CI behind the same proxy stays itself.
  ASSERT_EQ(triage(triage_, "fix", {{"X-Forwarded-User", "bo@example.com"}})->status, 201);
  EXPECT_EQ(last_event()["author"], "ana");
  auto who = c->Get("/api/v1/whoami", {{"X-Forwarded-User", "bo@example.com"}});
  ASSERT_EQ(who->status, 200);
  EXPECT_EQ(nlohmann::json::parse(who->body)["via"], "header");
}

TEST_F(Auth, TheProxysHeaderFromAnUntrustedPeerIsIgnored) {
  // Only 127.0.0.2 is the proxy; this test's requests come from 127.0.0.1, like any client that
  // reaches serve directly and sends the header itself.
  start("X-Forwarded-User", "127.0.0.2/32");
  auto r = triage("", "acknowledge", {{"X-Forwarded-User", "admin"}});
  EXPECT_EQ(r->status, 401) << r->body;
  EXPECT_EQ(events(), 0u);
  auto who = server_->client()->Get("/api/v1/whoami", {{"X-Forwarded-User", "admin"}});
  ASSERT_EQ(who->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(who->body)["name"].is_null());
  // With a token it is the token's name, never the header's.
  ASSERT_EQ(triage(triage_, "acknowledge", {{"X-Forwarded-User", "admin"}})->status, 201);
  EXPECT_EQ(last_event()["author"], "ana");
}

TEST_F(Auth, ServeRefusesAHeaderWithoutItsProxyAndBadNetworks) {
  web::ServeOptions opt;
  opt.db_path = db_;
  opt.auth_header = "X-Forwarded-User";
  EXPECT_THROW(web::Server{opt}, SettingError);  // no --trusted-proxy
  opt.auth_header.clear();
  opt.trusted_proxy = "127.0.0.1";
  EXPECT_THROW(web::Server{opt}, SettingError);  // no --auth-header
  opt.auth_header = "Authorization";
  EXPECT_THROW(web::Server{opt}, SettingError);
  opt.auth_header = "X-Forwarded-User";
  for (const char* bad : {"", "127.0.0.256", "10.0.0.1/8", "10.0.0.0/33", "::1/129", "10.0.0.0/",
                          "127.0.0.1,,::1", "localhost"}) {
    opt.trusted_proxy = bad;
    EXPECT_THROW(web::Server{opt}, SettingError) << bad;
  }
}

TEST_F(Auth, PerfgateServeSpellsTheProxySettingsAsItsFlags) {
  ServeProcess p({"--db", db_, "--port", "0", "--auth-header", "X-Forwarded-User"},
                 dir_.file("serve.log"));
  EXPECT_EQ(p.wait_exit(), 2);
  EXPECT_NE(p.stderr_text().find("--auth-header needs --trusted-proxy"), std::string::npos)
      << p.stderr_text();
  ServeProcess bad({"--db", db_, "--port", "0", "--auth-header", "X-Forwarded-User",
                    "--trusted-proxy", "10.0.0.1/8"},
                   dir_.file("serve2.log"));
  EXPECT_EQ(bad.wait_exit(), 2);
  EXPECT_NE(bad.stderr_text().find("--trusted-proxy entry '10.0.0.1/8'"), std::string::npos)
      << bad.stderr_text();
}

TEST(TrustedProxy, MatchesAddressesAndNetworksOfBothFamilies) {
  auto p = web::TrustedProxies::parse("127.0.0.1,10.0.0.0/8,fd00::/8,::1,192.168.1.128/25");
  EXPECT_TRUE(p.contains("127.0.0.1"));
  EXPECT_FALSE(p.contains("127.0.0.2"));
  EXPECT_TRUE(p.contains("10.255.0.3"));
  EXPECT_FALSE(p.contains("11.0.0.1"));
  EXPECT_TRUE(p.contains("192.168.1.200"));
  EXPECT_FALSE(p.contains("192.168.1.127"));
  EXPECT_TRUE(p.contains("::1"));
  EXPECT_TRUE(p.contains("fd12:3456::1"));
  EXPECT_FALSE(p.contains("fe80::1"));
  EXPECT_TRUE(p.contains("::ffff:10.1.2.3"));  // IPv4-mapped: its IPv4 address
  EXPECT_FALSE(p.contains(""));
  EXPECT_FALSE(p.contains("not an address"));
  EXPECT_TRUE(web::TrustedProxies::parse("0.0.0.0/0").contains("203.0.113.9"));
}

}  // namespace
}  // namespace pg::webtest
