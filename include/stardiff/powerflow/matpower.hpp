// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/matpower.hpp — MATPOWER case files (format version 2).
//
// Contract:
//  * read_matpower(path) / parse_matpower(text, file) read `mpc.version = '2'`, `mpc.baseMVA`,
//    `mpc.bus` (>= 13 columns), `mpc.gen` (>= 10), `mpc.branch` (>= 11) and the optional
//    `mpc.gencost`; any other `mpc.<field> = [...] / {...} / '...' / number;` is skipped
//    (quotes, `%` comments and `...` continuations respected). Rows end at `;` or newline.
//  * Bus numbers are arbitrary positive integer ids (unique). Generators with status <= 0
//    and branches with status 0 are dropped (counted in gens_dropped / branches_dropped).
//    Buses of type 4 (isolated) are kept in `buses` (for output) but take no part in the
//    network; generators and branches at them are dropped like out-of-service ones.
//  * Exactly one bus of type 3 is required. Every non-isolated bus must be connected to it
//    through in-service branches. In-service branches need r + jx != 0. No field may be NaN;
//    only Qmax/Qmin/Pmax/Pmin (and unused columns) may be infinite.
//  * Every violation throws stardiff::Error("FILE:LINE: what") naming the offending line
//    (the line of the section header for a missing or empty section). Input quoted in a
//    message is cut to 40 bytes ("..." follows) with non-printable bytes written as \xHH;
//    a path that cannot be opened or read (a directory) names the system's reason.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stardiff::powerflow {

enum BusType : int { PQ = 1, PV = 2, REF = 3, ISOLATED = 4 };

struct Bus {
  std::int64_t id = 0;
  int type = PQ;
  double pd = 0, qd = 0;  // MW, MVAr
  double gs = 0, bs = 0;  // MW, MVAr at V = 1 p.u.
  double vm = 1, va = 0;  // p.u., degrees
  int line = 0;           // source line of the row
};

struct Gen {
  int bus = 0;  // index into Case::buses
  double pg = 0, qg = 0, qmax = 0, qmin = 0, vg = 1;
  int line = 0;
  int row = 0;  // row in the file's gen table (0-based)
};

struct Branch {
  int from = 0, to = 0;  // indices into Case::buses
  double r = 0, x = 0, b = 0;
  double ratio = 0, angle = 0;  // tap (0 = 1), phase shift (degrees)
  int line = 0;
};

struct Case {
  std::string name;  // file stem
  std::string file;  // as given
  double base_mva = 100;
  std::vector<Bus> buses;        // file order
  std::vector<Gen> gens;         // in-service generators at non-isolated buses, file order
  std::vector<Branch> branches;  // in-service branches between non-isolated buses, file order
  int ref = -1;                  // index of the type-3 bus
  std::size_t gen_rows = 0, branch_rows = 0, gencost_rows = 0;
  std::size_t gens_dropped = 0, branches_dropped = 0;
};

Case read_matpower(const std::string& path);
Case parse_matpower(std::string_view text, const std::string& file);

}  // namespace stardiff::powerflow
