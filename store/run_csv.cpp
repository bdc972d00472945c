#include "store/run_csv.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/cell_key_io.h"
#include "core/metrics.h"

namespace pg::store {
namespace {

// Environment fields that explain a number, as columns named env_<field>.
const std::vector<std::string>& env_columns() {
  static const std::vector<std::string> e = {
      "device", "compute_capability", "driver", "cuda", "cudnn", "torch", "cpu", "hostname"};
  return e;
}

}  // namespace

std::string csv_number(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  line += "\r\n";
  return line;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos &&
      (s.empty() || (s.front() != ' ' && s.back() != ' ')))
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> csv_metric_columns(const std::vector<Run>& runs) {
  std::vector<std::string> cols = metric_names();
  std::set<std::string> extra;
  for (const auto& r : runs)
    for (const auto& c : r.cells)
      for (const auto& [name, v] : c.metrics)
        if (std::find(cols.begin(), cols.end(), name) == cols.end()) extra.insert(name);
  cols.insert(cols.end(), extra.begin(), extra.end());
  return cols;
}

std::vector<std::string> csv_header(const std::vector<Run>& runs) {
  std::vector<std::string> h = {"run_id", "run_status", "started_at", "commit", "branch", "dirty"};
  for (const auto& k : cell_key_csv_header()) h.push_back(k);
  h.push_back("status");
  h.push_back("reason");
  for (const auto& m : csv_metric_columns(runs)) h.push_back(m);
  for (const auto& e : env_columns()) h.push_back("env_" + e);
  return h;
}

std::string runs_to_csv(const std::vector<Run>& runs) {
  const auto metrics = csv_metric_columns(runs);
  std::string out = csv_row(csv_header(runs));
  auto tf = [](bool b) { return std::string(b ? "true" : "false"); };
  for (const auto& r : runs) {
    for (const auto& c : r.cells) {
      std::vector<std::string> row = {
          std::to_string(r.id),      to_string(r.status),       r.started_at,
          r.git.commit.value_or(""), r.git.branch.value_or(""), tf(r.git.dirty)};
      for (auto& v : cell_key_csv_values(c.key)) row.push_back(std::move(v));
      row.push_back(to_string(c.status));
      row.push_back(c.reason.value_or(""));
      for (const auto& m : metrics) {
        auto it = c.metrics.find(m);
        row.push_back(it == c.metrics.end() ? "" : csv_number(it->second));
      }
      for (const auto& e : env_columns()) {
        auto it = r.env.find(e);
        row.push_back(it == r.env.end() ? "" : it->second);
      }
      out += csv_row(row);
    }
  }
  return out;
}

}  // namespace pg::store
