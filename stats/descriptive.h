// Order statistics shared by the gate, the intervals and change-point summaries. They are defined
// once for every layer in common/descriptive.h; stats/ code names them stats::median and
// stats::sorted_quantile.
#pragma once
#include "common/descriptive.h"

namespace pg::stats {

using pg::median;
using pg::sorted_quantile;

}  // namespace pg::stats
