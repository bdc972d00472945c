#include "runner/exec/exec_protocol.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "runner/exec/exec_profile.h"

namespace pg::exec {
namespace {

using nlohmann::json;

class LineCheck {
 public:
  LineCheck(const json& j, int line) : j_(j), line_(line) {}

  [[noreturn]] void fail(const std::string& why) const { throw ProtocolError(line_, why); }

  // Unknown keys are refused: a misspelt optional key would otherwise be dropped silently.
  void only_keys(std::initializer_list<const char*> allowed, const std::string& what) const {
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (const auto& [k, v] : j_.items())
      if (!ok.count(k)) fail("unknown key \"" + k + "\" in a " + what + " line");
  }

  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }

  std::string text(const char* key, bool required) const {
    const json* v = find(key);
    if (!v) {
      if (required) fail("\"" + std::string(key) + "\" is missing");
      return "";
    }
    if (!v->is_string() || v->get<std::string>().empty())
      fail("\"" + std::string(key) + "\" must be a non-empty string");
    return v->get<std::string>();
  }

 private:
  const json& j_;
  int line_;
};

// A positive finite number; `where` names it in the message.
double positive(const json& v, const std::string& where, int line) {
  if (!v.is_number()) throw ProtocolError(line, where + " must be a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0)
    throw ProtocolError(line, where + " must be a positive finite number, got " + v.dump());
  return d;
}

ModelFacts read_facts(const json& m, int line) {
  if (!m.is_object()) throw ProtocolError(line, "\"model\" must be an object");
  LineCheck c(m, line);
  c.only_keys(
      {"display_name", "param_bytes", "flops_per_token", "kv_bytes_per_token", "vocab", "context"},
      "hello's model");
  ModelFacts f;
  if (c.find("display_name")) f.display_name = c.text("display_name", true);
  auto num = [&](const char* key, std::optional<double>& out) {
    if (const json* v = c.find(key)) out = positive(*v, std::string("model.") + key, line);
  };
  num("param_bytes", f.param_bytes);
  num("flops_per_token", f.flops_per_token);
  num("kv_bytes_per_token", f.kv_bytes_per_token);
  num("vocab", f.vocab);
  num("context", f.context);
  return f;
}

EngineInfo read_hello(const json& j, int line, ProtocolMode mode) {
  LineCheck c(j, line);
  if (mode == ProtocolMode::worker)
    c.only_keys({"type", "protocol", "engine", "versions", "model", "cells"}, "hello");
  else
    c.only_keys({"type", "protocol", "engine", "versions", "model"}, "hello");
  const std::string spoken =
      std::to_string(kOldestProtocolVersion) + " to " + std::to_string(kProtocolVersion);
  const json* proto = c.find("protocol");
  if (!proto) c.fail("hello has no \"protocol\" (this perfgate speaks protocol " + spoken + ")");
  if (!proto->is_number_integer() || proto->get<int64_t>() < kOldestProtocolVersion ||
      proto->get<int64_t>() > kProtocolVersion)
    c.fail("protocol " + proto->dump() + " is not one this perfgate speaks (it speaks " + spoken +
           ")");
  EngineInfo e;
  e.protocol = proto->get<int>();
  if (mode == ProtocolMode::worker && e.protocol < kWorkerProtocolVersion)
    c.fail("the benchmark speaks protocol " + std::to_string(e.protocol) +
           ", which has no worker mode: `perfgate ab` needs protocol " +
           std::to_string(kWorkerProtocolVersion) +
           " (python/perfgate_bench.py of this perfgate speaks it)");
  e.name = c.text("engine", true);
  if (const json* v = c.find("versions")) {
    if (!v->is_object()) c.fail("\"versions\" must be an object of strings");
    for (const auto& [k, val] : v->items()) {
      if (k.empty() || !val.is_string())
        c.fail("versions." + k + " must be a string (e.g. \"2.11.0\")");
      e.versions[k] = val.get<std::string>();
    }
  }
  if (const json* m = c.find("model")) e.model = read_facts(*m, line);
  if (const json* cells = c.find("cells")) {
    if (!cells->is_string() || (*cells != "one" && *cells != "many"))
      c.fail("\"cells\" must be \"one\" or \"many\", got " + cells->dump());
    e.many_cells = *cells == "many";
  }
  return e;
}

}  // namespace

void ProtocolReader::feed(std::string_view raw) {
  ++line_no_;
  const int line = line_no_;
  if (raw.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (state_ == State::done) throw ProtocolError(line, "output after the last (end) line");
  json j;
  const std::string shown = std::string(raw.substr(0, 80)) + (raw.size() > 80 ? "..." : "");
  try {
    j = json::parse(raw);
  } catch (const json::parse_error& e) {
    throw ProtocolError(line, "not valid JSON (at byte " + std::to_string(e.byte) + "): " + shown);
  } catch (const json::exception&) {
    throw ProtocolError(line, "a number out of range (JSON numbers must fit a double): " + shown);
  }
  if (!j.is_object()) throw ProtocolError(line, "not a JSON object: " + j.dump().substr(0, 80));
  LineCheck c(j, line);
  const std::string type = c.text("type", true);

  if (type == "oom" || type == "error") {
    c.only_keys({"type", "reason"}, type);
    failure_ = type == "oom" ? CellStatus::oom : CellStatus::error;
    failure_reason_ = c.find("reason") ? c.text("reason", true) : "(no reason given)";
    state_ = State::done;
    return;
  }
  if (state_ == State::want_hello) {
    if (type != "hello") c.fail("the first line must be the hello line, got a " + type + " line");
    engine_ = read_hello(j, line, mode_);
    protocol_ = engine_->protocol;
    state_ = mode_ == ProtocolMode::worker ? State::want_ready : State::want_rep;
    return;
  }
  if (type == "hello") c.fail("a second hello line");
  const bool worker = mode_ == ProtocolMode::worker;
  if (type == "ready") {
    if (!worker) c.fail("a ready line, which only a worker prints (protocol 3, `perfgate ab`)");
    if (state_ != State::want_ready) c.fail("a second ready line");
    c.only_keys({"type"}, "ready");
    state_ = State::want_rep;
    return;
  }
  if (state_ == State::want_ready)
    c.fail("the line after the hello line must be the ready line (once the warm-up ran), got a " +
           type + " line");
  if (type == "rep") {
    c.only_keys({"type", "rep", "prefill_ms", "decode_ms"}, "rep");
    if (worker && asked_ != Asked::rep)
      c.fail(
          "a rep line perfgate did not ask for (a worker prints one in answer to each rep "
          "request)");
    const size_t expected = reps_seen();
    if (expected >= static_cast<size_t>(reps_))
      c.fail("more than the " + std::to_string(reps_) + " repetitions asked for (PERFGATE_REPS)");
    const json* rep = c.find("rep");
    if (!rep || !rep->is_number_integer() || rep->get<int64_t>() != static_cast<int64_t>(expected))
      c.fail("\"rep\" must be " + std::to_string(expected) +
             " (repetitions are numbered from 0, in order), got " + (rep ? rep->dump() : "none"));
    const json* p = c.find("prefill_ms");
    if (!p) c.fail("\"prefill_ms\" is missing");
    const double prefill = positive(*p, "prefill_ms", line);
    const json* d = c.find("decode_ms");
    if (!d || !d->is_array()) c.fail("\"decode_ms\" must be an array of the decode steps' times");
    const size_t steps = static_cast<size_t>(gen_tokens_ - 1);
    if (d->size() != steps)
      c.fail("decode_ms has " + std::to_string(d->size()) + " entries, expected " +
             std::to_string(steps) + " (gen-tokens " + std::to_string(gen_tokens_) + " = 1 + " +
             std::to_string(steps) + " decode steps)");
    std::vector<double> decode;
    decode.reserve(steps);
    for (size_t i = 0; i < d->size(); ++i)
      decode.push_back(positive((*d)[i], "decode_ms[" + std::to_string(i) + "]", line));
    samples_.prefill_ms.push_back(prefill);
    samples_.decode_ms.push_back(std::move(decode));
    asked_ = Asked::nothing;
    return;
  }
  if (worker && asked_ != Asked::end && (type == "profile" || type == "end"))
    c.fail((type == "end" ? "an end" : "a profile") +
           std::string(" line before perfgate asked for the end (a worker prints it in answer to "
                       "the end request)"));
  if (type == "profile") {
    if (protocol_ < 2)
      c.fail("a profile line needs protocol 2 (the hello line said " + std::to_string(protocol_) +
             ")");
    if (!profile_asked_)
      c.fail("a profile line, but perfgate asked for none (the cell's profile is off)");
    if (profile_) c.fail("a second profile line");
    if (reps_seen() != static_cast<size_t>(reps_))
      c.fail("a profile line after " + std::to_string(reps_seen()) + " of " +
             std::to_string(reps_) + " repetitions (it comes after the last rep line)");
    profile_ = read_profile_line(j, line, gen_tokens_);
    return;
  }
  if (type == "end") {
    c.only_keys({"type", "peak_alloc_bytes"}, "end");
    if (reps_seen() != static_cast<size_t>(reps_))
      c.fail("end after " + std::to_string(reps_seen()) + " of " + std::to_string(reps_) +
             " repetitions");
    if (const json* v = c.find("peak_alloc_bytes"))
      peak_alloc_bytes_ = positive(*v, "peak_alloc_bytes", line);
    state_ = State::done;
    return;
  }
  c.fail("unknown line type \"" + type + "\" (expected hello, " + (worker ? "ready, " : "") +
         "rep, profile, end, oom or error)");
}

void ProtocolReader::asked_rep() { asked_ = Asked::rep; }

void ProtocolReader::asked_end() {
  asked_ = Asked::end;
  reps_ = static_cast<int>(reps_seen());
}

}  // namespace pg::exec
