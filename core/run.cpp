#include "core/run.h"

namespace pg {

const std::vector<std::string>& comparable_env_fields() {
  static const std::vector<std::string> f = {"device", "driver", "cuda",
                                             "cudnn",  "torch",  "weights_sha256"};
  return f;
}

}  // namespace pg
