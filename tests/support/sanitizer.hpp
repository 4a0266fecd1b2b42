// TILEOPS_TEST_UNDER_SANITIZER is defined when this test binary runs under AddressSanitizer or
// ThreadSanitizer. Their shadow memory no address-space limit (RLIMIT_AS, ulimit -v) can hold, so
// tests that set one skip there; and instrumented code is slow, so the largest sweeps run a subset.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TILEOPS_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TILEOPS_TEST_UNDER_SANITIZER 1
#endif
#endif
