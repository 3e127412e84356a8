// SPDX-License-Identifier: LGPL-2.1-or-later
// task_overhead — cost per empty task: stardiff's StarpuExecutor vs raw starpu_task_insert.
//
// Each repeat submits N empty tasks (one vector handle, read access, so they are
// independent) and waits for all of them; the time per task covers submission,
// scheduling, execution and completion. Both codelets carry a history-based perf
// model, as real codelets do. Repeats alternate stardiff/raw; medians are reported:
//   task_overhead us_per_task stardiff=S starpu=R ratio=S/R tasks=N repeats=K sched=...
// Usage: task_overhead [--tasks N] [--repeats K]   (STARPU_* variables apply)
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "stardiff/stardiff.hpp"

using namespace stardiff;

namespace {
void empty_kernel(const TaskContext&) {}
const Codelet cl_empty("empty", empty_kernel);

void raw_empty(void*[], void*) {}
starpu_perfmodel raw_model;
starpu_codelet raw_cl;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  int ntasks = 20000, repeats = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--tasks") && i + 1 < argc) ntasks = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: task_overhead [--tasks N] [--repeats K]\n");
      return 0;
    } else {
      std::fprintf(stderr, "task_overhead: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (ntasks < 1 || repeats < 1) {
    std::fprintf(stderr, "task_overhead: --tasks and --repeats must be positive\n");
    return 2;
  }
  Runtime rt;
  std::memset(&raw_model, 0, sizeof raw_model);
  raw_model.type = STARPU_HISTORY_BASED;
  raw_model.symbol = "task_overhead_raw_empty";
  starpu_codelet_init(&raw_cl);
  raw_cl.cpu_funcs[0] = raw_empty;
  raw_cl.nbuffers = 1;
  raw_cl.modes[0] = STARPU_R;
  raw_cl.model = &raw_model;
  raw_cl.name = "raw_empty";

  VectorHandle<double> v(16, "v", 1.0);
  StarpuExecutor exec;
  exec.submit(cl_empty, {in(v)});  // registers v, builds the codelet
  exec.wait_all();
  std::vector<double> raw_data(16, 1.0);
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(raw_data.data()), 16,
                              sizeof(double));

  std::vector<double> sd, raw;
  for (int r = 0; r < repeats + 1; ++r) {  // first round is warm-up
    double t0 = now();
    for (int i = 0; i < ntasks; ++i) exec.submit(cl_empty, {in(v)});
    exec.wait_all();
    double t1 = now();
    for (int i = 0; i < ntasks; ++i) starpu_task_insert(&raw_cl, STARPU_R, h, 0);
    starpu_task_wait_for_all();
    double t2 = now();
    if (r > 0) {
      sd.push_back((t1 - t0) / ntasks * 1e6);
      raw.push_back((t2 - t1) / ntasks * 1e6);
    }
  }
  starpu_data_unregister(h);
  double s = median(sd), p = median(raw);
  std::printf("task_overhead us_per_task stardiff=%.3f starpu=%.3f ratio=%.3f tasks=%d repeats=%d sched=%s workers=%d\n",
              s, p, s / p, ntasks, repeats, rt.scheduler().c_str(), rt.worker_count());
  return 0;
}
