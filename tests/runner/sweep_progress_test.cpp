// Progress lines and bar, the ETA, and the table of a finished run.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "runner/progress.h"
#include "runner/table.h"
#include "runner/text.h"

namespace pg {
namespace {

// The text written to a real FILE* (what stderr would receive).
class CapturedFile {
 public:
  CapturedFile() : f_(std::tmpfile()) {}
  ~CapturedFile() { std::fclose(f_); }
  std::FILE* get() { return f_; }
  std::string text() {
    std::fflush(f_);
    std::rewind(f_);
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f_)) > 0) s.append(buf, n);
    return s;
  }

 private:
  std::FILE* f_;
};

CellKey key(int batch, int seq) {
  CellKey k;
  k.model = "tiny";
  k.dtype = "fp32";
  k.attention = "math";
  k.device = "cpu";
  k.batch_size = batch;
  k.seq_len = seq;
  k.gen_tokens = 4;
  return k;
}

CellResult ok_cell(const CellKey& k, double tpot) {
  CellResult r;
  r.key = k;
  r.metrics = {{"prefill_ms", 2.5},
               {"tpot_ms", tpot},
               {"itl_p50_ms", tpot},
               {"itl_p99_ms", 1.5},
               {"decode_tok_s", 1234.567},
               {"total_tok_s", 98765.4},
               {"cv", 0.021},
               {"peak_alloc_bytes", 12.0 * 1024 * 1024}};
  return r;
}

TEST(Progress, PlainLinesWhenNotATerminal) {
  CapturedFile f;
  runner::ProgressReporter p(f.get(), false);
  std::vector<CellKey> cells = {key(1, 8), key(2, 8)};
  p.sweep_started(cells);
  p.cell_started(0, cells[0]);
  p.cell_finished(0, ok_cell(cells[0], 1.25), 0.5);
  p.cell_started(1, cells[1]);
  CellResult oom;
  oom.key = cells[1];
  oom.status = CellStatus::oom;
  oom.reason = "CUDA out of memory";
  p.cell_finished(1, oom, 0.1);
  pg::Run run;
  run.id = 7;
  run.status = RunStatus::complete;
  p.sweep_finished(run);
  const std::string out = f.text();
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find("\x1b"), std::string::npos);
  std::istringstream lines(out);
  std::string l1, l2, l3;
  std::getline(lines, l1);
  std::getline(lines, l2);
  std::getline(lines, l3);
  EXPECT_EQ(l1,
            "[1/2] tiny fp32 B=1 P=8 gen=4 kv=on math graphs=off cpu: ok, tpot 1.250 ms, prefill "
            "2.500 ms (0.5 s)");
  EXPECT_EQ(
      l2,
      "[2/2] tiny fp32 B=2 P=8 gen=4 kv=on math graphs=off cpu: oom (CUDA out of memory) (0.1 s)");
  EXPECT_TRUE(l3.starts_with("2 of 2 cells in ")) << l3;
  EXPECT_TRUE(l3.ends_with("(run 7, complete)")) << l3;
}

// A model name or a reason from measured code is one inert line in the log (docs/FORMATS.md,
// "Text from measured code"): no line break, no CR, no escape sequence, no workflow command.
TEST(Progress, TextFromMeasuredCodeStaysOnItsLine) {
  CapturedFile f;
  runner::ProgressReporter p(f.get(), false);
  CellKey k = key(1, 8);
  k.model = "m\n::error::pwned";
  p.sweep_started({k});
  CellResult failed;
  failed.key = k;
  failed.status = CellStatus::error;
  failed.reason = "boom\r::warning::x \x1b[2J ##[error]y";
  p.cell_finished(0, failed, 0.1);
  const std::string out = f.text();
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find("##["), std::string::npos) << out;
  EXPECT_EQ(out,
            "[1/1] m\\n::error::pwned fp32 B=1 P=8 gen=4 kv=on math graphs=off cpu: error "
            "(boom\\r::warning::x \\x1B[2J ##\\[error]y) (0.1 s)\n");
}

