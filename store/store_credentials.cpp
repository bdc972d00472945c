// Named credentials: who may ingest and who may triage (docs/CLI.md, "perfgate token"). The store
// keeps each token's SHA-256 only (store/credential_secret.h says why that is enough).
#include <sqlite3.h>

#include "common/constant_time.h"
#include "common/errors.h"
#include "store/credential_secret.h"
#include "store/store_internal.h"

namespace pg::store {

namespace {

constexpr size_t kMaxNameChars = 64;

constexpr const char* kColumns = "id, name, role, created_at, last_used_at, revoked_at";

Store::Credential read_credential(const sql::Stmt& s) {
  return {s.int64(0), s.text(1), s.text(2), s.text(3), s.opt_text(4), s.opt_text(5)};
}

std::optional<Store::Credential> credential_named(sqlite3* db, const std::string& name) {
  sql::Stmt s(db, std::string("SELECT ") + kColumns + " FROM credentials WHERE name = ?1");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_credential(s);
}

}  // namespace

std::string credential_name_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameChars)
    return "is longer than " + std::to_string(kMaxNameChars) + " characters";
  const auto alnum = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(static_cast<unsigned char>(name[0]))) return "must start with a letter or digit";
  for (unsigned char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '-')
      return "may hold only letters, digits, '.', '_' and '-'";
  return "";
}

Store::NewCredential Store::add_credential(const std::string& name, const std::string& role) {
  if (const std::string why = credential_name_problem(name); !why.empty())
    throw UsageError("token name '" + name + "' " + why);
  if (role != "ingest" && role != "triage" && role != "admin")
    throw SettingError("role", "must be ingest, triage or admin, got '" + role + "'");
  NewCredential out;
  out.token = credential::new_token();
  out.credential = {0, name, role, detail::now_iso8601(), std::nullopt, std::nullopt};
  sql::Transaction tx(db_);
  if (auto existing = credential_named(db_, name))
    throw UsageError("a token named '" + name + "' already exists (created " +
                     existing->created_at +
                     (existing->revoked() ? ", revoked " + *existing->revoked_at : "") +
                     "); a name is never reused: pick another");
  sql::Stmt s(db_,
              "INSERT INTO credentials (name, role, token_sha256, created_at) "
              "VALUES (?1, ?2, ?3, ?4)");
  s.bind(1, name).bind(2, role).bind(3, credential::token_hash(out.token));
  s.bind(4, out.credential.created_at);
  s.run();
  out.credential.id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return out;
}

std::vector<Store::Credential> Store::credentials() {
  sql::Stmt s(db_, std::string("SELECT ") + kColumns + " FROM credentials ORDER BY id");
  std::vector<Credential> out;
  while (s.step()) out.push_back(read_credential(s));
  return out;
}

std::pair<Store::Credential, bool> Store::revoke_credential(const std::string& name) {
  sql::Transaction tx(db_);
  auto c = credential_named(db_, name);
  if (!c) throw UsageError("no token named '" + name + "' (perfgate token list shows them)");
  if (c->revoked()) return {*c, false};
  c->revoked_at = detail::now_iso8601();
  sql::Stmt s(db_, "UPDATE credentials SET revoked_at = ?1 WHERE id = ?2");
  s.bind(1, *c->revoked_at).bind(2, c->id);
  s.run();
  tx.commit();
  return {*c, true};
}

std::optional<Store::Credential> Store::find_credential(const std::string& token) {
  const std::string hash = credential::token_hash(token);
  // Every row, every hash compared in full: neither an index lookup nor an early exit lets the
  // time taken depend on how close a guess came.
  sql::Stmt s(db_, std::string("SELECT ") + kColumns + ", token_sha256 FROM credentials");
  std::optional<Credential> found;
  while (s.step()) {
    const bool match = constant_time_equal(s.text(6), hash);
    Credential c = read_credential(s);
    if (match) found = std::move(c);
  }
  return found;
}

void Store::note_credential_use(int64_t id) {
  sql::Stmt s(db_, "UPDATE credentials SET last_used_at = ?1 WHERE id = ?2");
  s.bind(1, detail::now_iso8601()).bind(2, id);
  s.run();
}

}  // namespace pg::store
