// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/runtime.cpp — Runtime (starpu_init/shutdown), build facts, executors.
#include "stardiff/runtime/runtime.hpp"

#include <starpu.h>
#ifdef STARPU_USE_CUDA
#include <starpu_cublas.h>
#endif
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <thread>
#include <string_view>
#include <vector>

#include "runtime/handle_impl.hpp"
#include "runtime/starpu/mpi_layer.hpp"
#include "runtime/starpu/starpu_codelet.hpp"

extern "C" {
// OpenBLAS controls (weak: absent with another BLAS).
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace stardiff {

namespace {
bool has_disk_node() {
  for (unsigned n = 0; n < starpu_memory_nodes_get_count(); ++n)
    if (starpu_node_get_kind(n) == STARPU_DISK_RAM) return true;
  return false;
}
std::atomic<bool> g_alive{false};
std::atomic<std::uint64_t> g_generation{0};
int g_saved_blas_threads = -1;
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
bool g_cublas = false;  // starpu_cublas_init ran for the live runtime
#endif

void default_starpu_home() {
  if (std::getenv("STARPU_HOME")) return;
  std::filesystem::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::filesystem::path(x) / "stardiff";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::filesystem::path(h) / ".cache" / "stardiff";
  else dir = std::filesystem::temp_directory_path() / "stardiff";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  setenv("STARPU_HOME", dir.c_str(), 0);
}

// StarPU aborts the process (or silently reads 0) on a malformed number in these
// variables; they are checked first so that a bad value is an Error naming it.
constexpr const char* kCountVariables[] = {
    "STARPU_NCPU", "STARPU_NCPUS", "STARPU_NCUDA", "STARPU_NOPENCL", "STARPU_NMIC", "STARPU_NMPI_MS",
    "STARPU_RESERVE_NCPU", "STARPU_NWORKER_PER_CUDA", "STARPU_CALIBRATE", "STARPU_CALIBRATE_MINIMUM",
    "STARPU_BUS_CALIBRATE", "STARPU_SILENT", "STARPU_PREFETCH", "STARPU_LIMIT_CPU_MEM",
    "STARPU_LIMIT_CPU_NUMA_MEM", "STARPU_LIMIT_CUDA_MEM", "STARPU_LIMIT_OPENCL_MEM",
    "STARPU_LIMIT_MAX_SUBMITTED_TASKS", "STARPU_LIMIT_MIN_SUBMITTED_TASKS", "STARPU_MINIMUM_AVAILABLE_MEM",
    "STARPU_TARGET_AVAILABLE_MEM", "STARPU_MINIMUM_CLEAN_BUFFERS", "STARPU_TARGET_CLEAN_BUFFERS",
    "STARPU_DISK_SWAP_SIZE", "STARPU_WATCHDOG_TIMEOUT", "STARPU_WATCHDOG_CRASH", "STARPU_ENABLE_STATS",
    "STARPU_STATS", "STARPU_MEMORY_STATS", "STARPU_PROFILING", "STARPU_WORKERS_NOBIND",
    "STARPU_DISABLE_PINNING", "STARPU_CUDA_PIPELINE", "STARPU_OPENCL_PIPELINE", "STARPU_MAX_WORKERSIZE",
    "STARPU_MIN_WORKERSIZE", "STARPU_NTHREADS_PER_CORE", "STARPU_SINGLE_COMBINED_WORKER"};
constexpr const char* kRealVariables[] = {"STARPU_SCHED_ALPHA", "STARPU_SCHED_BETA", "STARPU_SCHED_GAMMA",
                                          "STARPU_IDLE_POWER"};
// Directories StarPU creates and aborts on when it cannot.
constexpr const char* kDirectoryVariables[] = {"STARPU_HOME", "STARPU_PERF_MODEL_DIR", "STARPU_DISK_SWAP"};

[[noreturn]] void bad_variable(const char* name, const std::string& value, const std::string& why) {
  throw Error("stardiff::Runtime: " + std::string(name) + "='" + value.substr(0, 40) +
              (value.size() > 40 ? "...'" : "'") + " " + why);
}

bool known_scheduler(std::string_view name) {
  if (name == "help") return true;
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); p && *p; ++p)
    if ((*p)->policy_name && name == (*p)->policy_name) return true;
  return false;
}

std::string scheduler_names() {
  std::string names;
  for (starpu_sched_policy** p = starpu_sched_get_predefined_policies(); p && *p; ++p)
    if ((*p)->policy_name) names += (names.empty() ? "" : ", ") + std::string((*p)->policy_name);
  return names;
}

void check_environment(const RuntimeOptions& opts) {
  for (const char* name : kCountVariables) {
    const char* v = std::getenv(name);
    if (!v) continue;
    const std::string value(v);
    std::size_t i = 0;
    while (i < value.size() && value[i] == ' ') ++i;
    if (i < value.size() && value[i] == '+') ++i;
    const std::size_t digits = i;
    while (i < value.size() && value[i] >= '0' && value[i] <= '9') ++i;
    if (i == digits || i != value.size())
      bad_variable(name, value, "is not a non-negative integer (unset it for StarPU's default)");
  }
  for (const char* name : kRealVariables) {
    const char* v = std::getenv(name);
    if (!v) continue;
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || !std::isfinite(x)) bad_variable(name, v, "is not a finite number");
  }
  for (const char* name : kDirectoryVariables) {
    const char* v = std::getenv(name);
    if (!v) continue;
    if (!*v) bad_variable(name, v, "is empty (a directory is expected)");
    std::error_code ec;
    std::filesystem::create_directories(v, ec);
    if (!std::filesystem::is_directory(v, ec))
      bad_variable(name, v, "is not a directory and cannot be created" + (ec ? ": " + ec.message() : ""));
    if (access(v, W_OK | X_OK) != 0) bad_variable(name, v, "is not a writable directory");
  }
  // The disk node: StarPU 1.3 ignores an unknown backend with a warning (no disk swap, no
  // error) and aborts on a size under STARPU_DISK_SIZE_MIN (16 MB).
  if (const char* b = std::getenv("STARPU_DISK_SWAP_BACKEND")) {
    const std::string_view v(b);
    if (v != "unistd" && v != "unistd_o_direct" && v != "stdio" && v != "leveldb" && v != "hdf5")
      bad_variable("STARPU_DISK_SWAP_BACKEND", b, "names no StarPU disk backend (unistd, unistd_o_direct, stdio, "
                                                  "leveldb, hdf5)");
  }
  if (const char* z = std::getenv("STARPU_DISK_SWAP_SIZE"); z && std::getenv("STARPU_DISK_SWAP")) {
    const long long mb = std::atoll(z);  // digits only (checked above)
    if (mb < 16) bad_variable("STARPU_DISK_SWAP_SIZE", z, "is below StarPU's minimum disk size (16 MB)");
  }
  const char* env_sched = std::getenv("STARPU_SCHED");
  if (!opts.scheduler.empty() && !known_scheduler(opts.scheduler))
    throw Error("stardiff::Runtime: unknown scheduler '" + opts.scheduler + "' (StarPU has: " +
                scheduler_names() + ")");
  if (opts.scheduler.empty() && env_sched && !known_scheduler(env_sched))
    bad_variable("STARPU_SCHED", env_sched, "names no StarPU scheduler (StarPU has: " + scheduler_names() + ")");
}

