// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/handle.cpp — Handle, Partition and HostAccess (StarPU parts delegated
// to src/runtime/starpu/starpu_data.cpp through handle_impl.hpp).
#include "stardiff/runtime/handle.hpp"

#include <sstream>

#include "runtime/handle_impl.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff {

using detail::HandleImpl;

Handle::Handle(detail::HandleImplPtr impl) : impl_(std::move(impl)) {}
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    if (impl_ && impl_->starpu && !impl_->child) detail::starpu_unregister(*impl_);
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Handle::~Handle() { reset(); }
void Handle::reset() {
  if (impl_ && impl_->starpu && !impl_->child) detail::starpu_unregister(*impl_);
  impl_.reset();
}

static detail::HandleImplPtr make_impl(BufferView v, std::string name) {
  require(v.elemsize > 0, "stardiff::Handle '" + name + "': element size must be positive");
  detail::HandleImplPtr h(new HandleImpl());
  h->view = v;
  h->name = name.empty() ? std::string("unnamed") : std::move(name);
  return h;
}

Handle Handle::vector(void* ptr, std::size_t nx, std::size_t elemsize, std::string name) {
  require(ptr != nullptr || nx == 0, "stardiff::Handle::vector '" + name + "': null pointer");
  BufferView v{ptr, HandleKind::Vector, elemsize, nx, 1, 1, nx, nx};
  return Handle(make_impl(v, std::move(name)));
}
Handle Handle::matrix(void* ptr, std::size_t nx, std::size_t ny, std::size_t ld, std::size_t elemsize,
                      std::string name) {
  require(ptr != nullptr || nx * ny == 0, "stardiff::Handle::matrix '" + name + "': null pointer");
  require(ld >= nx, "stardiff::Handle::matrix '" + name + "': leading dimension " + std::to_string(ld) +
                        " < rows " + std::to_string(nx));
  BufferView v{ptr, HandleKind::Matrix, elemsize, nx, ny, 1, ld, ld * ny};
  return Handle(make_impl(v, std::move(name)));
}
Handle Handle::block(void* ptr, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t ldy,
                     std::size_t ldz, std::size_t elemsize, std::string name) {
  require(ptr != nullptr || nx * ny * nz == 0, "stardiff::Handle::block '" + name + "': null pointer");
  require(ldy >= nx && ldz >= ldy * ny, "stardiff::Handle::block '" + name + "': bad leading dimensions");
  BufferView v{ptr, HandleKind::Block, elemsize, nx, ny, nz, ldy, ldz};
  return Handle(make_impl(v, std::move(name)));
}
Handle Handle::variable(void* ptr, std::size_t elemsize, std::string name) {
  require(ptr != nullptr, "stardiff::Handle::variable '" + name + "': null pointer");
  BufferView v{ptr, HandleKind::Variable, elemsize, 1, 1, 1, 1, 1};
  return Handle(make_impl(v, std::move(name)));
}

Handle Handle::managed_vector(std::size_t nx, std::size_t elemsize, std::string name) {
  BufferView v{nullptr, HandleKind::Vector, elemsize, nx, 1, 1, nx, nx};
  auto h = make_impl(v, std::move(name));
  h->managed = true;
  return Handle(std::move(h));
}

static HandleImpl& checked(const detail::HandleImplPtr& p) {
  if (!p) throw Error("stardiff::Handle: use of an empty (moved-from or default) handle");
  return *p;
}

HandleKind Handle::kind() const { return checked(impl_).view.kind; }
std::size_t Handle::elemsize() const { return checked(impl_).view.elemsize; }
const std::string& Handle::name() const { return checked(impl_).name; }
void Handle::set_name(std::string name) { checked(impl_).name = std::move(name); }
BufferView Handle::host_view() const { return checked(impl_).view; }
bool Handle::managed() const { return checked(impl_).managed; }
int Handle::owner() const { return checked(impl_).owner; }
void Handle::set_owner(int rank) {
  auto& h = checked(impl_);
  require(rank >= 0 || rank == kEveryRank, "stardiff::Handle '" + h.name + "': owner rank " + std::to_string(rank) +
                                               " is neither a rank (>= 0) nor kEveryRank");
  if (rank == h.owner) return;
  require(h.starpu == nullptr || !detail::runtime_alive() || h.generation != detail::runtime_generation(),
          "stardiff::Handle '" + h.name + "': set_owner(" + std::to_string(rank) +
              ") after StarPU registered it (set the owner before its first task)");
  h.owner = rank;
}

void Handle::set_reduction(const Codelet& init, const Codelet& reduce) {
  auto& h = checked(impl_);
  require(h.redux_init == nullptr, "stardiff::Handle '" + h.name + "': reduction methods already set");
  h.redux_init = &init;
  h.redux_reduce = &reduce;
}

