// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/memory_guard.hpp — requests beyond the machine's memory are refused up front
// (an Error naming the size, the estimate and what is available), not found out by the
// OOM killer. The estimates are lower bounds of what the phase allocates.
#pragma once
#include <cstdint>
#include <string>

namespace stardiff::sparse::detail {

// Bytes the system can still give without swapping: MemAvailable of /proc/meminfo, else
// sysconf(_SC_AVPHYS_PAGES) * page size; 0 when neither is known.
std::uint64_t available_memory();

// Requests of at most unchecked_bytes are let through without reading the system's state:
// a failure there is an ordinary std::bad_alloc, and the small solves that make them do not
// pay for /proc/meminfo on every call.
inline constexpr double unchecked_bytes = 64.0 * 1024 * 1024;

// Throws Error "<what> needs about X GiB (estimate) but only Y GiB are available (...)".
[[noreturn]] void refuse_memory(const std::string& what, double bytes, std::uint64_t available);

// Refuses (refuse_memory, with what() as the description, built only then) a request of
// more than unchecked_bytes that exceeds available_memory(); no check when that is unknown.
template <class Describe>
void require_memory(double bytes, Describe&& what) {
  if (bytes <= unchecked_bytes) return;
  const std::uint64_t avail = available_memory();
  if (avail == 0 || bytes <= double(avail)) return;
  refuse_memory(what(), bytes, avail);
}

// Lower bounds of the peak memory (bytes) for an n x n pattern with nnz stored entries
// (lower triangle): the reader (file text aside), analyze(), and factorize() given the
// analysis's nnz(L) and supernode count.
double reader_bytes(double n, double nnz);
double analysis_bytes(double n, double nnz);
double factor_bytes(double n, double nnz, double nnz_l, double supernodes);

}  // namespace stardiff::sparse::detail
