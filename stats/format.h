// How stats/ writes a number into a note, a warning or a table: three significant digits.
#pragma once
#include <string>

namespace pg::stats {

std::string fmt_g(double v);  // "%.3g" of v

}  // namespace pg::stats