HostAccess Handle::acquire(Access mode) const {
  auto& h = checked(impl_);
  if (h.starpu == nullptr) {  // never given to StarPU: host copy is the data
    if (h.managed && h.view.ptr == nullptr) detail::managed_host_memory(h, "acquire");
    return HostAccess(nullptr, h.view.ptr);
  }
  detail::starpu_acquire(h, mode);
  return HostAccess(&h, h.view.ptr != nullptr ? h.view.ptr : detail::starpu_local_ptr(h));
}

void Handle::drop_remote_copies() { detail::starpu_drop_remote_copies(checked(impl_)); }

HostAccess::~HostAccess() {
  if (impl_) detail::starpu_release(*impl_);
}

Handle::Partition Handle::partition(std::size_t nparts) {
  auto& h = checked(impl_);
  require(nparts >= 1, "stardiff::Handle::partition '" + h.name + "': need at least one part");
  require(detail::runtime_alive() == false || mpi_size() == 1,
          "stardiff::Handle::partition '" + h.name + "': not supported under StarPU-MPI with " +
              std::to_string(mpi_size()) + " ranks");
  std::size_t n = h.view.kind == HandleKind::Vector ? h.view.nx
                  : h.view.kind == HandleKind::Matrix ? h.view.ny : 0;
  require(!h.managed, "stardiff::Handle::partition '" + h.name + "': a managed handle cannot be partitioned");
  require(h.view.kind == HandleKind::Vector || h.view.kind == HandleKind::Matrix,
          "stardiff::Handle::partition '" + h.name + "': only vectors and matrices can be partitioned");
  require(nparts <= n, "stardiff::Handle::partition '" + h.name + "': " + std::to_string(nparts) +
                           " parts of " + std::to_string(n) + " elements");
  std::vector<Handle> children;
  std::vector<HandleImpl*> raw;
  // Same split as StarPU's block filters: the first n % nparts parts get one more.
  std::size_t base = n / nparts, rem = n % nparts, offset = 0;
  for (std::size_t i = 0; i < nparts; ++i) {
    std::size_t len = base + (i < rem ? 1 : 0);
    BufferView v = h.view;
    if (v.kind == HandleKind::Vector) {
      v.ptr = static_cast<char*>(v.ptr) + offset * v.elemsize;
      v.nx = len;
      v.ld = v.ldz = len;
    } else {
      v.ptr = static_cast<char*>(v.ptr) + offset * v.ld * v.elemsize;
      v.ny = len;
      v.ldz = v.ld * len;
    }
    offset += len;
    auto c = make_impl(v, h.name + "[" + std::to_string(i) + "]");
    c->child = true;
    c->owner = h.owner;
    raw.push_back(c.get());
    children.push_back(Handle(std::move(c)));
  }
  bool sp = detail::runtime_alive();
  if (sp) detail::starpu_partition(h, raw.data(), raw.size());
  return Partition(this, std::move(children), sp);
}

Handle::Partition::Partition(Handle* parent, std::vector<Handle> children, bool starpu)
    : parent_(parent), children_(std::move(children)), starpu_(starpu) {}
Handle::Partition::Partition(Partition&& o) noexcept
    : parent_(o.parent_), children_(std::move(o.children_)), starpu_(o.starpu_) {
  o.parent_ = nullptr;
  o.starpu_ = false;
}
Handle::Partition::~Partition() {
  if (!parent_ || !starpu_) return;
  std::vector<HandleImpl*> raw;
  for (auto& c : children_) raw.push_back(c.impl());
  detail::starpu_unpartition(*parent_->impl(), raw.data(), raw.size());
}

namespace detail {
void HandleImplDeleter::operator()(HandleImpl* p) const { delete p; }

void managed_host_memory(HandleImpl& h, const std::string& user) {
  if (h.view.ptr != nullptr) return;
  if (h.starpu != nullptr)
    throw Error(user + ": handle " + describe(h) +
                " is a managed handle whose memory StarPU allocates (a StarPU executor used it first); only "
                "StarPU tasks and acquire() reach it");
  const std::size_t bytes = h.view.count() * h.view.elemsize;
  h.owned.reset(new unsigned char[bytes > 0 ? bytes : 1]());
  h.view.ptr = h.owned.get();
}

HandleImpl& access_impl(const DataAccess& d, std::size_t i, const std::string& task) {
  if (d.handle == nullptr || !d.handle->valid())
    throw Error("task '" + task + "': buffer " + std::to_string(i) + " is an empty handle");
  HandleImpl& h = *d.handle->impl();
  if (d.mode == Access::REDUX && h.redux_init == nullptr)
    throw Error("task '" + task + "': REDUX access to handle " + describe(h) +
                " without reduction methods (Handle::set_reduction)");
  return h;
}
std::string describe(const HandleImpl& h) {
  std::ostringstream s;
  s << "'" << h.name << "' (" << to_string(h.view.kind) << " " << h.view.nx;
  if (h.view.kind == HandleKind::Matrix || h.view.kind == HandleKind::Block) s << "x" << h.view.ny;
  if (h.view.kind == HandleKind::Block) s << "x" << h.view.nz;
  s << " of " << h.view.elemsize << " B)";
  return s.str();
}
}  // namespace detail

}  // namespace stardiff
