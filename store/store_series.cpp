// Series: one sweep-cell key on one comparable environment, created on first use by a cell.
#include <unordered_map>

#include "core/cell_key_io.h"
#include "core/metrics.h"
#include "store/store_internal.h"

namespace pg::store {
namespace {

const std::string& series_columns() {
  static const std::string q =
      "SELECT id, " + cell_key_sql_columns() + ", comparable_env FROM series";
  return q;
}

SeriesInfo read_series(const sql::Stmt& s) {
  SeriesInfo info;
  info.id = s.int64(0);
  info.key = detail::read_key(s, 1);
  info.env = detail::env_from_json(s.text(1 + detail::kKeyParams));
  return info;
}

}  // namespace

std::vector<SeriesInfo> Store::list_series() {
  sql::Stmt s(db_, series_columns() + " ORDER BY id");
  std::vector<SeriesInfo> out;
  while (s.step()) out.push_back(read_series(s));
  return out;
}

std::optional<SeriesInfo> Store::get_series(int64_t id) {
  sql::Stmt s(db_, series_columns() + " WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_series(s);
}

std::optional<int64_t> Store::find_series(const CellKey& key, const Environment& env) {
  constexpr int env_param = 1 + detail::kKeyParams;
  static const std::string q = "SELECT id FROM series WHERE " + cell_key_sql_match(1) +
                               " AND comparable_env = ?" + std::to_string(env_param);
  sql::Stmt s(db_, q);
  detail::bind_key(s, 1, key);
  s.bind(env_param, detail::env_comparable_json(env));
  if (!s.step()) return std::nullopt;
  return s.int64(0);
}

namespace {

// "?first, ?first+1, ..." for n parameters.
std::string placeholders(size_t n, size_t first = 1) {
  std::string p;
  for (size_t i = first; i < first + n; ++i) p += (i > first ? ", ?" : "?") + std::to_string(i);
  return p;
}

}  // namespace

std::vector<SeriesSample> Store::series_samples(int64_t series_id, bool with_samples) {
  sql::Transaction snapshot(db_, /*immediate=*/false);
  std::vector<SeriesSample> out = std::move(series_samples_of({series_id})[series_id]);
  if (with_samples) {
    std::unordered_map<int64_t, size_t> index;  // cell id -> position in out
    for (size_t i = 0; i < out.size(); ++i) index[out[i].cell_id] = i;
    sql::Stmt s(db_,
                "SELECT x.cell_id, x.step, x.value FROM samples x JOIN cells c ON c.id = x.cell_id "
                "WHERE c.series_id = ?1 "
                "ORDER BY c.run_id, c.id, x.rep, x.step");
    s.bind(1, series_id);
    while (s.step()) {
      auto& samples = out[index.at(s.int64(0))].samples;
      if (s.int64(1) < 0) {
        samples.prefill_ms.push_back(s.real(2));
        samples.decode_ms.emplace_back();
      } else {
        samples.decode_ms.back().push_back(s.real(2));
      }
    }
  }
  snapshot.commit();
  return out;
}

std::map<int64_t, std::vector<SeriesSample>> Store::series_samples_of(
    const std::vector<int64_t>& ids, const std::vector<std::string>& metric_names) {
  std::map<int64_t, std::vector<SeriesSample>> out;
  for (int64_t id : ids) out[id];
  if (ids.empty()) return out;
  sql::Transaction snapshot(db_, /*immediate=*/false);
  struct Where {
    std::vector<SeriesSample>* series;
    size_t at;
    CellKey key;
  };
  std::unordered_map<int64_t, Where> cells;  // cell id -> where its sample is
  const std::string in = "c.series_id IN (" + placeholders(ids.size()) + ")";
  auto bind_ids = [&](sql::Stmt& s) {
    for (size_t i = 0; i < ids.size(); ++i) s.bind(static_cast<int>(i + 1), ids[i]);
  };
  {
    // History order within each series, as series_samples gives it.
    sql::Stmt s(db_,
                "SELECT c.id, r.id, r.git_commit, r.git_subject, r.git_time, r.started_at, "
                "c.status, " +
                    cell_key_sql_columns("c.") +
                    ", r.git_branch, c.series_id "
                    "FROM cells c JOIN runs r ON r.id = c.run_id WHERE " +
                    in + " ORDER BY r.history_time, r.id, c.ordinal");
    bind_ids(s);
    while (s.step()) {
      SeriesSample p;
      p.cell_id = s.int64(0);
      p.run_id = s.int64(1);
      p.commit = s.opt_text(2).value_or("");
      p.subject = s.opt_text(3).value_or("");
      p.commit_time = s.opt_text(4).value_or("");
      p.started_at = s.text(5);
      p.status = cell_status_from_string(s.text(6));
      p.branch = s.opt_text(7 + detail::kKeyParams).value_or("");
      auto& series = out[s.int64(8 + detail::kKeyParams)];
      cells[p.cell_id] = {&series, series.size(), detail::read_key(s, 7)};
      series.push_back(std::move(p));
    }
  }
  {
    sql::Stmt s(
        db_,
        "SELECT m.cell_id, m.name, m.value FROM metrics m JOIN cells c ON c.id = m.cell_id "
        "WHERE " +
            in +
            (metric_names.empty()
                 ? std::string()
                 : " AND m.name IN (" + placeholders(metric_names.size(), ids.size() + 1) + ")"));
    bind_ids(s);
    for (size_t i = 0; i < metric_names.size(); ++i)
      s.bind(static_cast<int>(ids.size() + i + 1), metric_names[i]);
    while (s.step()) {
      const Where& w = cells.at(s.int64(0));
      (*w.series)[w.at].metrics[s.text(1)] = s.real(2);
    }
  }
  {
    sql::Stmt s(db_,
                "SELECT p.cell_id, p.prefill_ms, p.decode_total_ms, p.decode_steps FROM "
                "repetitions p JOIN cells c ON c.id = p.cell_id WHERE " +
                    in + " ORDER BY c.series_id, c.run_id, c.id, p.rep");  // the index's order
    bind_ids(s);
    while (s.step()) {
      const Where& w = cells.at(s.int64(0));
      SeriesSample& p = (*w.series)[w.at];
      p.rep_prefill_ms.push_back(s.real(1));
      if (auto t = repetition_tpot_ms(w.key, s.real(2), s.integer(3))) p.rep_tpot_ms.push_back(*t);
    }
  }
  snapshot.commit();
  return out;
}

}  // namespace pg::store
