// The shared pool of worker threads and the loops that split work over it.
#pragma once

#include <cstdint>

#include "function_ref.hpp"

namespace tileops::cpu {

// Runs task(i) for every i in [0, tasks) on the pool's workers and the calling thread, and returns
// when all have finished. The first exception a task throws is rethrown here after the others ran.
// A call made from inside a task runs inline. Safe to call from many threads at once.
void run_tasks(int64_t tasks, FunctionRef<void(int64_t)> task);

// Splits [0, count) into contiguous ranges and runs body(begin, end) on each, in parallel when the
// whole loop moves at least a few hundred KiB (item_bytes per item); otherwise inline, so that
// small calls pay no thread wake-up.
void parallel_for(int64_t count, int64_t item_bytes, FunctionRef<void(int64_t, int64_t)> body);

// A column alignment for parallel_for_2d that keeps splits on cache-line boundaries of 16-bit
// elements (and so of wider ones).
inline constexpr int64_t kColumnAlign = 32;

// The same over a [rows, cols] grid of elements of elem_bytes each: body(r0, r1, c0, c1) gets a
// rectangle. Rows are split first; columns only when there are too few rows to keep every thread
// busy. `align` is a column count every split column offset is a multiple of.
void parallel_for_2d(int64_t rows, int64_t cols, int64_t elem_bytes, int64_t align,
                     FunctionRef<void(int64_t, int64_t, int64_t, int64_t)> body);

}  // namespace tileops::cpu
