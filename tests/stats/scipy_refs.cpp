#include "scipy_refs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pg::test {

std::string scipy_refs_path() {
  const char* env = std::getenv("PG_SCIPY_REFS");
  return env && *env ? env : PG_SCIPY_REFS_FIXTURE;
}

std::vector<RefLine> read_scipy_refs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<RefLine> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    RefLine r;
    size_t start = 0;
    while (true) {
      const size_t bar = line.find(" | ", start);
      std::string f =
          line.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      if (r.kind.empty())
        r.kind = f;
      else
        r.fields.push_back(f);
      if (bar == std::string::npos) break;
      start = bar + 3;
    }
    out.push_back(r);
  }
  return out;
}

std::vector<double> parse_doubles(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stod(item));
  return out;
}

}  // namespace pg::test
