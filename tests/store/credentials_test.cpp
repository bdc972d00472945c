// Named credentials in a real store file: add, list, revoke, look up by token; only the token's
// SHA-256 is ever written (the file's bytes are searched for the token); bad names, roles and
// duplicates are refused; a store of schema version 7 migrates and keeps its triage log.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "common/errors.h"
#include "store/credential_secret.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

TEST(Credentials, AddListRevokeKeepsEveryTokenWithItsRole) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto ci = s.add_credential("ci-main", "ingest");
  const auto ana = s.add_credential("ana.triage_1", "triage");
  s.add_credential("ops", "admin");
  EXPECT_EQ(ci.token.rfind("pgt_", 0), 0u);
  EXPECT_EQ(ci.token.size(), 4u + 64u);
  EXPECT_EQ(ci.token.find_first_not_of("0123456789abcdef", 4), std::string::npos);
  EXPECT_NE(ci.token, ana.token);
  auto all = s.credentials();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "ci-main");
  EXPECT_EQ(all[0].role, "ingest");
  EXPECT_EQ(all[1].role, "triage");
  EXPECT_EQ(all[2].role, "admin");
  EXPECT_FALSE(all[0].created_at.empty());
  EXPECT_FALSE(all[0].last_used_at);
  EXPECT_FALSE(all[0].revoked());

  auto [revoked, now] = s.revoke_credential("ci-main");
  EXPECT_TRUE(now);
  ASSERT_TRUE(revoked.revoked_at);
  auto [again, again_now] = s.revoke_credential("ci-main");
  EXPECT_FALSE(again_now);
  EXPECT_EQ(again.revoked_at, revoked.revoked_at);  // the first revocation stays the record
  EXPECT_THROW(s.revoke_credential("nobody"), UsageError);
  all = s.credentials();
  EXPECT_TRUE(all[0].revoked());
  EXPECT_FALSE(all[1].revoked());
}

TEST(Credentials, FindsTheCredentialOfATokenAndSaysWhenItIsRevoked) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto ci = s.add_credential("ci", "ingest");
  const auto ana = s.add_credential("ana", "triage");
  ASSERT_TRUE(s.find_credential(ana.token));
  EXPECT_EQ(s.find_credential(ana.token)->name, "ana");
  EXPECT_EQ(s.find_credential(ci.token)->role, "ingest");
  EXPECT_FALSE(s.find_credential("pgt_" + std::string(64, '0')));
  EXPECT_FALSE(s.find_credential(ana.token.substr(0, ana.token.size() - 1)));
  EXPECT_FALSE(s.find_credential(""));
  s.revoke_credential("ana");
  ASSERT_TRUE(s.find_credential(ana.token));
  EXPECT_TRUE(s.find_credential(ana.token)->revoked());
  s.note_credential_use(s.find_credential(ci.token)->id);
  EXPECT_TRUE(s.credentials()[0].last_used_at);
}

TEST(Credentials, TheFileHoldsOnlyTheTokensHashNeverTheToken) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  std::string token;
  {
    store::Store s(path);
    token = s.add_credential("ci", "admin").token;
    const std::string sql = "SELECT count(*) FROM credentials WHERE token_sha256 = '" +
                            store::credential::token_hash(token) + "'";
    EXPECT_EQ(test::query_int(s, sql.c_str()), 1);
  }
  // The database and whatever SQLite left beside it (the WAL is checkpointed on close, but look
  // at every file in the directory in case it was not).
  size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    const std::string bytes = test::read_bytes(f.path().string());
    ++files;
    EXPECT_EQ(bytes.find(token), std::string::npos) << f.path();
    EXPECT_EQ(bytes.find(token.substr(4)), std::string::npos) << f.path();  // the random part
    EXPECT_EQ(bytes.find(token.substr(4, 16)), std::string::npos) << f.path();
  }
  EXPECT_GE(files, 1u);
}

TEST(Credentials, Sha256IsTheStandardOne) {
  // FIPS 180-2's test vectors: the hash a reader of the database may recompute elsewhere.
  EXPECT_EQ(store::credential::token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(store::credential::token_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Credentials, RefusesBadNamesRolesAndAnyNameAlreadyUsed) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  for (const std::string& bad :
       {std::string(""), std::string("-leading-dash"), std::string("a b"),
        std::string("semi;colon"), std::string(65, 'x'), std::string("caf\xc3\xa9"),
        std::string("(ingest token)"), std::string("new\nline")})
    EXPECT_THROW(s.add_credential(bad, "triage"), UsageError) << bad;
  EXPECT_NO_THROW(s.add_credential(std::string(64, 'x'), "triage"));
  try {
    s.add_credential("ok", "root");
    ADD_FAILURE() << "a role that does not exist was accepted";
  } catch (const SettingError& e) {
    ASSERT_FALSE(e.settings().empty());
    EXPECT_EQ(e.settings()[0], "role");
  }
  s.add_credential("ana", "triage");
  EXPECT_THROW(s.add_credential("ana", "admin"), UsageError);
  s.revoke_credential("ana");
  try {
    s.add_credential("ana", "triage");  // never reused: the triage log names one credential
    ADD_FAILURE() << "a revoked name was reused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("revoked"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.credentials().size(), 2u);  // nothing refused was stored
}

TEST(Credentials, AVersion7StoreMigratesKeepingItsTriageLog) {
  TempDir dir;
  const std::string path = dir.file("v7.db");
  {
    store::Store s(path);
    test::write_run(s, test::sample_run());
    s.add_regression_event(s.list_series()[0].id, "tpot_ms", std::string(40, 'a'), "acknowledge",
                           "", "ana");
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    ASSERT_EQ(
        sqlite3_exec(db,
                     (std::string(test::kUndoStepsSince9) +
                      "DROP TABLE credentials; ALTER TABLE regression_events DROP COLUMN via; "
                      "ALTER TABLE gate_result_events DROP COLUMN via; PRAGMA user_version = 7")
                         .c_str(),
                     nullptr, nullptr, &err),
        SQLITE_OK)
        << (err ? err : "");
    sqlite3_close(db);
  }
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  EXPECT_EQ(s.run_count(), 1);
  auto events = s.regression_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].author, "ana");
  EXPECT_EQ(events[0].via, "typed");  // a name the writer typed, before credentials had names
  EXPECT_TRUE(s.credentials().empty());
  s.add_credential("ci", "ingest");
  EXPECT_EQ(s.credentials().size(), 1u);
}

}  // namespace
}  // namespace pg
