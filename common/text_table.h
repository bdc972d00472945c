// The one aligned text table of every terminal output: `perfgate run`'s result table, `perfgate
// runs` and the gate's table report. Columns are separated by two blanks, text aligns left and
// numbers right, and no line ends in blanks. Widths count bytes: the cells are ASCII.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace pg {

enum class Align { left, right };

struct TextColumn {
  std::string header;
  Align align = Align::left;
};

class TextTable {
 public:
  explicit TextTable(std::vector<TextColumn> columns) : columns_(std::move(columns)) {}

  // `style`, when not empty, is an ANSI SGR sequence ("\033[31m") painted over the row's first
  // cell after padding, so escapes never skew the columns. Missing cells are blank.
  void add_row(std::vector<std::string> cells, std::string style = "") {
    cells.resize(columns_.size());
    rows_.push_back({std::move(cells), std::move(style)});
  }
  void set_header_style(std::string style) { header_style_ = std::move(style); }
  bool empty() const { return rows_.empty(); }

  // The header line, then one line per row, each ending in '\n'.
  std::string render() const {
    std::vector<size_t> width(columns_.size());
    for (size_t i = 0; i < columns_.size(); ++i) {
      width[i] = columns_[i].header.size();
      for (const Row& r : rows_) width[i] = std::max(width[i], r.cells[i].size());
    }
    std::vector<std::string> headers;
    for (const TextColumn& c : columns_) headers.push_back(c.header);
    std::string out = line({headers, header_style_}, width);
    for (const Row& r : rows_) out += line(r, width);
    return out;
  }

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string style;
  };

  std::string line(const Row& row, const std::vector<size_t>& width) const {
    std::string s;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string& text = row.cells[i];
      const std::string pad(width[i] - text.size(), ' ');
      std::string cell = columns_[i].align == Align::right ? pad + text : text + pad;
      if (i == 0 && !row.style.empty()) cell = row.style + cell + "\033[0m";
      s += (i ? "  " : "") + cell;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + '\n';
  }

  std::vector<TextColumn> columns_;
  std::vector<Row> rows_;
  std::string header_style_;
};

}  // namespace pg
