// Reads tests/stats/fixtures/scipy_refs.txt (or the live output named by $PG_SCIPY_REFS), written
// by gen_scipy_refs.py: one case per line, fields separated by " | ".
#pragma once
#include <string>
#include <vector>

namespace pg::test {

struct RefLine {
  std::string kind;                 // first field, e.g. "mwu greater exact"
  std::vector<std::string> fields;  // the remaining fields
};

std::string scipy_refs_path();
std::vector<RefLine> read_scipy_refs(const std::string& path);
std::vector<double> parse_doubles(const std::string& comma_list);

}  // namespace pg::test
