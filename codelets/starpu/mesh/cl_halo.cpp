// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/starpu/mesh/cl_halo.cpp — unpack tile buffers, call cpu:: halo kernels.
#include "starpu/mesh/cl_halo.hpp"

#include <cstring>

#include "cpu/mesh/halo.hpp"

namespace stardiff::codelets {
namespace {
struct HaloArgs {
  std::size_t n_lo, row;  // row: bytes (exchange) or elements (reverse)
  std::size_t elemsize;
  int d_m, d_p;
};
struct CopyArgs {
  std::size_t src_off, dst_off, bytes;
};
struct StripArgs {
  std::size_t off, bytes, elemsize;
};
std::size_t bytes_of(const BufferView& v) { return v.nx * v.elemsize; }

void halo_exchange_task(const TaskContext& t) {
  const auto& a = t.arg<HaloArgs>();
  const auto &lo = t.buffers[0], &hi = t.buffers[1];
  if ((a.n_lo + a.d_m + a.d_p) * a.row > bytes_of(lo) || std::size_t(a.d_m + a.d_p) * a.row > bytes_of(hi))
    return t.fail("halo exchange: tile buffers smaller than the halo rows");
  cpu::halo_exchange_cpu(lo.data<unsigned char>(), a.n_lo, hi.data<unsigned char>(), a.row, a.d_m, a.d_p);
}
void halo_reverse_task(const TaskContext& t) {
  const auto& a = t.arg<HaloArgs>();
  const auto &lo = t.buffers[0], &hi = t.buffers[1];
  if ((a.n_lo + a.d_m + a.d_p) * a.row > lo.nx || std::size_t(a.d_m + a.d_p) * a.row > hi.nx)
    return t.fail("reverse halo exchange: tile buffers smaller than the halo rows");
  if (a.elemsize == sizeof(double))
    cpu::halo_reverse_add_cpu(lo.data<double>(), a.n_lo, hi.data<double>(), a.row, a.d_m, a.d_p);
  else if (a.elemsize == sizeof(float))
    cpu::halo_reverse_add_cpu(lo.data<float>(), a.n_lo, hi.data<float>(), a.row, a.d_m, a.d_p);
  else
    t.fail("reverse halo exchange: element size " + std::to_string(a.elemsize) + " (need 4 or 8)");
}
void rows_copy_task(const TaskContext& t) {
  const auto& a = t.arg<CopyArgs>();
  const auto &src = t.buffers[0], &dst = t.buffers[1];
  if (a.src_off + a.bytes > bytes_of(src) || a.dst_off + a.bytes > bytes_of(dst))
    return t.fail("rows copy: range outside the buffers");
  cpu::rows_copy_cpu(src.data<unsigned char>() + a.src_off, dst.data<unsigned char>() + a.dst_off, a.bytes);
}
struct RunsArgs {
  Runs r;
  bool to_packed;
};
void runs_copy_task(const TaskContext& t) {
  const auto& a = t.arg<RunsArgs>();
  const Runs& r = a.r;
  const auto &tile = t.buffers[0], &packed = t.buffers[1];
  if (r.n1 == 0 || r.n2 == 0 || r.run == 0) return;
  const std::size_t last = r.off + (r.n1 - 1) * r.stride1 + (r.n2 - 1) * r.stride2 + r.run;
  if (last > bytes_of(tile) || r.bytes() > bytes_of(packed)) return t.fail("runs copy: runs outside the buffers");
  unsigned char* tb = tile.data<unsigned char>();
  unsigned char* pb = packed.data<unsigned char>();
  for (std::size_t b = 0; b < r.n2; ++b)
    for (std::size_t q = 0; q < r.n1; ++q) {
      unsigned char* tp = tb + r.off + q * r.stride1 + b * r.stride2;
      if (a.to_packed) std::memcpy(pb, tp, r.run);
      else std::memcpy(tp, pb, r.run);
      pb += r.run;
    }
}
void rows_take_task(const TaskContext& t) {
  const auto& a = t.arg<StripArgs>();
  const auto &src = t.buffers[0], &strip = t.buffers[1];
  if (a.off + a.bytes > bytes_of(src) || a.bytes > bytes_of(strip))
    return t.fail("rows take: range outside the buffers");
  unsigned char* rows = src.data<unsigned char>() + a.off;
  cpu::rows_copy_cpu(rows, strip.data<unsigned char>(), a.bytes);
  std::memset(rows, 0, a.bytes);
}
void rows_add_task(const TaskContext& t) {
  const auto& a = t.arg<StripArgs>();
  const auto &dst = t.buffers[0], &strip = t.buffers[1];
  if (a.off + a.bytes > bytes_of(dst) || a.bytes > bytes_of(strip) || a.off % a.elemsize || a.bytes % a.elemsize)
    return t.fail("rows add: range outside the buffers");
  const std::size_t n = a.bytes / a.elemsize;
  unsigned char* rows = dst.data<unsigned char>() + a.off;
  if (a.elemsize == sizeof(double))
    cpu::add_into_cpu(reinterpret_cast<double*>(rows), strip.data<double>(), n);
  else if (a.elemsize == sizeof(float))
    cpu::add_into_cpu(reinterpret_cast<float*>(rows), strip.data<float>(), n);
  else
    t.fail("rows add: element size " + std::to_string(a.elemsize) + " (need 4 or 8)");
}
void fill_zero_task(const TaskContext& t) {
  std::memset(t.buffers[0].ptr, 0, bytes_of(t.buffers[0]));
}
void add_into_task(const TaskContext& t) {
  const auto &dst = t.buffers[0], &src = t.buffers[1];
  if (dst.nx != src.nx || dst.elemsize != src.elemsize) return t.fail("add_into: buffers differ in size");
  if (dst.elemsize == sizeof(double)) cpu::add_into_cpu(dst.data<double>(), src.data<double>(), dst.nx);
  else if (dst.elemsize == sizeof(float)) cpu::add_into_cpu(dst.data<float>(), src.data<float>(), dst.nx);
  else t.fail("add_into: element size " + std::to_string(dst.elemsize) + " (need 4 or 8)");
}
}  // namespace

const Codelet cl_halo_exchange("halo_exchange", halo_exchange_task, nullptr,
                               {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_halo_reverse("halo_reverse", halo_reverse_task, nullptr,
                              {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_rows_copy("rows_copy", rows_copy_task, nullptr, {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_runs_copy("runs_copy", runs_copy_task, nullptr, {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_rows_take("rows_take", rows_take_task, nullptr, {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_rows_add("rows_add", rows_add_task, nullptr, {{HandleKind::Vector}, {HandleKind::Vector}});
const Codelet cl_fill_zero("fill_zero", fill_zero_task, nullptr, {{HandleKind::Vector}});
const Codelet cl_add_into("add_into", add_into_task, nullptr, {{HandleKind::Vector}, {HandleKind::Vector}});

void insert_halo_exchange(Executor& exec, Handle& lo, Handle& hi, std::size_t n_lo, std::size_t row_bytes,
                          int d_m, int d_p, const std::string& name) {
  exec.submit(cl_halo_exchange, HaloArgs{n_lo, row_bytes, 1, d_m, d_p}, {inout(lo), inout(hi)}, {.name = name});
}
void insert_halo_reverse(Executor& exec, Handle& lo, Handle& hi, std::size_t n_lo, std::size_t row_len,
                         std::size_t elemsize, int d_m, int d_p, const std::string& name) {
  exec.submit(cl_halo_reverse, HaloArgs{n_lo, row_len, elemsize, d_m, d_p}, {inout(lo), inout(hi)},
              {.name = name});
}
void insert_rows_copy(Executor& exec, Handle& src, std::size_t src_off, Handle& dst, std::size_t dst_off,
                      std::size_t bytes, bool dst_whole, const std::string& name) {
  exec.submit(cl_rows_copy, CopyArgs{src_off, dst_off, bytes}, {in(src), dst_whole ? out(dst) : inout(dst)},
              {.name = name});
}
void insert_runs_copy(Executor& exec, Handle& tile, Handle& packed, const Runs& runs, bool to_packed,
                      const std::string& name) {
  exec.submit(cl_runs_copy, RunsArgs{runs, to_packed}, {to_packed ? in(tile) : inout(tile), to_packed ? out(packed) : in(packed)},
              {.name = name});
}
void insert_rows_take(Executor& exec, Handle& src, std::size_t off, Handle& strip, std::size_t bytes,
                      const std::string& name) {
  exec.submit(cl_rows_take, StripArgs{off, bytes, 1}, {inout(src), out(strip)}, {.name = name});
}
void insert_rows_add(Executor& exec, Handle& dst, std::size_t off, Handle& strip, std::size_t bytes,
                     std::size_t elemsize, const std::string& name) {
  if (elemsize != sizeof(double) && elemsize != sizeof(float))
    throw Error(name + ": adjoint rows of element size " + std::to_string(elemsize) + " (need 4 or 8)");
  exec.submit(cl_rows_add, StripArgs{off, bytes, elemsize}, {inout(dst), in(strip)}, {.name = name});
}
void insert_fill_zero(Executor& exec, Handle& h, const std::string& name) {
  exec.submit(cl_fill_zero, {out(h)}, {.name = name});
}
void insert_add_into(Executor& exec, Handle& dst, Handle& src, std::size_t elemsize, const std::string& name) {
  if (elemsize != sizeof(double) && elemsize != sizeof(float))
    throw Error(name + ": adjoint partials of element size " + std::to_string(elemsize) + " (need 4 or 8)");
  exec.submit(cl_add_into, {inout(dst), in(src)}, {.name = name});
}
}  // namespace stardiff::codelets
