// runtime_alloc_counter.h — counting heap allocations from any test file. The counter lives in
// runtime_alloc_test.cc, which replaces the C allocator entry points for the whole test binary
// (glibc only; see there for what it catches and what not).
#pragma once

namespace rt_test {

// Whether counting works here: false (with a doctest MESSAGE) off glibc, under sanitizers and
// under valgrind, where a zero count would prove nothing. Call it inside a test case.
bool allocation_counting_works();
// Counts allocations on every thread from now until stop_counting_allocations(). With
// `ignore_loaded_libraries`, an allocation with code on its stack that was loaded after
// program start (dlopen: an OpenCL ICD loader, its drivers and what they load) is left out
// and counted by ignored_allocations() instead: that is the driver's bookkeeping. The runtime
// is linked into the test executable, so its own allocations are always counted.
void start_counting_allocations(bool ignore_loaded_libraries = false);
long stop_counting_allocations();
long ignored_allocations();

}  // namespace rt_test