// The CUDA devices asked for: RuntimeOptions::ncuda, else STARPU_NCUDA (digits, checked
// above); -1: StarPU's default (every device present).
int requested_cuda(const RuntimeOptions& opts) {
  if (opts.ncuda >= 0) return opts.ncuda;
  const char* v = std::getenv("STARPU_NCUDA");
  return v && *v ? std::atoi(v) : -1;
}
int requested_cpus(const RuntimeOptions& opts) {
  if (opts.ncpu >= 0) return opts.ncpu;
  for (const char* name : {"STARPU_NCPU", "STARPU_NCPUS"})
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  return -1;
}
// Unsets an environment variable for its scope (restored after).
struct HiddenEnv {
  std::string name, value;
  bool had = false;
  explicit HiddenEnv(const char* n) : name(n) {
    if (const char* v = std::getenv(n)) {
      had = true;
      value = v;
      unsetenv(n);
    }
  }
  ~HiddenEnv() {
    if (had) setenv(name.c_str(), value.c_str(), 1);
  }
  HiddenEnv(const HiddenEnv&) = delete;
  HiddenEnv& operator=(const HiddenEnv&) = delete;
};
std::string ncuda_source(const RuntimeOptions& opts, int n) {
  return (opts.ncuda >= 0 ? "RuntimeOptions::ncuda=" : "STARPU_NCUDA=") + std::to_string(n);
}
// CUDA devices the started runtime drives (distinct devices of its CUDA workers).
int cuda_devices_started() {
#ifdef STARPU_USE_CUDA
  std::vector<int> devs;
  for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
    if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_CUDA_WORKER) {
      const int d = starpu_worker_get_devid(static_cast<int>(w));
      if (std::find(devs.begin(), devs.end(), d) == devs.end()) devs.push_back(d);
    }
  return static_cast<int>(devs.size());
