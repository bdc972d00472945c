// `perfgate accept add|list|revoke`: accepted slowdowns, the way a deliberate slowdown of a pull
// request gets through the gate (docs/CLI.md "perfgate accept", docs/STATISTICS.md "Accepted
// slowdowns"). The use case is app/acceptance.h; this file only reads flags and prints.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/acceptance.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "common/text_table.h"
#include "core/cell_label.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct AcceptFlags {
  std::string db = "perfgate.db", reason, author, ref;
  int64_t id = 0;
};

std::string cells_text(const store::Store::Acceptance& a) {
  std::string out;
  for (const store::Store::AcceptedCell& c : a.cells)
    out += fmt::format("{}{} {} {:+.1f}%", out.empty() ? "" : "; ", cell_label(c.key), c.metric,
                       100.0 * (c.ratio - 1.0));
  return out;
}

int add(const AcceptFlags& f) {
  auto store = open_existing_db_for_write(f.db);
  const store::Store::Acceptance a = app::accept_gate(
      *store, f.id, f.reason, f.author.empty() ? default_user_name() : f.author, "cli");
  std::printf("accepted %zu cell%s of gate %lld for %s as acceptance %lld: %s\n", a.cells.size(),
              a.cells.size() == 1 ? "" : "s", static_cast<long long>(f.id), a.ref.c_str(),
              static_cast<long long>(a.id), cells_text(a).c_str());
  std::fprintf(stderr,
               "perfgate: the next `perfgate compare --acceptances %s --ref %s` passes these cells "
               "unless the head is slower than accepted by the min effect.\n",
               f.db.c_str(), a.ref.c_str());
  return kExitOk;
}

int list(const AcceptFlags& f) {
  auto store = open_existing_db(f.db);
  TextTable t({{"id"}, {"ref"}, {"gate"}, {"cells"}, {"by"}, {"at"}, {"reason"}, {"revoked"}});
  for (const store::Store::Acceptance& a : store->acceptances(f.ref))
    t.add_row(
        {std::to_string(a.id), a.ref, a.gate_id ? std::to_string(*a.gate_id) : "-", cells_text(a),
         a.author + " (" + a.via + ")", a.at, a.reason,
         a.revoked_by ? a.revoked_at + " by " + a.revoked_author + ": " + a.revoked_reason : "no"});
  if (t.empty())
    std::printf("no acceptances%s in %s\n", f.ref.empty() ? "" : (" of " + f.ref).c_str(),
                f.db.c_str());
  else
    std::printf("%s", t.render().c_str());
  return kExitOk;
}

int revoke(const AcceptFlags& f) {
  auto store = open_existing_db_for_write(f.db);
  const store::Store::Acceptance a = store->revoke_acceptance(
      f.id, f.reason, f.author.empty() ? default_user_name() : f.author, "cli");
  std::printf("revoked acceptance %lld of %s: its cells are tested against the base again\n",
              static_cast<long long>(a.id), a.ref.c_str());
  return kExitOk;
}

}  // namespace

void add_accept_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand(
      "accept", "accepted slowdowns: let a deliberate slowdown of a pull request through the gate");
  cmd->require_subcommand(1);
  auto f = std::make_shared<AcceptFlags>();

  CLI::App* add_cmd = cmd->add_subcommand(
      "add",
      "accept every regression of a stored gate (`perfgate compare --record --ref`) for its "
      "ref, at the slowdown that gate measured");
  add_cmd->add_option("GATE", f->id, "the stored gate's id (the regressions page, JSON gate_id)")
      ->required();
  add_cmd->add_option("--reason", f->reason, "why the slowdown is accepted (shown in every report)")
      ->required();
  add_cmd->add_option("--as", f->author, "who accepts (default: $GITHUB_ACTOR, $USER or $LOGNAME)");
  add_cmd->add_option("--db", f->db, "perfgate database (must exist)")->capture_default_str();
  add_cmd->callback([&action, f] { action = [f] { return add(*f); }; });

  CLI::App* list_cmd = cmd->add_subcommand("list", "list the acceptances, revoked ones included");
  list_cmd->add_option("--ref", f->ref, "only this ref's");
  list_cmd->add_option("--db", f->db, "perfgate database (must exist)")->capture_default_str();
  list_cmd->callback([&action, f] { action = [f] { return list(*f); }; });

  CLI::App* revoke_cmd = cmd->add_subcommand(
      "revoke", "end an acceptance: its cells are tested against the base again");
  revoke_cmd->add_option("ID", f->id, "the acceptance's id (`perfgate accept list`)")->required();
  revoke_cmd->add_option("--reason", f->reason, "why it no longer holds")->required();
  revoke_cmd->add_option("--as", f->author,
                         "who revokes (default: $GITHUB_ACTOR, $USER or $LOGNAME)");
  revoke_cmd->add_option("--db", f->db, "perfgate database (must exist)")->capture_default_str();
  revoke_cmd->callback([&action, f] { action = [f] { return revoke(*f); }; });
}

}  // namespace pg::cli
