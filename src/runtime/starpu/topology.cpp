// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/topology.cpp — hwloc summary of the machine (for stardiff-info).
#include <hwloc.h>

#include "stardiff/runtime/runtime.hpp"

namespace stardiff {

Topology machine_topology() {
  Topology t;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return t;
  if (hwloc_topology_load(topo) == 0) {
    t.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    t.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0))
      if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) t.cpu_model = m;
  }
  hwloc_topology_destroy(topo);
  return t;
}

}  // namespace stardiff
