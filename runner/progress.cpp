#include "runner/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/inert_text.h"
#include "core/cell_label.h"
#include "runner/text.h"

namespace pg::runner {

namespace {

// Work of one cell, for the ETA: every token of prompt and generation of every sequence, plus a
// per-step term because a decode step costs at least one pass over the weights whatever the batch.
double cell_weight(const CellKey& k) {
  return static_cast<double>(k.batch_size) * (k.seq_len + k.gen_tokens) + 8.0 * k.gen_tokens;
}

int terminal_width(std::FILE* out) {
  winsize ws{};
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

// The label and the reason come from measured code: one inert line each (common/inert_text.h).
std::string label(const CellKey& key) { return inert_text(cell_label(key), kInertNameChars); }

std::string outcome_text(const CellResult& r) {
  if (r.status != CellStatus::ok)
    return to_string(r.status) +
           (r.reason ? " (" + inert_text(*r.reason, kInertMessageChars) + ")" : std::string());
  std::string s = "ok";
  if (auto it = r.metrics.find("tpot_ms"); it != r.metrics.end())
    s += fmt::format(", tpot {:.3f} ms", it->second);
  if (auto it = r.metrics.find("prefill_ms"); it != r.metrics.end())
    s += fmt::format(", prefill {:.3f} ms", it->second);
  return s;
}

}  // namespace

ProgressReporter::ProgressReporter(std::FILE* out, bool terminal)
    : out_(out), terminal_(terminal) {}

void ProgressReporter::sweep_started(const std::vector<CellKey>& cells) {
  weight_.clear();
  for (const auto& c : cells) weight_.push_back(cell_weight(c));
  total_weight_ = 0;
  for (double w : weight_) total_weight_ += w;
  done_weight_ = busy_seconds_ = 0;
  done_ = 0;
  started_ = std::chrono::steady_clock::now();
}

double ProgressReporter::eta_seconds() const {
  if (done_weight_ <= 0) return -1;
  return busy_seconds_ / done_weight_ * (total_weight_ - done_weight_);
}

void ProgressReporter::draw_bar(const CellKey& current) {
  const size_t total = weight_.size();
  const double eta = eta_seconds();
  const std::string eta_text = eta < 0 ? "ETA --" : "ETA " + format_duration(eta);
  constexpr int kBarWidth = 20;
  const int filled = total ? static_cast<int>(kBarWidth * done_ / total) : kBarWidth;
  std::string line =
      fmt::format("[{}{}] {}/{}  {}  {}", std::string(filled, '#'),
                  std::string(kBarWidth - filled, '.'), done_, total, eta_text, label(current));
  const size_t width = static_cast<size_t>(terminal_width(out_)) - 1;
  if (line.size() > width) line.resize(width);
  // \r back to the start, the line, then erase what a longer previous line left behind.
  fmt::print(out_, "\r{}\x1b[K", line);
  std::fflush(out_);
}

void ProgressReporter::cell_started(size_t /*index*/, const CellKey& key) {
  if (terminal_) draw_bar(key);
}

void ProgressReporter::cell_finished(size_t index, const CellResult& result, double seconds) {
  ++done_;
  busy_seconds_ += seconds;
  if (index < weight_.size()) done_weight_ += weight_[index];
  if (terminal_) {
    draw_bar(result.key);
    return;
  }
  fmt::print(out_, "[{}/{}] {}: {} ({:.1f} s)\n", done_, weight_.size(), label(result.key),
             outcome_text(result), seconds);
  std::fflush(out_);
}

void ProgressReporter::sweep_finished(const Run& run) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (terminal_) fmt::print(out_, "\r\x1b[K");
  fmt::print(out_, "{} of {} cells in {} (run {}, {})\n", done_, weight_.size(),
             format_duration(elapsed), run.id, to_string(run.status));
  std::fflush(out_);
}

}  // namespace pg::runner
