// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/handle.hpp — data handles: memory a task may read or write.
//
// Contract:
//  * A Handle describes host memory of one of four shapes (vector, matrix, block,
//    variable); it is move-only. While a stardiff::Runtime is alive it is registered
//    with StarPU (lazily, at first use by a StarPU executor, or at partitioning) and
//    unregistered on destruction, which waits for its tasks and brings data home.
//  * Matrices are column-major: nx contiguous elements per column, ny columns,
//    leading dimension ld >= nx. Blocks: nx fastest, then ny (ldy), then nz (ldz).
//  * Host memory is only coherent after wait_all() or inside acquire() — never
//    read a handle's memory while tasks on it may be running.
//  * VectorHandle<T>, MatrixHandle<T>, BlockHandle<T>, VariableHandle<T> own their
//    storage when built from sizes, borrow it when built from a pointer.
//  * Using a handle after the runtime that registered it ended throws Error.
//  * Handle::managed_vector(nx, elemsize) has no user memory: the runtime owns it. First
//    used by a StarPU executor (Runtime alive), it is registered with no home node (StarPU
//    allocates it on the node a task needs and, with STARPU_LIMIT_CPU_MEM and a disk node
//    (STARPU_DISK_SWAP), may evict it to disk); host_view().ptr is then null: read it
//    through tasks or acquire() (HostAccess::data()). First used by another executor (or
//    acquired with no Runtime), it gets zeroed host memory, which is then its data (and is
//    registered as ordinary main-RAM memory if a StarPU executor uses it later). Its
//    destruction does not wait: StarPU frees it once its submitted tasks have run. Contents
//    are unspecified until a task writes them; it cannot be partitioned.
//  * Under StarPU-MPI (Runtime started with MPI) every rank registers every handle, in the
//    same order, and gets the same MPI tag for it; owner() is the rank holding its valid
//    copy (default 0; set_owner before its first use by a StarPU executor, else Error).
//    kEveryRank: a replicated handle (STARPU_MPI_PER_NODE), each rank its own copy; tasks
//    writing one run on every rank. acquire() is collective there: every rank must call it
//    at the same point; a read brings the owner's data to every rank first (StarPU-MPI
//    sends it; its cache avoids resending unchanged data). Host writes must be the same
//    on every rank (sequential task flow: every rank runs the same program). Under MPI
//    with more than one rank, partition() throws Error (not supported yet).
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stardiff/runtime/access.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff {

class Codelet;

enum class HandleKind : std::uint8_t { Vector, Matrix, Block, Variable };
const char* to_string(HandleKind k);

// What a kernel sees of one buffer: pointer and shape in elements.
struct BufferView {
  void* ptr = nullptr;
  HandleKind kind = HandleKind::Vector;
  std::size_t elemsize = 0;
  std::size_t nx = 0, ny = 1, nz = 1;  // vector: nx; matrix: nx x ny; variable: 1
  std::size_t ld = 0, ldz = 0;         // leading dimensions (elements)

  template <class T> T* data() const { return static_cast<T*>(ptr); }
  template <class T> std::span<T> span() const { return {static_cast<T*>(ptr), nx * ny * nz}; }
  std::size_t count() const { return nx * ny * nz; }
};

namespace detail {
struct HandleImpl;
struct HandleImplDeleter {
  void operator()(HandleImpl* p) const;
};
using HandleImplPtr = std::unique_ptr<HandleImpl, HandleImplDeleter>;
}  // namespace detail

class HostAccess;

// Handle::set_owner: every rank holds and computes its own copy (STARPU_MPI_PER_NODE).
inline constexpr int kEveryRank = -2;
// The StarPU-MPI rank of this process and the number of ranks (0 and 1 without a runtime
// started with MPI).
int mpi_rank();
int mpi_size();

class Handle {
 public:
  Handle() = default;
  virtual ~Handle();  // typed handles derive from Handle
  Handle(Handle&&) noexcept;
  Handle& operator=(Handle&&) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // Borrowing constructors (memory must outlive the handle).
  static Handle vector(void* ptr, std::size_t nx, std::size_t elemsize, std::string name = {});
  static Handle matrix(void* ptr, std::size_t nx, std::size_t ny, std::size_t ld,
                       std::size_t elemsize, std::string name = {});
  static Handle block(void* ptr, std::size_t nx, std::size_t ny, std::size_t nz, std::size_t ldy,
                      std::size_t ldz, std::size_t elemsize, std::string name = {});
  static Handle variable(void* ptr, std::size_t elemsize, std::string name = {});
  // Runtime-owned memory (contract above).
  static Handle managed_vector(std::size_t nx, std::size_t elemsize, std::string name = {});

  bool valid() const { return impl_ != nullptr; }
  bool managed() const;  // built by managed_vector
  // Unregisters (waiting for the handle's tasks) and empties the handle.
  void reset();
  HandleKind kind() const;
  std::size_t elemsize() const;
  const std::string& name() const;
  void set_name(std::string name);
  // StarPU-MPI owner rank (contract above). Without MPI it has no effect.
  int owner() const;
  void set_owner(int rank);
  BufferView host_view() const;  // the host pointer and shape (no coherence implied)

  // Reduction methods for REDUX access: init sets a buffer to the neutral element,
  // reduce folds buffer 1 (R) into buffer 0 (RW). Both take one or two buffers of
  // this handle's shape.
  void set_reduction(const Codelet& init, const Codelet& reduce);

  // Blocks the caller until tasks on this handle finish, makes host memory valid
  // for `mode`, releases at scope exit of the returned guard.
  HostAccess acquire(Access mode = Access::R) const;
  // StarPU-MPI: the ranks other than the owner drop their copies of this handle (their
  // next task on it receives it from the owner again; StarPU may free the memory) and the
  // owner forgets having sent them. Collective: every rank calls it at the same point,
  // e.g. after the owner alone wrote the handle from the host. No effect without MPI, on
  // kEveryRank handles and on handles StarPU has not registered.
  void drop_remote_copies();

  // Split into nparts blocks along the outermost dimension (vector: x; matrix: columns).
  // Children are valid while the returned Partition lives; the parent must not be
  // used by tasks meanwhile.
  class Partition;
  Partition partition(std::size_t nparts);

  detail::HandleImpl* impl() const { return impl_.get(); }

 protected:
  explicit Handle(detail::HandleImplPtr impl);
  detail::HandleImplPtr impl_;
  friend class Partition;
};

class Handle::Partition {
 public:
  Partition(Partition&&) noexcept;
  Partition& operator=(Partition&&) = delete;
  Partition(const Partition&) = delete;
  ~Partition();  // submits the gathering of children into the parent
  std::size_t size() const { return children_.size(); }
  Handle& operator[](std::size_t i) { return children_.at(i); }
  std::vector<Handle>& children() { return children_; }

 private:
  friend class Handle;
  Partition(Handle* parent, std::vector<Handle> children, bool starpu);
  Handle* parent_ = nullptr;
  std::vector<Handle> children_;
  bool starpu_ = false;
};

class HostAccess {
 public:
  HostAccess() = default;
  HostAccess(HostAccess&& o) noexcept : impl_(o.impl_), data_(o.data_) { o.impl_ = nullptr; }
  HostAccess& operator=(HostAccess&&) = delete;
  HostAccess(const HostAccess&) = delete;
  ~HostAccess();
  // The handle's data in main memory while the access is held (host_view().ptr, except for
  // a managed handle StarPU allocated: its main-RAM copy).
  void* data() const { return data_; }

 private:
  friend class Handle;
  HostAccess(detail::HandleImpl* impl, void* data) : impl_(impl), data_(data) {}
  detail::HandleImpl* impl_ = nullptr;  // non-null only when a StarPU acquire is held
  void* data_ = nullptr;
};

// Typed handles. Owning when built from sizes; borrowing when given a pointer.
template <class T>
class VectorHandle : public Handle {
 public:
  VectorHandle() = default;
  VectorHandle(VectorHandle&&) noexcept = default;
  VectorHandle& operator=(VectorHandle&&) noexcept = default;
  ~VectorHandle() override { reset(); }  // before the storage goes
  explicit VectorHandle(std::size_t n, std::string name = {}, T init = T{})
      : storage_(std::make_unique<std::vector<T>>(n, init)) {
    Handle::operator=(Handle::vector(storage_->data(), n, sizeof(T), std::move(name)));
  }
  VectorHandle(T* ptr, std::size_t n, std::string name = {}) {
    Handle::operator=(Handle::vector(ptr, n, sizeof(T), std::move(name)));
  }
  T* data() { return static_cast<T*>(host_view().ptr); }
  const T* data() const { return static_cast<const T*>(host_view().ptr); }
  std::size_t size() const { return host_view().nx; }
  std::span<T> span() { return {data(), size()}; }

 private:
  std::unique_ptr<std::vector<T>> storage_;
};

template <class T>
class MatrixHandle : public Handle {
 public:
  MatrixHandle() = default;
  MatrixHandle(MatrixHandle&&) noexcept = default;
  MatrixHandle& operator=(MatrixHandle&&) noexcept = default;
  ~MatrixHandle() override { reset(); }  // before the storage goes
  MatrixHandle(std::size_t nx, std::size_t ny, std::string name = {})
      : storage_(std::make_unique<std::vector<T>>(nx * ny)) {
    Handle::operator=(Handle::matrix(storage_->data(), nx, ny, nx, sizeof(T), std::move(name)));
  }
  MatrixHandle(T* ptr, std::size_t nx, std::size_t ny, std::size_t ld, std::string name = {}) {
    Handle::operator=(Handle::matrix(ptr, nx, ny, ld, sizeof(T), std::move(name)));
  }
  T* data() { return static_cast<T*>(host_view().ptr); }
  std::size_t nx() const { return host_view().nx; }
  std::size_t ny() const { return host_view().ny; }
  std::size_t ld() const { return host_view().ld; }
  T& operator()(std::size_t i, std::size_t j) { return data()[i + j * ld()]; }

 private:
  std::unique_ptr<std::vector<T>> storage_;
};

template <class T>
class BlockHandle : public Handle {
 public:
  BlockHandle() = default;
  BlockHandle(BlockHandle&&) noexcept = default;
  BlockHandle& operator=(BlockHandle&&) noexcept = default;
  ~BlockHandle() override { reset(); }  // before the storage goes
  BlockHandle(std::size_t nx, std::size_t ny, std::size_t nz, std::string name = {})
      : storage_(std::make_unique<std::vector<T>>(nx * ny * nz)) {
    Handle::operator=(
        Handle::block(storage_->data(), nx, ny, nz, nx, nx * ny, sizeof(T), std::move(name)));
  }
  T* data() { return static_cast<T*>(host_view().ptr); }

 private:
  std::unique_ptr<std::vector<T>> storage_;
};

template <class T>
class VariableHandle : public Handle {
 public:
  VariableHandle() = default;
  VariableHandle(VariableHandle&&) noexcept = default;
  VariableHandle& operator=(VariableHandle&&) noexcept = default;
  ~VariableHandle() override { reset(); }  // before the storage goes
  explicit VariableHandle(T init, std::string name = {}) : storage_(std::make_unique<T>(init)) {
    Handle::operator=(Handle::variable(storage_.get(), sizeof(T), std::move(name)));
  }
  VariableHandle(T* ptr, std::string name) {
    Handle::operator=(Handle::variable(ptr, sizeof(T), std::move(name)));
  }
  T& value() { return *static_cast<T*>(host_view().ptr); }

 private:
  std::unique_ptr<T> storage_;
};

}  // namespace stardiff
