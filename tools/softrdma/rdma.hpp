// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What the softrdma tool shows, gathered over RDMA netlink: links (device
// ports with their type and netdev), QPs and hardware counters. Works on
// any Exchange, so a unit test can answer in the kernel's place.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nldev.hpp"
#include "nlsock.hpp"

namespace softrdma::rdma {

// One port of an RDMA device.
struct Link {
	std::uint32_t index = 0; // the device's index
	std::string device;
	std::uint32_t port = 0;
	// The `rdma link add ... type` that made it: softroce, softiwarp, rxe
	// or siw; empty for another driver.
	std::string type;
	std::string protocol; // "roce", "iw", ... as the kernel names it
	std::string state;
	std::string phys_state;
	std::optional<std::string> netdev; // absent: in another netns
	std::optional<std::uint32_t> netdev_index;
	std::optional<std::uint64_t> abi; // the driver's uverbs ABI
};

// The link type of d, from its uverbs char device c (absent when
// ib_uverbs does not serve it). The kernel names no driver over netlink:
// rxe and siw say theirs by driver id; softrdma gives none (out-of-tree
// drivers have none), so it is known by its firmware string and uverbs
// ABI version (uapi/softrdma-abi.h), and its transport by the protocol.
std::string link_type(const nldev::Device &d, const std::optional<nldev::Chardev> &c);

// The links of every device, or of the one named device (throws
// std::runtime_error if there is no such device), in device index order.
std::vector<Link> links(nldev::Exchange &ex, std::string_view device = {});

// The QPs of every device or of one; comm(pid) names a process's QPs.
std::vector<nldev::Qp> qps(nldev::Exchange &ex, std::string_view device,
			   const std::function<std::string(std::uint32_t)> &comm);

// The hardware counters of every port that has them, of every device or
// of one.
std::vector<nldev::Counters> counters(nldev::Exchange &ex, std::string_view device = {});

// /proc/PID/comm without its newline; empty if the process is gone.
std::string proc_comm(std::uint32_t pid);

} // namespace softrdma::rdma
