// Ingest of whole runs (POST /api/v1/runs, perfgate import): one transaction for the batch, all
// or nothing. Idempotent by the run's own uuid, never by content (docs/API.md): a run whose uuid
// is stored is already stored; a run without one is a new run and gets a new uuid.
#include <cctype>

#include "store/store_internal.h"
#include "store/validate.h"

namespace pg::store {
namespace {

void lowercase(std::string& s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
}

}  // namespace

std::vector<Store::Imported> Store::import_runs(const std::vector<Run>& runs) {
  std::vector<Imported> out;
  sql::Transaction tx(db_);
  detail::CellWriter writer(db_);
  sql::Stmt find(db_, "SELECT id FROM runs WHERE uuid = ?1");
  for (size_t i = 0; i < runs.size(); ++i) {
    Run run = runs[i];
    // Checked here, inside the transaction, so a bad run anywhere in the batch stores nothing.
    validate_run(run, "/runs/" + std::to_string(i));
    if (run.git.commit) lowercase(*run.git.commit);
    lowercase(run.uuid);
    if (!run.uuid.empty()) {
      find.reset();
      find.bind(1, run.uuid);
      if (find.step()) {
        out.push_back({find.int64(0), false});
        continue;
      }
    }
    const int64_t id = detail::insert_run_row(db_, run);
    const std::string comparable = detail::env_comparable_json(run.env);
    for (size_t c = 0; c < run.cells.size(); ++c)
      writer.write(id, static_cast<int>(c), comparable, run.cells[c]);
    out.push_back({id, true});
  }
  tx.commit();
  return out;
}

Store::Imported Store::import_run(const Run& run) { return import_runs({run}).front(); }

}  // namespace pg::store