TEST(Progress, RedrawnBarOnATerminal) {
  CapturedFile f;
  runner::ProgressReporter p(f.get(), true);
  std::vector<CellKey> cells = {key(1, 8), key(1, 8), key(1, 8), key(1, 8)};
  p.sweep_started(cells);
  p.cell_started(0, cells[0]);
  EXPECT_LT(p.eta_seconds(), 0);  // nothing measured yet
  p.cell_finished(0, ok_cell(cells[0], 1.0), 2.0);
  EXPECT_NEAR(p.eta_seconds(), 6.0, 1e-9);  // three more cells of the same size
  p.cell_started(1, cells[1]);
  const std::string out = f.text();
  EXPECT_EQ(out.find('\n'), std::string::npos) << "a bar redraws one line";
  EXPECT_NE(out.find("\r[#####...............] 1/4  ETA 0:06  tiny fp32 B=1 P=8 gen=4 kv=on math"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("ETA --"), std::string::npos);
}

TEST(Progress, EtaWeighsCellsByTheirWork) {
  CapturedFile f;
  runner::ProgressReporter p(f.get(), false);
  std::vector<CellKey> cells = {key(1, 8), key(16, 512)};
  p.sweep_started(cells);
  p.cell_finished(0, ok_cell(cells[0], 1.0), 1.0);
  // The big cell holds far more tokens than the small one, so it is expected to take far longer.
  EXPECT_GT(p.eta_seconds(), 50.0);
}

TEST(Table, AlignedColumnsAndDashesForMissingNumbers) {
  pg::Run run;
  run.id = 3;
  run.cells.push_back(ok_cell(key(1, 8), 0.123456));
  CellResult oom;
  oom.key = key(16, 512);
  oom.status = CellStatus::oom;
  run.cells.push_back(oom);
  const std::string table = runner::format_cell_table(run);
  std::istringstream in(table);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u);
  for (const char* h :
       {"model", "dtype", "B", "P", "kv", "attn", "status", "prefill_ms", "tpot_ms", "itl_p50_ms",
        "itl_p99_ms", "decode_tok/s", "total_tok/s", "peak_alloc", "cv"})
    EXPECT_NE(lines[0].find(h), std::string::npos) << h;
  EXPECT_EQ(lines[0].find("graphs"), std::string::npos);  // only when a cell used them
  EXPECT_NE(lines[1].find("0.1235"), std::string::npos);
  EXPECT_NE(lines[1].find("12.0 MiB"), std::string::npos);
  EXPECT_NE(lines[1].find("2.1%"), std::string::npos);
  EXPECT_NE(lines[1].find("1235"), std::string::npos);
  EXPECT_NE(lines[2].find("oom"), std::string::npos);
  // Right-aligned numbers: every row ends in the same column (the cv column).
  EXPECT_EQ(lines[1].size(), lines[0].size());
  EXPECT_EQ(lines[2].size(), lines[0].size());
  EXPECT_EQ(lines[2].back(), '-');
  // The status column starts at the same offset in every row.
  const size_t status_at = lines[0].find("status");
  EXPECT_EQ(lines[1].substr(status_at, 2), "ok");
  EXPECT_EQ(lines[2].substr(status_at, 3), "oom");
}

TEST(Table, AModelNameFromMeasuredCodeIsOneInertLine) {
  pg::Run run;
  CellResult c = ok_cell(key(1, 8), 0.5);
  c.key.model = "x\n::error::pwned";
  run.cells.push_back(c);
  const std::string table = runner::format_cell_table(run);
  std::istringstream in(table);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u) << table;
  EXPECT_TRUE(lines[1].starts_with("x\\n::error::pwned ")) << table;
}

TEST(Text, Formats) {
  EXPECT_EQ(runner::format_bytes(0), "0 B");
  EXPECT_EQ(runner::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(runner::format_bytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
  EXPECT_EQ(runner::format_duration(75.2), "1:15");
  EXPECT_EQ(runner::format_duration(3700), "1:01:40");
  EXPECT_EQ(runner::format_duration(-1), "?");
}

}  // namespace
}  // namespace pg
