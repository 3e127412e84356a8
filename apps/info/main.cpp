// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff-info — versions, StarPU build features, workers, scheduler, topology.
//
// Usage: stardiff-info [--json] [--help]. Starts a stardiff::Runtime (so STARPU_*
// variables apply) to list the workers it gets. Exit 0, or 2 on bad usage / start failure.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "json.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;

static void usage(FILE* f) {
  std::fprintf(f,
               "usage: stardiff-info [--json]\n"
               "Prints stardiff and StarPU versions, StarPU build features (CUDA, MPI, MAXCPUS,\n"
               "NMAXBUFS), the workers and scheduler StarPU starts with the current STARPU_*\n"
               "environment, and the hwloc topology. --json: one JSON object on stdout.\n");
}

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "stardiff-info: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  StarpuBuild b = starpu_build();
  Topology topo = machine_topology();
  try {
    Runtime rt;
    auto workers = rt.workers();
    if (json) {
      apps::JsonWriter j;
      j.field("stardiff_version", STARDIFF_VERSION).field("starpu_version", b.version);
      j.key("starpu_build").begin_object();
      j.field("cuda", b.cuda).field("opencl", b.opencl).field("mpi", b.mpi);
      j.field("maxcpus", b.maxcpus).field("nmaxbufs", b.nmaxbufs).end_object();
      j.field("cuda_kernels", stardiff_cuda_kernels_built()).field("starpu_cuda_codelets", stardiff_starpu_cuda());
      j.field("scheduler", rt.scheduler()).field("cpu_workers", rt.cpu_workers());
      j.field("cuda_workers", rt.cuda_workers());
      j.key("workers").begin_array();
      for (auto& w : workers) {
        j.begin_object().field("id", w.id).field("kind", w.kind).field("name", w.name).end_object();
      }
      j.end_array();
      j.key("topology").begin_object();
      j.field("packages", topo.packages).field("numa_nodes", topo.numa_nodes).field("cores", topo.cores);
      j.field("pus", topo.pus).field("cpu_model", topo.cpu_model).end_object();
      std::printf("%s\n", j.str().c_str());
    } else {
      std::printf("stardiff %s on StarPU %s\n", STARDIFF_VERSION, b.version.c_str());
      std::printf("StarPU build: CUDA %s, OpenCL %s, MPI %s, STARPU_MAXCPUS %d, STARPU_NMAXBUFS %d\n",
                  b.cuda ? "yes" : "no", b.opencl ? "yes" : "no", b.mpi ? "yes" : "no", b.maxcpus, b.nmaxbufs);
      std::printf("stardiff CUDA kernels compiled: %s; StarPU CUDA codelets: %s\n",
                  stardiff_cuda_kernels_built() ? "yes" : "no", stardiff_starpu_cuda() ? "yes" : "no");
      std::printf("scheduler: %s; workers: %zu (%d CPU, %d CUDA)\n", rt.scheduler().c_str(), workers.size(),
                  rt.cpu_workers(), rt.cuda_workers());
      for (auto& w : workers) std::printf("  worker %d: %s (%s)\n", w.id, w.name.c_str(), w.kind.c_str());
      std::printf("topology: %d package(s), %d NUMA node(s), %d core(s), %d PU(s)%s%s\n", topo.packages,
                  topo.numa_nodes, topo.cores, topo.pus, topo.cpu_model.empty() ? "" : ", ",
                  topo.cpu_model.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stardiff-info: %s\n", e.what());
    return 2;
  }
  return 0;
}