#else
  return 0;
#endif
}
// One line on stderr per distinct message and process (tests start many runtimes).
void note_once(const std::string& line) {
  static std::vector<std::string> said;
  if (std::find(said.begin(), said.end(), line) != said.end()) return;
  said.push_back(line);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}
// Why fewer CUDA devices than asked for run (StarPU itself only warns when not silent).
std::string cuda_shortfall() {
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
  int present = 0;
  if (cudaGetDeviceCount(&present) != cudaSuccess) return "no usable CUDA device or driver";
  return "only " + std::to_string(present) + " CUDA device(s) present";
#elif defined(STARPU_USE_CUDA)
  return "StarPU started fewer CUDA workers";
#else
  return "this StarPU is built without CUDA";
#endif
}
}  // namespace

namespace detail {
bool runtime_alive() { return g_alive.load(std::memory_order_acquire); }
std::uint64_t runtime_generation() { return g_generation.load(std::memory_order_acquire); }
}  // namespace detail

bool mpi_requested_by_environment() {
  if (const char* e = std::getenv("STARDIFF_MPI"); e && *e) {
    if (std::strcmp(e, "0") == 0) return false;
    if (std::strcmp(e, "1") == 0) return true;
    throw Error(std::string("stardiff::Runtime: STARDIFF_MPI='") + e + "' is neither 0 nor 1");
  }
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}
bool stardiff_mpi_built() { return detail::mpi_built(); }
int mpi_rank() { return detail::mpi_rank_now(); }
int mpi_size() { return detail::mpi_size_now(); }

Runtime::Runtime() : Runtime(RuntimeOptions{}) {}

