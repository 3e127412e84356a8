// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/memory_guard.cpp — available memory (/proc/meminfo's MemAvailable, else
// sysconf) and the up-front refusal of requests beyond it (see memory_guard.hpp).
#include "sparse/memory_guard.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse::detail {

std::uint64_t available_memory() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    std::fclose(f);
    if (found) return std::uint64_t(kb) * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
}

void refuse_memory(const std::string& what, double bytes, std::uint64_t avail) {
  char msg[160];
  std::snprintf(msg, sizeof msg, " needs about %.3g GiB (estimate) but only %.3g GiB are available (MemAvailable)",
                bytes / 1073741824.0, double(avail) / 1073741824.0);
  throw Error(what + msg);
}

// Reader: col_ptr and two counting-sort bucket arrays (4 + 2 * 8 bytes per column, one
// cursor array more), each triplet (24 bytes) and its place in the sort (16 bytes), the
// result (12 bytes per entry); the diagonal insertion copies the matrix.
double reader_bytes(double n, double nnz) { return 36 * n + 52 * nnz; }

// Analysis: about thirty n-sized index arrays (orderings, trees, counts, supernodes,
// permuted triangles) and a few nnz-sized ones.
double analysis_bytes(double n, double nnz) { return 120 * n + 24 * nnz; }

// Factorization: L's values, the per-supernode records (factor, contribution block,
// statistics, split-front slot: about 400 bytes each with their allocations), the scaled
// copies of A and the O(n) vectors.
double factor_bytes(double n, double nnz, double nnz_l, double supernodes) {
  return 8 * nnz_l + 400 * supernodes + 16 * nnz + 24 * n;
}

}  // namespace stardiff::sparse::detail
