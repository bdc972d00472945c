// The export JSON's `profile` object, written and validated (docs/FORMATS.md, "The profile").
#include "store/profile_json.h"

#include <cmath>

#include "common/errors.h"
#include "common/utf8.h"

namespace pg::store {
namespace {

using nlohmann::json;

struct ProfileParser {
  std::string where;

  [[noreturn]] void bad(const std::string& ptr, const std::string& what) const {
    throw UsageError(where + ptr + ": " + what);
  }
  const json& field(const json& obj, const char* key, const std::string& ptr) const {
    if (!obj.is_object()) bad(ptr, std::string("expected an object, got ") + obj.type_name());
    auto it = obj.find(key);
    if (it == obj.end()) bad(ptr + "/" + key, "required field is missing");
    return *it;
  }
  double number(const json& j, const std::string& ptr) const {
    if (!j.is_number()) bad(ptr, std::string("expected a number, got ") + j.type_name());
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < 0) bad(ptr, "expected a finite number >= 0");
    return v;
  }
  int64_t count(const json& j, const std::string& ptr) const {
    if (!j.is_number_integer() || j.get<int64_t>() < 0) bad(ptr, "expected an integer >= 0");
    return j.get<int64_t>();
  }
  std::string text(const json& j, const std::string& ptr) const {
    if (!j.is_string()) bad(ptr, std::string("expected a string, got ") + j.type_name());
    return j.get<std::string>();
  }

  // span_ms and busy_ms: optional (documents written before them have neither), both or neither.
  void timeline(const json& j, const std::string& p, ProfileStep& s) const {
    auto it_span = j.find("span_ms"), it_busy = j.find("busy_ms");
    const bool span = it_span != j.end() && !it_span->is_null();
    const bool busy = it_busy != j.end() && !it_busy->is_null();
    if (span != busy) bad(p + (span ? "/busy_ms" : "/span_ms"), "span_ms and busy_ms go together");
    if (!span) return;
    s.span_ms = number(*it_span, p + "/span_ms");
    s.busy_ms = number(*it_busy, p + "/busy_ms");
    if (*s.busy_ms > *s.span_ms * (1 + 1e-9) + 1e-9)
      bad(p + "/busy_ms", "must not exceed span_ms (the time a kernel ran within the step's span)");
  }

  ProfileStep step(const json& j, const std::string& p) const {
    ProfileStep s;
    const json& index = field(j, "step", p);
    if (!index.is_number_integer() || index.get<int64_t>() < -1)
      bad(p + "/step", "expected an integer >= -1 (-1: the prefill)");
    s.step = index.get<int>();
    s.wall_ms = number(field(j, "wall_ms", p), p + "/wall_ms");
    s.ops = count(field(j, "ops", p), p + "/ops");
    s.kernels = count(field(j, "kernels", p), p + "/kernels");
    s.syncs = count(field(j, "syncs", p), p + "/syncs");
    s.d2h_copies = count(field(j, "d2h_copies", p), p + "/d2h_copies");
    s.alloc_bytes = count(field(j, "alloc_bytes", p), p + "/alloc_bytes");
    if (const json& peak = field(j, "peak_bytes", p); !peak.is_null())
      s.peak_bytes = count(peak, p + "/peak_bytes");
    timeline(j, p, s);
    const json& rows = field(j, "by_name", p);
    if (!rows.is_array()) bad(p + "/by_name", "expected an array");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string rp = p + "/by_name/" + std::to_string(i);
      ProfileOp op;
      const auto kind = profile_op_kind(text(field(rows[i], "kind", rp), rp + "/kind"));
      if (!kind) bad(rp + "/kind", "expected op or kernel");
      op.kind = *kind;
      op.name = text(field(rows[i], "name", rp), rp + "/name");
      op.count = count(field(rows[i], "count", rp), rp + "/count");
      op.total_ms = number(field(rows[i], "total_ms", rp), rp + "/total_ms");
      s.ops_by_name.push_back(std::move(op));
    }
    return s;
  }
};

}  // namespace

json profile_to_json(const CellProfile& p) {
  json steps = json::array();
  for (const ProfileStep& s : p.steps) {
    json rows = json::array();
    for (const ProfileOp& op : s.ops_by_name)
      rows.push_back({{"kind", to_string(op.kind)},
                      {"name", valid_utf8(op.name)},
                      {"count", op.count},
                      {"total_ms", op.total_ms}});
    steps.push_back({{"step", s.step},
                     {"wall_ms", s.wall_ms},
                     {"ops", s.ops},
                     {"kernels", s.kernels},
                     {"syncs", s.syncs},
                     {"d2h_copies", s.d2h_copies},
                     {"alloc_bytes", s.alloc_bytes},
                     {"peak_bytes", s.peak_bytes ? json(*s.peak_bytes) : json()},
                     {"span_ms", s.span_ms ? json(*s.span_ms) : json()},
                     {"busy_ms", s.busy_ms ? json(*s.busy_ms) : json()},
                     {"by_name", std::move(rows)}});
  }
  return {{"profiler", valid_utf8(p.profiler)},
          {"wall_ms", p.wall_ms},
          {"note", p.note ? json(valid_utf8(*p.note)) : json()},
          {"steps", std::move(steps)}};
}

CellProfile profile_from_json(const json& j, const std::string& where) {
  const ProfileParser in{where};
  CellProfile p;
  p.profiler = in.text(in.field(j, "profiler", ""), "/profiler");
  p.wall_ms = in.number(in.field(j, "wall_ms", ""), "/wall_ms");
  if (const json& note = in.field(j, "note", ""); !note.is_null()) p.note = in.text(note, "/note");
  const json& steps = in.field(j, "steps", "");
  if (!steps.is_array()) in.bad("/steps", "expected an array");
  for (size_t i = 0; i < steps.size(); ++i)
    p.steps.push_back(in.step(steps[i], "/steps/" + std::to_string(i)));
  return p;
}

}  // namespace pg::store