Runtime::Runtime(const RuntimeOptions& opts) {
  bool expected = false;
  if (!g_alive.compare_exchange_strong(expected, true))
    throw Error("stardiff::Runtime: a runtime is already alive in this process (only one at a time)");
  try {
    default_starpu_home();
    check_environment(opts);
    require(opts.mpi >= -1 && opts.mpi <= 1, "stardiff::Runtime: RuntimeOptions::mpi must be -1, 0 or 1");
    mpi_ = opts.mpi == 1 || (opts.mpi == -1 && mpi_requested_by_environment());
    if (mpi_ && !detail::mpi_built()) detail::mpi_start(nullptr);  // throws the reason
  } catch (...) {
    g_alive.store(false);
    throw;
  }
  starpu_conf conf;
  starpu_conf_init(&conf);
  if (opts.ncpu >= 0) conf.ncpus = opts.ncpu;
  if (opts.ncuda >= 0) conf.ncuda = opts.ncuda;
  if (!opts.scheduler.empty()) conf.sched_policy_name = opts.scheduler.c_str();
  // StarPU 1.3.10 decides per job whether to time it for its performance model, and a
  // model-based scheduler (dmda, dmdas, heft, ...) can switch that decision while a job
  // runs; in a second runtime of the same process the job then reads an end time never
  // taken and aborts ("measured >= 0"). Calibrating every job keeps the decision fixed:
  // for such a runtime, unless the user chose STARPU_CALIBRATE.
  if (g_generation.load() > 0 && !std::getenv("STARPU_CALIBRATE")) {
    const char* env = std::getenv("STARPU_SCHED");
    const std::string sched = !opts.scheduler.empty() ? opts.scheduler : env ? env : "";
    if (sched.rfind("dm", 0) == 0 || sched == "heft" || sched == "pheft") conf.calibrate = 1;
  }
  int ret = 0;
  try {
    ret = mpi_ ? detail::mpi_start(&conf) : starpu_init(&conf);
  } catch (...) {
    g_alive.store(false);
    throw;
  }
  const int want_cuda = requested_cuda(opts);
  bool fell_back = false;
  if (ret == -ENODEV && want_cuda > 0 && requested_cpus(opts) == 0) {
    fell_back = true;
    // Only CUDA workers were asked for and none could start: CPU workers instead.
    note_once("stardiff::Runtime: " + ncuda_source(opts, want_cuda) + " with no CPU worker, but " + cuda_shortfall() +
              ": falling back to StarPU's default CPU workers");
    // StarPU reads STARPU_NCPU(S) / STARPU_NCUDA (starpu_conf_init and over starpu_conf):
    // hidden for this start only.
    HiddenEnv h1("STARPU_NCPU"), h2("STARPU_NCPUS"), h3("STARPU_NCUDA");
    const int calibrate = conf.calibrate;
    starpu_conf_init(&conf);
    conf.ncuda = 0;
    conf.calibrate = calibrate;
    if (!opts.scheduler.empty()) conf.sched_policy_name = opts.scheduler.c_str();
    try {
      ret = mpi_ ? detail::mpi_start(&conf) : starpu_init(&conf);
    } catch (...) {
      g_alive.store(false);
      throw;
    }
  }
  if (ret != 0) {
    g_alive.store(false);
    std::string why = ret == -ENODEV ? "no worker could be started (check STARPU_NCPU, STARPU_NCUDA, "
                                       "STARPU_NOPENCL and the machine's devices)"
                                     : std::string(std::strerror(-ret));
    throw Error(std::string(mpi_ ? "starpu_mpi_init_conf" : "starpu_init") + " failed: " + why);
  }
  g_generation.fetch_add(1);
  if (want_cuda > 0 && !fell_back) {
    const int got = cuda_devices_started();
    const std::string workers = std::to_string(starpu_cpu_worker_get_count()) + " CPU worker(s) and " +
                                std::to_string(starpu_worker_get_count_by_type(STARPU_CUDA_WORKER)) +
                                " CUDA worker(s)";
    if (got < want_cuda)
      note_once("stardiff::Runtime: " + ncuda_source(opts, want_cuda) + " asks for " + std::to_string(want_cuda) +
                " CUDA device(s), but " + cuda_shortfall() + ": running on " + workers);
    else if (!STARDIFF_STARPU_CUDA)
      note_once("stardiff::Runtime: " + ncuda_source(opts, want_cuda) + ", but stardiff was built without StarPU CUDA "
                "codelets: its tasks run on the CPU workers (" + workers + ")");
  }
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
  // A cuBLAS handle per CUDA worker, on its stream (starpu_cublas_get_local_handle): the
  // sparse LDL^T's update codelet calls cuBLAS.
  if (starpu_cuda_worker_get_count() > 0) {
    starpu_cublas_init();
    g_cublas = true;
  }
#endif
  if (openblas_set_num_threads && openblas_get_num_threads) {
    g_saved_blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
}

void Runtime::pause() {
  if (paused_) throw Error("stardiff::Runtime::pause: workers are already paused");
  starpu_task_wait_for_all();
  detail::pause_workers();
  paused_ = true;
}

void Runtime::resume() {
  if (!paused_) throw Error("stardiff::Runtime::resume: workers are not paused");
  detail::resume_workers();
  paused_ = false;
}

Runtime::~Runtime() {
  if (paused_) detail::resume_workers();
  if (mpi_ && detail::mpi_size_now() > 1 && std::uncaught_exceptions() > 0) {
    std::fprintf(stderr, "stardiff::Runtime: rank %d unwinds an exception; aborting the MPI job (the other ranks "
                 "cannot be waited for)\n", detail::mpi_rank_now());
    std::fflush(stderr);
    detail::mpi_abort(2);
  }
  starpu_task_wait_for_all();
  // With a disk node, StarPU 1.3.10 may still have asynchronous transfers to the disk in
  // flight when the last task ends; starpu_shutdown asserts that none is pending (abort).
  // The (polling) workers complete them while idle: give them 200 ms first.
  if (has_disk_node()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
  if (g_cublas) starpu_cublas_shutdown();
  g_cublas = false;
#endif
  if (mpi_) detail::mpi_stop();
  else starpu_shutdown();
  if (openblas_set_num_threads && g_saved_blas_threads > 0) openblas_set_num_threads(g_saved_blas_threads);
  g_alive.store(false, std::memory_order_release);
}

bool Runtime::active() { return g_alive.load(); }
int Runtime::rank() const { return mpi_ ? detail::mpi_rank_now() : 0; }
int Runtime::size() const { return mpi_ ? detail::mpi_size_now() : 1; }
void Runtime::abort_job(int code) const {
  std::fflush(stdout);
  std::fflush(stderr);
  detail::mpi_abort(code);
}
int Runtime::worker_count() const { return static_cast<int>(starpu_worker_get_count()); }
int Runtime::cpu_workers() const { return starpu_cpu_worker_get_count(); }
int Runtime::cuda_workers() const { return starpu_cuda_worker_get_count(); }

std::vector<WorkerInfo> Runtime::workers() const {
  std::vector<WorkerInfo> w;
  for (unsigned i = 0; i < starpu_worker_get_count(); ++i) {
    char name[128];
    starpu_worker_get_name(static_cast<int>(i), name, sizeof name);
    const char* kind = "other";
    switch (starpu_worker_get_type(static_cast<int>(i))) {
      case STARPU_CPU_WORKER: kind = "cpu"; break;
      case STARPU_CUDA_WORKER: kind = "cuda"; break;
      case STARPU_OPENCL_WORKER: kind = "opencl"; break;
      default: break;
    }
    w.push_back({static_cast<int>(i), kind, name});
  }
  return w;
}

std::string Runtime::scheduler() const {
  starpu_sched_policy* p = starpu_sched_ctx_get_sched_policy(0);
  return p && p->policy_name ? p->policy_name : "unknown";
}

std::vector<MemoryNodeInfo> Runtime::memory_nodes() const {
  std::vector<MemoryNodeInfo> v;
  for (unsigned n = 0; n < starpu_memory_nodes_get_count(); ++n) {
    MemoryNodeInfo m;
    m.id = static_cast<int>(n);
    switch (starpu_node_get_kind(n)) {
      case STARPU_CPU_RAM: m.kind = "cpu"; break;
      case STARPU_CUDA_RAM: m.kind = "cuda"; break;
      case STARPU_OPENCL_RAM: m.kind = "opencl"; break;
      case STARPU_DISK_RAM: m.kind = "disk"; break;
      default: m.kind = "other"; break;
    }
    m.limit = starpu_memory_get_total(n);
    m.available = m.limit < 0 ? -1 : starpu_memory_get_available(n);
    v.push_back(m);
  }
  return v;
}

StarpuBuild starpu_build() {
  StarpuBuild b;
  int major = 0, minor = 0, release = 0;
  starpu_get_version(&major, &minor, &release);
  b.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
#ifdef STARPU_USE_CUDA
  b.cuda = true;
#endif
#ifdef STARPU_USE_OPENCL
  b.opencl = true;
#endif
#ifdef STARPU_USE_MPI
  b.mpi = true;
#endif
  b.maxcpus = STARPU_MAXCPUS;
  b.nmaxbufs = STARPU_NMAXBUFS;
#ifdef STARPU_MAXCUDADEVS
  b.maxcudadevs = STARPU_MAXCUDADEVS;
#endif
  return b;
}

bool stardiff_cuda_kernels_built() { return STARDIFF_CUDA_KERNELS; }
bool stardiff_starpu_cuda() { return STARDIFF_STARPU_CUDA; }

std::unique_ptr<Executor> make_executor(const std::string& kind) {
  if (kind == "starpu") return std::make_unique<StarpuExecutor>();
  if (kind == "sequential") return std::make_unique<SequentialExecutor>();
  throw Error("unknown executor '" + kind + "' (expected starpu or sequential)");
}

}  // namespace stardiff
