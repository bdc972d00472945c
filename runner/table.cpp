#include "runner/table.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "common/inert_text.h"
#include "common/text_table.h"
#include "runner/text.h"

namespace pg::runner {
namespace {

std::optional<double> metric(const CellResult& c, const std::string& name) {
  auto it = c.metrics.find(name);
  if (it == c.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// Peak memory is the allocator's peak on CUDA and the growth of peak RSS on CPU: two different
// things, so the column says which one it shows.
std::optional<double> peak_memory(const CellResult& c) {
  if (auto v = metric(c, "peak_alloc_bytes")) return v;
  return metric(c, "peak_rss_growth_bytes");
}

std::string peak_memory_header(const Run& run) {
  bool alloc = false, rss = false;
  for (const auto& c : run.cells) {
    alloc |= c.metrics.count("peak_alloc_bytes") > 0;
    rss |= c.metrics.count("peak_rss_growth_bytes") > 0;
  }
  if (alloc && !rss) return "peak_alloc";
  if (rss && !alloc) return "peak_rss_growth";
  return "peak_mem";
}

// Four significant digits without exponent: 0.01234, 1.234, 123.4, 12345.
std::string sig4(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4f}", v);
}

}  // namespace

std::string format_cell_table(const Run& run) {
  bool any_graphs = false;
  for (const auto& c : run.cells) any_graphs |= c.key.cuda_graphs;

  std::vector<TextColumn> cols = {{"model"},           {"dtype"}, {"B", Align::right},
                                  {"P", Align::right}, {"kv"},    {"attn"}};
  if (any_graphs) cols.push_back({"graphs"});
  cols.push_back({"status"});
  for (const std::string h : {"prefill_ms", "tpot_ms", "itl_p50_ms", "itl_p99_ms", "decode_tok/s",
                              "total_tok/s", "peak_mem", "cv"})
    cols.push_back({h == "peak_mem" ? peak_memory_header(run) : h, Align::right});

  TextTable table(std::move(cols));
  for (const auto& c : run.cells) {
    const CellKey& k = c.key;
    std::vector<std::string> r = {inert_text(k.model, kInertNameChars),  // from measured code
                                  k.dtype,
                                  std::to_string(k.batch_size),
                                  std::to_string(k.seq_len),
                                  k.kv_cache ? "on" : "off",
                                  k.attention};
    if (any_graphs) r.push_back(k.cuda_graphs ? "on" : "off");
    r.push_back(to_string(c.status));
    auto num = [&](const char* name) {
      auto v = metric(c, name);
      return v ? sig4(*v) : std::string("-");
    };
    r.push_back(num("prefill_ms"));
    r.push_back(num("tpot_ms"));
    r.push_back(num("itl_p50_ms"));
    r.push_back(num("itl_p99_ms"));
    r.push_back(num("decode_tok_s"));
    r.push_back(num("total_tok_s"));
    auto mem = peak_memory(c);
    r.push_back(mem ? format_bytes(*mem) : "-");
    auto cv = metric(c, "cv");
    r.push_back(cv ? fmt::format("{:.1f}%", *cv * 100) : "-");
    table.add_row(std::move(r));
  }
  return table.render();
}

void TableReporter::sweep_finished(const Run& run) {
  fmt::print(out_, "\n{}", format_cell_table(run));
  std::fflush(out_);
}

}  // namespace pg::runner
