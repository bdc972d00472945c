// A test-only hook into the built-in models' layers, so that a test can add the work a head
// commit would add (an unfused op per layer, a sync per step) and check that the profile sees it.
#pragma once
#include <ATen/ATen.h>

namespace pg::lm::testing {

// Defined only by a test binary (runner/lm/tests/lm_profile_test.cpp): called on the residual
// stream after every layer. A weak reference: in perfgate-runner it is null, and the layers only
// compare its address with null.
void after_layer(const at::Tensor& x) __attribute__((weak));

}  // namespace pg::lm::testing
