#include "core/cell_key_io.h"

#include <climits>

#include "common/errors.h"
#include "common/utf8.h"

namespace pg {
namespace {

using nlohmann::json;

json field_json(const CellKey& key, const KeyField& f) {
  switch (f.kind) {
    case KeyFieldKind::text:
      return valid_utf8(key.*f.text);
    case KeyFieldKind::integer:
      return key.*f.integer;
    case KeyFieldKind::flag:
      return key.*f.flag;
  }
  return nullptr;
}

[[noreturn]] void bad(const std::string& ptr, const std::string& what) {
  throw UsageError((ptr.empty() ? "/" : ptr) + ": " + what);
}

void read_field(const json& v, const std::string& ptr, const KeyField& f, CellKey& key) {
  switch (f.kind) {
    case KeyFieldKind::text:
      if (!v.is_string()) bad(ptr, std::string("expected a string, got ") + v.type_name());
      key.*f.text = v.get<std::string>();
      return;
    case KeyFieldKind::integer:
      if (!v.is_number_integer())
        bad(ptr, std::string("expected an integer, got ") + v.type_name());
      if (v.is_number_unsigned() ? v.get<uint64_t>() > INT_MAX
                                 : (v.get<int64_t>() > INT_MAX || v.get<int64_t>() < INT_MIN))
        bad(ptr, "integer out of range");
      key.*f.integer = v.get<int>();
      return;
    case KeyFieldKind::flag:
      if (!v.is_boolean()) bad(ptr, std::string("expected true or false, got ") + v.type_name());
      key.*f.flag = v.get<bool>();
      return;
  }
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

json cell_key_to_json(const CellKey& key) {
  json j = json::object();
  for (const KeyField& f : kKeyFields) j[f.json_key] = field_json(key, f);
  return j;
}

CellKey cell_key_from_json(const json& j, const std::string& ptr) {
  if (!j.is_object()) bad(ptr, std::string("expected an object, got ") + j.type_name());
  CellKey key;
  for (const KeyField& f : kKeyFields) {
    const std::string p = ptr + "/" + f.json_key;
    auto it = j.find(f.json_key);
    if (it == j.end()) bad(p, "required field is missing");
    read_field(*it, p, f, key);
  }
  return key;
}

json cell_key_values_json(const CellKey& key) {
  json a = json::array();
  for (const KeyField& f : kKeyFields) {
    if (f.kind == KeyFieldKind::text)
      a.push_back(key.*f.text);  // as stored: the dedupe identity must not repair bytes
    else
      a.push_back(field_json(key, f));
  }
  return a;
}

std::vector<std::string> cell_key_csv_header() {
  std::vector<std::string> h;
  for (const KeyField& f : kKeyFields) h.emplace_back(f.csv_header);
  return h;
}

std::vector<std::string> cell_key_csv_values(const CellKey& key) {
  std::vector<std::string> v;
  for (const KeyField& f : kKeyFields) v.push_back(key_field_text(key, f));
  return v;
}

std::string cell_key_sql_columns(const std::string& prefix) {
  std::vector<std::string> c;
  for (const KeyField& f : kKeyFields) c.push_back(prefix + f.sql_column);
  return join(c, ", ");
}

std::string cell_key_sql_placeholders(int first) {
  std::vector<std::string> p;
  for (size_t i = 0; i < kKeyFields.size(); ++i) p.push_back("?" + std::to_string(first + i));
  return join(p, ", ");
}

std::string cell_key_sql_match(int first) {
  std::vector<std::string> m;
  for (size_t i = 0; i < kKeyFields.size(); ++i)
    m.push_back(std::string(kKeyFields[i].sql_column) + " = ?" + std::to_string(first + i));
  return join(m, " AND ");
}

}  // namespace pg
