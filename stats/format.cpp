#include "stats/format.h"

#include <cstdio>

namespace pg::stats {

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace pg::stats
