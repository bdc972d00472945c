// The key of a cell (one point of the sweep), described once by a field table. Everything that
// names, stores, prints or compares a key walks kKeyFields: the SQLite columns (store/), the JSON
// and CSV (core/cell_key_io.h), the label people read (core/cell_label.h) and the comparison that
// decides whether two cells are the same cell. Adding a field: docs/CONTRIBUTING.md, "Adding a key
// field or a metric". The fields themselves are documented in docs/METRICS.md, "The cell".
#pragma once
#include <array>
#include <compare>
#include <string>

namespace pg {

struct CellKey {
  std::string model;  // "tiny", "gpt2", "cs336-small", "file:/path/x.safetensors"
  std::string dtype;  // "fp32" | "fp16" | "bf16"
  int batch_size = 1;
  int seq_len = 1;  // prompt length
  int gen_tokens = 32;
  bool kv_cache = true;
  std::string attention;  // "sdpa" | "math"
  bool cuda_graphs = false;
  std::string device;  // "cpu" | "cuda" | "cuda:N"
};

// What a field holds; decides its SQL type, its JSON type and how it is written as text.
enum class KeyFieldKind { text, integer, flag };

struct KeyField {
  const char* name;        // C++ member, and the docs' name
  const char* sql_column;  // column of the series and cells tables (docs/STORE.md)
  const char* json_key;    // in the export, compare JSON and the API (docs/FORMATS.md)
  const char* csv_header;  // column of the CSV export
  KeyFieldKind kind;
  std::string CellKey::*text = nullptr;  // the member, for kind == text
  int CellKey::*integer = nullptr;       // ... integer
  bool CellKey::*flag = nullptr;         // ... flag
  // The label: prefix + value ("B=4", "kv=on"; a flag reads on/off), "" for the bare value.
  const char* label_prefix = "";
  bool in_short_label = true;   // false: views that show the field beside the label leave it out
  bool identifies_cell = true;  // part of comparability: differing values make different cells
};

inline constexpr std::array<KeyField, 9> kKeyFields = {{
    {"model", "model", "model", "model", KeyFieldKind::text, &CellKey::model, nullptr, nullptr, "",
     /*in_short_label=*/false},
    {"dtype", "dtype", "dtype", "dtype", KeyFieldKind::text, &CellKey::dtype},
    {"batch_size", "batch_size", "batch_size", "batch_size", KeyFieldKind::integer, nullptr,
     &CellKey::batch_size, nullptr, "B="},
    {"seq_len", "seq_len", "seq_len", "seq_len", KeyFieldKind::integer, nullptr, &CellKey::seq_len,
     nullptr, "P="},
    {"gen_tokens", "gen_tokens", "gen_tokens", "gen_tokens", KeyFieldKind::integer, nullptr,
     &CellKey::gen_tokens, nullptr, "gen="},
    {"kv_cache", "kv_cache", "kv_cache", "kv_cache", KeyFieldKind::flag, nullptr, nullptr,
     &CellKey::kv_cache, "kv="},
    {"attention", "attention", "attention", "attention", KeyFieldKind::text, &CellKey::attention},
    {"cuda_graphs", "cuda_graphs", "cuda_graphs", "cuda_graphs", KeyFieldKind::flag, nullptr,
     nullptr, &CellKey::cuda_graphs, "graphs="},
    {"device", "device", "device", "device", KeyFieldKind::text, &CellKey::device},
}};

// Field-by-field over the fields that identify a cell, in the table's order: the order of
// std::map<CellKey, ...>, and so of every report that lists cells by key.
std::strong_ordering compare_keys(const CellKey& a, const CellKey& b);
inline std::strong_ordering operator<=>(const CellKey& a, const CellKey& b) {
  return compare_keys(a, b);
}
inline bool operator==(const CellKey& a, const CellKey& b) { return compare_keys(a, b) == 0; }

// A field's value as text: the text itself, the decimal integer, or "true" / "false".
std::string key_field_text(const CellKey& key, const KeyField& field);

}  // namespace pg
