#include "runner/exec/exec_profile.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "common/inert_text.h"
#include "runner/exec/exec_protocol.h"

namespace pg::exec {
namespace {

using nlohmann::json;

// Reads one object of the line; `where` is its path for messages ("profile.steps[2]").
class Fields {
 public:
  Fields(const json& obj, std::string where, int line)
      : obj_(obj), where_(std::move(where)), line_(line) {
    if (!obj_.is_object()) fail(where_, std::string("must be an object, got ") + obj_.type_name());
  }

  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw ProtocolError(line_, path + " " + why);
  }
  std::string path(const char* key) const { return where_ + "." + key; }

  // Unknown keys are refused, as in every protocol line.
  void only_keys(std::initializer_list<const char*> allowed) const {
    const std::set<std::string> ok(allowed.begin(), allowed.end());
    for (const auto& [k, v] : obj_.items())
      if (!ok.count(k))
        fail(where_, "has an unknown key \"" + inert_text(k, kInertNameChars) + "\"");
  }
  const json& required(const char* key) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) fail(path(key), "is missing");
    return *it;
  }
  const json* optional(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }

  int64_t count(const char* key) const {
    const json& v = required(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      fail(path(key), "must be an integer >= 0, got " + shown(v));
    return v.get<int64_t>();
  }
  double millis(const char* key) const {
    const json& v = required(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      fail(path(key), "must be a finite number >= 0 (milliseconds), got " + shown(v));
    return v.get<double>();
  }
  // A name: non-empty UTF-8 (the JSON parser checked that) of at most `max_bytes`, without
  // control characters.
  std::string name(const json& v, const std::string& p, size_t max_bytes) const {
    if (!v.is_string() || v.get<std::string>().empty())
      fail(p, "must be a non-empty string, got " + shown(v));
    const std::string s = v.get<std::string>();
    if (s.size() > max_bytes)
      fail(p, "is " + std::to_string(s.size()) + " bytes long, at most " +
                  std::to_string(max_bytes) + " are accepted");
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7F) fail(p, "must not contain control characters");
    return s;
  }

  static std::string shown(const json& v) {
    const std::string d = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return inert_text(d.size() > 60 ? d.substr(0, 60) + "..." : d, kInertNameChars);
  }

 private:
  const json& obj_;
  std::string where_;
  int line_;
};

ProfileStep read_step(const json& j, const std::string& where, int line, int expected_step) {
  const Fields f(j, where, line);
  f.only_keys({"step", "wall_ms", "ops", "kernels", "syncs", "d2h_copies", "alloc_bytes",
               "peak_bytes", "span_ms", "busy_ms", "by_name"});
  ProfileStep s;
  const json& index = f.required("step");
  if (!index.is_number_integer() || index.get<int64_t>() != expected_step)
    f.fail(f.path("step"), "must be " + std::to_string(expected_step) +
                               " (-1 the prefill, then the decode steps from 0 in order), got " +
                               Fields::shown(index));
  s.step = expected_step;
  s.wall_ms = f.millis("wall_ms");
  s.ops = f.count("ops");
  s.kernels = f.count("kernels");
  s.syncs = f.count("syncs");
  s.d2h_copies = f.count("d2h_copies");
  s.alloc_bytes = f.count("alloc_bytes");
  if (f.optional("peak_bytes")) s.peak_bytes = f.count("peak_bytes");
  if (f.optional("span_ms") || f.optional("busy_ms")) {
    if (!f.optional("span_ms") || !f.optional("busy_ms"))
      f.fail(f.path(f.optional("span_ms") ? "busy_ms" : "span_ms"),
             "is missing: span_ms and busy_ms go together");
    s.span_ms = f.millis("span_ms");
    s.busy_ms = f.millis("busy_ms");
    if (*s.busy_ms > *s.span_ms * (1 + 1e-9) + 1e-9)
      f.fail(f.path("busy_ms"),
             "must not exceed span_ms, got " + Fields::shown(f.required("busy_ms")));
  }
  const json& rows = f.required("by_name");
  if (!rows.is_array())
    f.fail(f.path("by_name"), "must be an array of {kind, name, count, total_ms}");
  if (rows.size() > kMaxProfileRowsPerStep)
    f.fail(f.path("by_name"), "has " + std::to_string(rows.size()) + " rows, at most " +
                                  std::to_string(kMaxProfileRowsPerStep) + " are accepted");
  std::set<std::pair<ProfileOpKind, std::string>> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Fields r(rows[i], f.path("by_name") + "[" + std::to_string(i) + "]", line);
    r.only_keys({"kind", "name", "count", "total_ms"});
    ProfileOp op;
    const json& kind = r.required("kind");
    const auto k = kind.is_string() ? profile_op_kind(kind.get<std::string>()) : std::nullopt;
    if (!k) r.fail(r.path("kind"), "must be \"op\" or \"kernel\", got " + Fields::shown(kind));
    op.kind = *k;
    op.name = r.name(r.required("name"), r.path("name"), kMaxProfileNameBytes);
    op.count = r.count("count");
    op.total_ms = r.millis("total_ms");
    if (!seen.insert({op.kind, op.name}).second)
      r.fail(r.path("name"), "repeats the " + std::string(to_string(op.kind)) + " \"" +
                                 inert_text(op.name, kInertNameChars) +
                                 "\" of an earlier row: one row per name and kind");
    s.ops_by_name.push_back(std::move(op));
  }
  return s;
}

}  // namespace

CellProfile read_profile_line(const json& j, int line, int gen_tokens) {
  const Fields f(j, "profile", line);
  f.only_keys({"type", "profiler", "wall_ms", "note", "steps"});
  CellProfile p;
  p.profiler = f.name(f.required("profiler"), f.path("profiler"), kMaxProfilerNameBytes);
  p.wall_ms = f.millis("wall_ms");
  if (const json* note = f.optional("note")) {
    if (!note->is_string())
      f.fail(f.path("note"), "must be a string or null, got " + Fields::shown(*note));
    p.note = inert_text(note->get<std::string>(), kMaxProfileNoteChars);
  }
  const json& steps = f.required("steps");
  if (!steps.is_array())
    f.fail(f.path("steps"), "must be an array (the prefill, then each decode step)");
  const size_t expected = static_cast<size_t>(gen_tokens);
  if (!steps.empty() && steps.size() != expected)
    f.fail(f.path("steps"), "has " + std::to_string(steps.size()) + " entries, expected " +
                                std::to_string(expected) + " (the prefill + " +
                                std::to_string(expected - 1) + " decode steps) or none");
  for (size_t i = 0; i < steps.size(); ++i)
    p.steps.push_back(read_step(steps[i], f.path("steps") + "[" + std::to_string(i) + "]", line,
                                static_cast<int>(i) - 1));
  return p;
}

}  // namespace pg::exec
