// The worker's request loop: stdin read on a thread of its own (so that the end of input stops
// the process even mid-repetition), each request answered in order on stdout.
#include "runner/worker/worker.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "runner/lm/artifact.h"
#include "runner/lm/measure.h"
#include "runner/lm/presets.h"
#include "runner/worker/worker_cell.h"
#include "runner/worker/worker_facts.h"
#include "runner/worker/worker_lines.h"

namespace pg::worker {
namespace {

using nlohmann::json;

constexpr size_t kMaxInputLine = 1 << 20;

// Lines of `fd`, read by a thread. The end of input before an end request was read ends the
// process (docs/PROTOCOL.md: a worker whose driver closed stdin exits promptly), until settle().
class InputLines {
 public:
  explicit InputLines(int fd) : state_(std::make_shared<State>()) {
    std::thread([fd, state = state_] { state->read_all(fd); }).detach();
  }
  ~InputLines() { settle(); }
  InputLines(const InputLines&) = delete;
  InputLines& operator=(const InputLines&) = delete;

  // The next line (without its newline), or nullopt at the end of input.
  std::optional<std::string> next() {
    std::unique_lock lock(state_->mu);
    state_->ready.wait(lock, [&] { return !state_->lines.empty() || state_->ended; });
    if (state_->lines.empty()) return std::nullopt;
    std::string l = std::move(state_->lines.front());
    state_->lines.pop_front();
    return l;
  }

  // A cell ended well and the worker waits for the next one: from here the end of input ends the
  // process again until the next end request.
  void expect_more() {
    std::lock_guard lock(state_->mu);
    state_->saw_end = false;
  }

  // The last line is being written: the end of input no longer ends the process, so that the
  // exit status is the one serve_worker returns.
  void settle() {
    std::lock_guard lock(state_->mu);
    state_->settled = true;
  }

 private:
  // Shared with the reading thread, which may outlive the InputLines.
  struct State {
    std::mutex mu;
    std::condition_variable ready;
    std::deque<std::string> lines;
    bool saw_end = false, settled = false, ended = false;

    void push(std::string l) {
      const json j = json::parse(l, nullptr, false);
      const bool end = j.is_object() && j.contains("op") && j["op"] == "end";
      std::lock_guard lock(mu);
      saw_end = saw_end || end;
      lines.push_back(std::move(l));
      ready.notify_one();
    }

