// Cell profiles in the store (schema steps 7 and 12, docs/STORE.md "Profiles"): written with their
// cell, read back with the samples.
#include <functional>
#include <map>
#include <unordered_map>

#include "common/errors.h"
#include "store/store_internal.h"

namespace pg::store::detail {

void write_profile(sqlite3* db, int64_t cell_id, const CellProfile& p) {
  sql::Stmt head(db,
                 "INSERT INTO profiles(cell_id, profiler, wall_ms, note) VALUES(?1, ?2, ?3, ?4)");
  head.bind(1, cell_id).bind(2, p.profiler).bind(3, p.wall_ms).bind(4, p.note).run();
  sql::Stmt step(db,
                 "INSERT INTO profile_steps(cell_id, step, wall_ms, ops, kernels, syncs, "
                 "d2h_copies, alloc_bytes, peak_bytes, span_ms, busy_ms) "
                 "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  sql::Stmt name(db,
                 "INSERT INTO profile_names(name) VALUES(?1) ON CONFLICT(name) DO UPDATE SET "
                 "name = excluded.name RETURNING id");
  // A name given twice in one step (an ingested document) is one row with the sums.
  sql::Stmt op(db,
               "INSERT INTO profile_ops(cell_id, step, kind, name_id, count, total_ms) "
               "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO UPDATE SET "
               "count = count + excluded.count, total_ms = total_ms + excluded.total_ms");
  std::map<std::string, int64_t> name_ids;
  for (const ProfileStep& s : p.steps) {
    step.reset();
    step.bind(1, cell_id).bind(2, s.step).bind(3, s.wall_ms).bind(4, s.ops).bind(5, s.kernels);
    step.bind(6, s.syncs).bind(7, s.d2h_copies).bind(8, s.alloc_bytes);
    if (s.peak_bytes)
      step.bind(9, *s.peak_bytes);
    else
      step.bind_null(9);
    if (s.span_ms && s.busy_ms)
      step.bind(10, *s.span_ms).bind(11, *s.busy_ms);
    else
      step.bind_null(10).bind_null(11);
    step.run();
    for (const ProfileOp& o : s.ops_by_name) {
      auto it = name_ids.find(o.name);
      if (it == name_ids.end()) {
        name.reset();
        name.bind(1, o.name);
        if (!name.step()) throw RuntimeFailure("profile_names: no id for an inserted name");
        it = name_ids.emplace(o.name, name.int64(0)).first;
        while (name.step()) {
        }
      }
      op.reset();
      op.bind(1, cell_id).bind(2, s.step).bind(3, to_string(o.kind)).bind(4, it->second);
      op.bind(5, o.count).bind(6, o.total_ms).run();
    }
  }
}

void load_profiles(sqlite3* db, const std::string& where,
                   const std::function<void(sql::Stmt&)>& bind,
                   const std::unordered_map<int64_t, CellResult*>& cell_by_id) {
  const std::string join = " JOIN cells c ON c.id = p.cell_id JOIN runs r ON r.id = c.run_id";
  {
    sql::Stmt s(db,
                "SELECT p.cell_id, p.profiler, p.wall_ms, p.note FROM profiles p" + join + where);
    bind(s);
    while (s.step()) {
      CellProfile prof;
      prof.profiler = s.text(1);
      prof.wall_ms = s.real(2);
      prof.note = s.opt_text(3);
      cell_by_id.at(s.int64(0))->profile = std::move(prof);
    }
  }
  // (cell id, step) -> the step's position in its profile.
  std::map<std::pair<int64_t, int64_t>, ProfileStep*> steps;
  {
    sql::Stmt s(db,
                "SELECT p.cell_id, p.step, p.wall_ms, p.ops, p.kernels, p.syncs, p.d2h_copies, "
                "p.alloc_bytes, p.peak_bytes, p.span_ms, p.busy_ms FROM profile_steps p" +
                    join + where + " ORDER BY p.cell_id, p.step");
    bind(s);
    while (s.step()) {
      ProfileStep st;
      st.step = s.integer(1);
      st.wall_ms = s.real(2);
      st.ops = s.int64(3);
      st.kernels = s.int64(4);
      st.syncs = s.int64(5);
      st.d2h_copies = s.int64(6);
      st.alloc_bytes = s.int64(7);
      if (!s.is_null(8)) st.peak_bytes = s.int64(8);
      if (!s.is_null(9) && !s.is_null(10)) {
        st.span_ms = s.real(9);
        st.busy_ms = s.real(10);
      }
      cell_by_id.at(s.int64(0))->profile->steps.push_back(std::move(st));
    }
    for (const auto& [id, cell] : cell_by_id)
      if (cell->profile)
        for (ProfileStep& st : cell->profile->steps) steps[{id, st.step}] = &st;
  }
  sql::Stmt s(db,
              "SELECT p.cell_id, p.step, p.kind, n.name, p.count, p.total_ms FROM profile_ops p "
              "JOIN profile_names n ON n.id = p.name_id" +
                  join + where + " ORDER BY p.cell_id, p.step, p.total_ms DESC, n.name");
  bind(s);
  while (s.step()) {
    ProfileOp o;
    o.kind = profile_op_kind(s.text(2)).value_or(ProfileOpKind::op);
    o.name = s.text(3);
    o.count = s.int64(4);
    o.total_ms = s.real(5);
    steps.at({s.int64(0), s.int64(1)})->ops_by_name.push_back(std::move(o));
  }
}

}  // namespace pg::store::detail
