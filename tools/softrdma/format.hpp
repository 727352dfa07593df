// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What the tool prints: a text table (columns padded, header first) or a
// JSON array, from plain structs. No I/O.
#pragma once

#include <string>
#include <vector>

#include "nldev.hpp"
#include "rdma.hpp"

namespace softrdma::format {

// Rows of cells as columns two spaces apart; the last cell is not padded.
std::string table(const std::vector<std::vector<std::string>> &rows);

std::string links(const std::vector<rdma::Link> &links, bool json);
std::string qps(const std::vector<nldev::Qp> &qps, bool json);
std::string counters(const std::vector<nldev::Counters> &counters, bool json);
// `softrdma list`: the softroce and softiwarp devices (port 1), by name.
std::string devices(const std::vector<rdma::Link> &links, bool json);

} // namespace softrdma::format