    void read_all(int fd) {
      std::string partial;
      std::vector<char> buf(65536);
      while (true) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        partial.append(buf.data(), static_cast<size_t>(n));
        size_t start = 0, nl;
        while ((nl = partial.find('\n', start)) != std::string::npos) {
          push(partial.substr(start, nl - start));
          start = nl + 1;
        }
        partial.erase(0, start);
        if (partial.size() > kMaxInputLine) {
          push(partial);  // refused as a request: over the limit without a newline
          partial.clear();
        }
      }
      if (!partial.empty()) push(partial);
      std::lock_guard lock(mu);
      if (!saw_end && !settled) std::_Exit(0);  // the driver is gone: stop, whatever runs
      ended = true;
      ready.notify_one();
    }
  };
  std::shared_ptr<State> state_;
};

void write_line(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw RuntimeFailure(std::string("cannot write to stdout: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

struct Request {
  enum class Op { rep, end } op = Op::end;
};

// One request line: {"op":"rep","rep":i} with i the next repetition (below reps), or
// {"op":"end"}. Throws UsageError naming the line.
Request read_request(const std::string& text, int line_no, int next_rep, int reps) {
  const std::string where = "request line " + std::to_string(line_no) + ": ";
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) throw UsageError(where + "not a JSON object: " + text.substr(0, 80));
  auto op = j.find("op");
  if (op == j.end() || !op->is_string())
    throw UsageError(where + "\"op\" must be \"rep\" or \"end\"");
  if (*op == "end") {
    if (j.size() != 1) throw UsageError(where + "an end request has no key but \"op\"");
    return {Request::Op::end};
  }
  if (*op != "rep")
    throw UsageError(where + "unknown op " + op->dump() + " (expected \"rep\" or \"end\")");
  for (const auto& [k, v] : j.items())
    if (k != "op" && k != "rep")
      throw UsageError(where + "unknown key \"" + k.substr(0, 60) + "\"");
  auto rep = j.find("rep");
  if (rep == j.end() || !rep->is_number_integer() || rep->get<int64_t>() != next_rep)
    throw UsageError(where + "\"rep\" must be " + std::to_string(next_rep) +
                     " (repetitions are asked for from 0, in order), got " +
                     (rep == j.end() ? std::string("none") : rep->dump()));
  if (next_rep >= reps)
    throw UsageError(where + "repetition " + std::to_string(next_rep) + " is beyond the cell's " +
                     std::to_string(reps) + " (its \"reps\")");
  return {Request::Op::rep};
}

// The cell as `perfgate run` takes it: artifacts resolved against the repository, then checked.
void resolve_cell(WorkerCell& c) {
  if (lm::is_file_model(c.key.model) || lm::is_aoti_model(c.key.model))
    c.key.model = lm::register_model_artifact(c.key.model, c.repo, {c.key.batch_size},
                                              SettingError::setting("model"));
  lm::check_cell_supported(c.key);
}

std::string refusal(const std::exception& e, const SettingSpelling& spell) {
  if (const auto* s = dynamic_cast<const SettingError*>(&e)) return s->spelled(spell);
  return e.what();
}

// One cell, from its line to its end line: nullopt when it ended well (the worker then waits for
// the next cell), else the exit status the worker ends with.
std::optional<int> serve_cell(const std::string& cell_text, InputLines& input, int out_fd,
                              const std::string& cwd, const SettingSpelling& spell,
                              lm::LibTorchMeasurer& measurer,
                              std::optional<uint64_t> placement_seed) {
  WorkerCell cell;
  std::optional<HelloFacts> facts;
  std::optional<std::string> refused;
  try {
    cell = read_worker_cell(cell_text, cwd);
    cell.opt.placement_seed = placement_seed;
    resolve_cell(cell);
    facts = hello_facts(cell.key);
  } catch (const std::exception& e) {
    refused = refusal(e, spell);
  }
  write_line(out_fd, hello_line(lm::torch_version(), facts));
  auto fail = [&](CellStatus status, const std::string& reason, int exit_code) {
    input.settle();
    write_line(out_fd, failure_line(status, reason));
    return exit_code;
  };
  if (refused) return fail(CellStatus::error, *refused, kExitUsage);

  std::unique_ptr<lm::CellSession> session;
  try {
    session = measurer.open(cell.key, cell.opt);
  } catch (const lm::CellFailure& e) {
    return fail(e.status, e.what(), kExitRuntime);
  } catch (const std::exception& e) {
    return fail(CellStatus::error, refusal(e, spell), kExitUsage);
  }
  // The package's logits failed their check: perfgate run stores such a cell as invalid.
  auto invalid = [&] {
    const auto why = session->invalid_reason();
    if (why) fail(CellStatus::error, "invalid output: " + *why, kExitRuntime);
    return why.has_value();
  };
  if (invalid()) return kExitRuntime;
  write_line(out_fd, ready_line());

  int line_no = 1, next_rep = 0;
  while (const std::optional<std::string> text = input.next()) {
    ++line_no;
    if (text->find_first_not_of(" \t\r") == std::string::npos) continue;
    Request req;
    try {
      req = read_request(*text, line_no, next_rep, cell.opt.reps);
    } catch (const UsageError& e) {
      return fail(CellStatus::error, e.what(), kExitUsage);
    }
    try {
      if (req.op == Request::Op::rep) {
        const lm::RepSample s = session->repetition();
        if (invalid()) return kExitRuntime;
        write_line(out_fd, rep_line(next_rep++, s));
        continue;
      }
      const CellResult r = session->finish();
      if (cell.opt.profile && r.profile) write_line(out_fd, profile_line(*r.profile));
      const bool cuda = cell.key.device != "cpu";
      write_line(out_fd, end_line(cuda ? session->memory_peak() : std::nullopt));
      input.expect_more();
      return std::nullopt;
    } catch (const lm::CellFailure& e) {
      return fail(e.status, e.what(), kExitRuntime);
    }
  }
  return kExitOk;  // the input ended after an end request had been read
}

// PERFGATE_PLACEMENT_SEED (docs/PROTOCOL.md, "Worker mode"): perfgate ab's seed for this
// worker's placements; unset or empty: none. Anything but an unsigned decimal is refused.
std::optional<uint64_t> placement_seed_from_env() {
  const char* v = std::getenv("PERFGATE_PLACEMENT_SEED");
  if (!v || !*v) return std::nullopt;
  const std::string text = v;
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 20)
    throw UsageError("PERFGATE_PLACEMENT_SEED must be an unsigned decimal integer, got '" +
                     text.substr(0, 40) + "'");
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    throw UsageError("PERFGATE_PLACEMENT_SEED is beyond 64 bits: " + text);
  }
}

}  // namespace

uint64_t opening_placement_seed(uint64_t worker_seed, uint64_t opening) {
  // SplitMix64's finalizer over the pair: neighbouring seeds and openings give unrelated draws.
  uint64_t z = worker_seed + 0x9E3779B97F4A7C15ULL * (opening + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int serve_worker(int in_fd, int out_fd, const std::string& cwd, const SettingSpelling& spell) {
  const std::optional<uint64_t> placement = placement_seed_from_env();
  InputLines input(in_fd);
  // One measurer for every cell: consecutive cells of one model reuse the loaded weights.
  lm::LibTorchMeasurer measurer;
  uint64_t opened = 0;
  while (const std::optional<std::string> cell_text = input.next()) {
    if (cell_text->find_first_not_of(" \t\r") == std::string::npos) continue;
    // Every opening of a cell draws its own placement, also a cell this worker served before.
    std::optional<uint64_t> seed;
    if (placement) seed = opening_placement_seed(*placement, opened++);
    if (auto exit_status = serve_cell(*cell_text, input, out_fd, cwd, spell, measurer, seed))
      return *exit_status;
  }
  return kExitOk;  // the driver closed stdin after an end line: no more cells
}

}  // namespace pg::worker
