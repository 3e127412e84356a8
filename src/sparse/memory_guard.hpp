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

// Throws Error "<what> needs about X GiB (estimate) but only Y GiB are available (...)"
// when bytes exceed available_memory(); no check when that is unknown.
void require_memory(const std::string& what, double bytes);

// Lower bounds of the peak memory (bytes) for an n x n pattern with nnz stored entries
// (lower triangle): the reader (file text aside), analyze(), and factorize() given the
// analysis's nnz(L) and supernode count.
double reader_bytes(double n, double nnz);
double analysis_bytes(double n, double nnz);
double factor_bytes(double n, double nnz, double nnz_l, double supernodes);

}  // namespace stardiff::sparse::detail
