// Ingest of whole runs (POST /api/v1/runs): one transaction for the batch, all or nothing, and a
// run identical to a stored one (commit, environment, cells and samples) is not stored twice.
#include <cctype>

#include "store/store_internal.h"
#include "store/validate.h"

namespace pg {

std::vector<Store::Imported> Store::import_runs(const std::vector<Run>& runs) {
  std::vector<Imported> out;
  sql::Transaction tx(db_);
  detail::CellWriter writer(db_);
  for (size_t i = 0; i < runs.size(); ++i) {
    Run run = runs[i];
    // Checked here, inside the transaction, so a bad run anywhere in the batch stores nothing.
    validate_run(run, "/runs/" + std::to_string(i));
    if (run.git.commit)
      for (auto& ch : *run.git.commit)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const std::string canonical = detail::content_canonical(run);
    const std::string hash = detail::content_hash(canonical);
    std::optional<int64_t> existing;
    {
      sql::Stmt s(db_, "SELECT id FROM runs WHERE content_hash = ?1 ORDER BY id");
      s.bind(1, hash);
      std::vector<int64_t> candidates;
      while (s.step()) candidates.push_back(s.int64(0));
      for (int64_t id : candidates) {
        auto stored = load_run(id);
        if (stored && detail::content_canonical(*stored) == canonical) {
          existing = id;
          break;
        }
      }
    }
    if (existing) {
      out.push_back({*existing, false});
      continue;
    }
    const int64_t id = detail::insert_run_row(db_, run, hash);
    const std::string comparable = detail::env_comparable_json(run.env);
    for (size_t c = 0; c < run.cells.size(); ++c)
      writer.write(id, static_cast<int>(c), comparable, run.cells[c]);
    out.push_back({id, true});
  }
  tx.commit();
  return out;
}

Store::Imported Store::import_run(const Run& run) { return import_runs({run}).front(); }

}  // namespace pg
