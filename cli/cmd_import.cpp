// `perfgate import`: stores runs from export JSON (docs/FORMATS.md), validated exactly as
// POST /api/v1/runs validates them. The CI scripts use it to move the runs that measured code
// produced in its sandbox into the trusted store: the trusted side never opens a database that
// measured code wrote, only parses a document, all or nothing.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"

namespace pg::cli {
namespace {

// Far above any real run (a 12-cell sweep with samples is well under 1 MB), far below memory.
constexpr std::streamsize kMaxDocumentBytes = 256LL << 20;

struct ImportOptions {
  std::string db = "perfgate.db";
  std::vector<std::string> files;
  bool fresh_uuids = false;
};

std::string read_document(const std::string& file) {
  std::ifstream in;
  std::istream* src = &std::cin;
  if (file != "-") {
    in.open(file, std::ios::binary);
    if (!in) throw UsageError(file + ": cannot be read");
    src = &in;
  }
  std::string text;
  text.resize(static_cast<size_t>(kMaxDocumentBytes) + 1);
  src->read(text.data(), kMaxDocumentBytes + 1);
  const std::streamsize got = src->gcount();
  if (got > kMaxDocumentBytes)
    throw UsageError(file + ": larger than " + std::to_string(kMaxDocumentBytes >> 20) +
                     " MiB, not a run document");
  if (src->bad()) throw RuntimeFailure(file + ": read error");
  text.resize(static_cast<size_t>(got));
  return text;
}

int run_import(const ImportOptions& o) {
  // Every document is parsed and validated before the store is opened: a bad file anywhere
  // stores nothing and leaves no new database behind.
  std::vector<std::pair<std::string, std::vector<Run>>> documents;
  for (const auto& file : o.files) {
    const std::string name = file == "-" ? "standard input" : file;
    documents.emplace_back(name, store::runs_from_json(read_document(file), name));
    // A document from an untrusted writer may carry the uuid of a stored run, which would make
    // its own run "already stored": with fresh uuids every run it holds is a new run.
    if (o.fresh_uuids)
      for (Run& run : documents.back().second) run.uuid.clear();
  }
  store::Store store(o.db);
  for (const auto& [name, runs] : documents) {
    for (const auto& imported : store.import_runs(runs))
      std::cout << (imported.inserted ? "Imported run " : "Already stored: run ") << imported.id
                << " from " << name << "\n";
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void add_import_command(CLI::App& root, Action& action) {
  auto opts = std::make_shared<ImportOptions>();
  auto* cmd = root.add_subcommand(
      "import", "store runs from export JSON files (validated like POST /api/v1/runs)");
  cmd->add_option("--db", opts->db, "SQLite database to write (created if missing)")
      ->capture_default_str();
  cmd->add_option("files", opts->files, "export JSON documents; - reads standard input")
      ->required();
  cmd->add_flag("--fresh-uuids", opts->fresh_uuids,
                "store every run as a new run with a new uuid (documents from untrusted writers)");
  cmd->callback([&action, opts] { action = [opts] { return run_import(*opts); }; });
}

}  // namespace pg::cli
