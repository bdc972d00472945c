// The machine as the libFuzzer build sees it: CPU only. The sweep validator asks these two
// questions of LibTorch (runner/lm/measure.cpp); the fuzz build links no LibTorch, so it answers
// them as a CPU-only LibTorch 2.x would. Used only by run_libfuzzer.sh.
#include <string>

namespace pg {
bool lm::cuda_available() { return false; }
std::string lm::default_attention() { return "sdpa"; }
}  // namespace pg
