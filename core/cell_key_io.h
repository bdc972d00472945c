// A cell key in and out of JSON, CSV and SQL, all driven by core/cell_key.h's field table, so the
// export, the compare JSON, the API, the CSV and the store's columns can never drift apart.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/cell_key.h"

namespace pg {

// {"model": ..., "dtype": ..., "batch_size": ..., ...}: text fields as (valid UTF-8) strings,
// integers as numbers, flags as booleans. docs/FORMATS.md.
nlohmann::json cell_key_to_json(const CellKey& key);

// The inverse, strict: every field required and of its type. Throws UsageError
// "<ptr>/<field>: <what>" (a JSON pointer below `ptr`).
CellKey cell_key_from_json(const nlohmann::json& j, const std::string& ptr);

// The values alone, in field order: the key part of a run's dedupe identity (store/).
nlohmann::json cell_key_values_json(const CellKey& key);

// CSV: the header names and the row values (flags as true / false), in field order.
std::vector<std::string> cell_key_csv_header();
std::vector<std::string> cell_key_csv_values(const CellKey& key);

// SQL fragments over the key's columns, in field order (the store binds the values in the same
// order): "model, dtype, ..." with an optional table alias prefix ("c."), "?4, ?5, ..." and
// "model = ?1 AND dtype = ?2 AND ...". Constants of ours, never built from input.
std::string cell_key_sql_columns(const std::string& prefix = "");
std::string cell_key_sql_placeholders(int first);
std::string cell_key_sql_match(int first);

}  // namespace pg
