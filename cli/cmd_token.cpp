// `perfgate token add|list|revoke`: the named credentials `perfgate serve` accepts (docs/CLI.md,
// "perfgate token"; the store keeps only each token's SHA-256, store/credential_secret.h).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/text_table.h"
#include "store/store.h"

namespace pg::cli {

void add_token_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "token", "named credentials for perfgate serve: who may ingest and who may triage");
  cmd->require_subcommand(1);
  auto db = std::make_shared<std::string>("perfgate.db");
  auto name = std::make_shared<std::string>();
  auto role = std::make_shared<std::string>();

  CLI::App* add = cmd->add_subcommand(
      "add", "create a token: prints it once on stdout; the database keeps only its hash");
  add->add_option("NAME", *name, "the token's name, recorded with each triage it makes")
      ->required();
  add->add_option("--role", *role, "ingest (POST runs and gates), triage, or admin (both)")
      ->required();
  add->add_option("--db", *db, "perfgate database (must exist)")->capture_default_str();
  add->callback([&action, db, name, role] {
    action = [db, name, role] {
      auto store = open_existing_db_for_write(*db);
      const store::Store::NewCredential c = store->add_credential(*name, *role);
      std::printf("%s\n", c.token.c_str());
      std::fflush(stdout);
      std::fprintf(stderr,
                   "perfgate: created token '%s' (role %s) in %s. It is shown only this once: "
                   "keep it in a file only its owner may read (chmod 600).\n",
                   c.credential.name.c_str(), c.credential.role.c_str(), db->c_str());
      return kExitOk;
    };
  });

  CLI::App* list =
      cmd->add_subcommand("list", "list the tokens: name, role, created, last used, revoked");
  list->add_option("--db", *db, "perfgate database (must exist)")->capture_default_str();
  list->callback([&action, db] {
    action = [db] {
      auto store = open_existing_db(*db);
      TextTable t({{"name"}, {"role"}, {"created"}, {"last used"}, {"revoked"}});
      for (const auto& c : store->credentials())
        t.add_row({c.name, c.role, c.created_at, c.last_used_at.value_or("never"),
                   c.revoked_at.value_or("no")});
      if (t.empty())
        std::printf("no tokens in %s (create one with `perfgate token add NAME --role ROLE`)\n",
                    db->c_str());
      else
        std::printf("%s", t.render().c_str());
      return kExitOk;
    };
  });

  CLI::App* revoke =
      cmd->add_subcommand("revoke", "revoke a token: serve refuses it (401) from its next request");
  revoke->add_option("NAME", *name, "the token's name")->required();
  revoke->add_option("--db", *db, "perfgate database (must exist)")->capture_default_str();
  revoke->callback([&action, db, name] {
    action = [db, name] {
      auto store = open_existing_db_for_write(*db);
      const auto [c, now] = store->revoke_credential(*name);
      if (now)
        std::printf("revoked token '%s' (role %s) at %s\n", c.name.c_str(), c.role.c_str(),
                    c.revoked_at->c_str());
      else
        std::printf("token '%s' was already revoked at %s\n", c.name.c_str(),
                    c.revoked_at->c_str());
      return kExitOk;
    };
  });
}

}  // namespace pg::cli
