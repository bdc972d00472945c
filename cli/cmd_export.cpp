// `perfgate export` and `perfgate runs`: read-only views of a store. Neither ever creates a file.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/inert_text.h"
#include "common/text_table.h"
#include "store/run_report.h"
#include "store/store.h"

namespace pg::cli {
namespace {

struct ExportOptions {
  std::string db = "perfgate.db";
  std::optional<int64_t> run_id;
  std::string format;
};

int run_export(const ExportOptions& o) {
  auto reporter = store::make_run_reporter(o.format);
  store::Store store(o.db, /*read_only=*/true);
  std::vector<Run> runs;
  if (o.run_id) {
    auto run = store.load_run(*o.run_id);
    if (!run)
      throw UsageError("--run: no run with id " + std::to_string(*o.run_id) + " in '" + o.db + "'");
    runs.push_back(std::move(*run));
  } else {
    runs = store.list_runs({true, true});
  }
  reporter->report(std::cout, runs);
  std::cout.flush();
  if (!std::cout) throw RuntimeFailure("cannot write to standard output");
  return kExitOk;
}

std::string short_time(const std::string& iso) {
  // "2024-05-01T10:05:00Z" -> "2024-05-01 10:05"
  if (iso.size() >= 16 && iso[10] == 'T') return iso.substr(0, 10) + " " + iso.substr(11, 5);
  return iso;
}

int run_runs(const std::string& db) {
  store::Store store(db, /*read_only=*/true);
  const auto runs = store.list_runs({true, false});
  TextTable table({{"ID", Align::right},
                   {"STATUS"},
                   {"STARTED"},
                   {"COMMIT"},
                   {"BRANCH"},
                   {"DIRTY"},
                   {"DEVICE"},
                   {"CELLS OK/TOTAL"}});
  for (const auto& r : runs) {
    size_t ok = 0;
    for (const auto& c : r.cells) ok += c.status == CellStatus::ok;
    auto dev = r.env.find("device");
    table.add_row({std::to_string(r.id), to_string(r.status), short_time(r.started_at),
                   r.git.commit ? r.git.commit->substr(0, 12) : "(" + r.git.state + ")",
                   // Branch and device come from the measured checkout or an ingested run.
                   inert_text(r.git.branch.value_or("-"), kInertNameChars),
                   r.git.dirty ? "yes" : "no",
                   dev == r.env.end() ? "-" : inert_text(dev->second, kInertNameChars),
                   std::to_string(ok) + "/" + std::to_string(r.cells.size())});
  }
  std::cout << table.render();
  if (runs.empty()) std::cerr << "no runs stored in '" << db << "'\n";
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& root, Action& action) {
  auto opts = std::make_shared<ExportOptions>();
  auto* cmd = root.add_subcommand("export", "print stored runs as JSON or CSV");
  cmd->add_option("--db", opts->db, "SQLite database to read (never created)")
      ->capture_default_str();
  cmd->add_option("--run", opts->run_id, "only this run id");
  cmd->add_option("--format", opts->format, "csv or json")
      ->required()
      ->check(CLI::IsMember({"csv", "json"}));
  cmd->callback([&action, opts] { action = [opts] { return run_export(*opts); }; });
}

void add_runs_command(CLI::App& root, Action& action) {
  auto db = std::make_shared<std::string>("perfgate.db");
  auto* cmd = root.add_subcommand("runs", "list stored runs");
  cmd->add_option("--db", *db, "SQLite database to read (never created)")->capture_default_str();
  cmd->callback([&action, db] { action = [db] { return run_runs(*db); }; });
}

}  // namespace pg::cli
