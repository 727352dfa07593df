// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "rdma.hpp"

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>

#include "softrdma-abi.h"

namespace softrdma::rdma {

namespace {

nldev::Request request(std::uint32_t command, bool dump,
		       std::optional<std::uint32_t> device = std::nullopt,
		       std::optional<std::uint32_t> port = std::nullopt)
{
	nldev::Request r;
	r.command = command;
	r.dump = dump;
	r.device = device;
	r.port = port;
	return r;
}

std::string softrdma_fw()
{
	return std::to_string(SOFTRDMA_FW_MAJOR) + '.' + std::to_string(SOFTRDMA_FW_MINOR) + '.' +
	       std::to_string(SOFTRDMA_FW_SUB);
}

// The devices, or the one named.
std::vector<nldev::Device> devices(nldev::Exchange &ex, std::string_view name)
{
	std::vector<nldev::Device> out;
	for (const auto &m : ex.request(request(RDMA_NLDEV_CMD_GET, true))) {
		nldev::Device d = nldev::parse_device(m.header());
		if (name.empty() || d.name == name)
			out.push_back(std::move(d));
	}
	if (!name.empty() && out.empty())
		throw std::runtime_error("no RDMA device '" + std::string(name) + "'");
	return out;
}

std::optional<nldev::Chardev> uverbs(nldev::Exchange &ex, std::uint32_t index)
{
	try {
		nldev::Request r = request(RDMA_NLDEV_CMD_GET_CHARDEV, false, index);
		r.chardev_type = "uverbs";
		const auto reply = ex.request(r);
		if (reply.empty())
			return std::nullopt;
		return nldev::parse_chardev(reply.front().header());
	} catch (const nldev::KernelError &) {
		return std::nullopt; // no ib_uverbs for this device
	}
}

} // namespace

std::string link_type(const nldev::Device &d, const std::optional<nldev::Chardev> &c)
{
	if (c && c->driver_id) {
		switch (*c->driver_id) {
		case RDMA_DRIVER_RXE:
			return "rxe";
		case RDMA_DRIVER_SIW:
			return "siw";
		default:
			return "";
		}
	}
	if (d.fw != softrdma_fw() || (c && c->abi != SOFTRDMA_UVERBS_ABI_VERSION))
		return "";
	if (d.protocol == "roce")
		return "softroce";
	if (d.protocol == "iw")
		return "softiwarp";
	return "";
}

std::vector<Link> links(nldev::Exchange &ex, std::string_view device)
{
	std::vector<Link> out;
	for (const auto &d : devices(ex, device)) {
		const auto c = uverbs(ex, d.index);
		const std::string type = link_type(d, c);
		for (const auto &m : ex.request(request(RDMA_NLDEV_CMD_PORT_GET, true, d.index))) {
			const nldev::Port p = nldev::parse_port(m.header());
			out.push_back({.index = d.index,
				       .device = d.name,
				       .port = p.port,
				       .type = type,
				       .protocol = d.protocol,
				       .state = nldev::port_state_name(p.state),
				       .phys_state = nldev::phys_state_name(p.phys_state),
				       .netdev = p.netdev,
				       .netdev_index = p.netdev_index,
				       .abi = c ? std::optional(c->abi) : std::nullopt});
		}
	}
	return out;
}

std::vector<nldev::Qp> qps(nldev::Exchange &ex, std::string_view device,
			   const std::function<std::string(std::uint32_t)> &comm)
{
	std::vector<nldev::Qp> out;
	for (const auto &d : devices(ex, device)) {
		for (const auto &m : ex.request(request(RDMA_NLDEV_CMD_RES_QP_GET, true, d.index))) {
			for (auto &q : nldev::parse_qps(m.header())) {
				if (q.pid)
					q.comm = comm(*q.pid);
				out.push_back(std::move(q));
			}
		}
	}
	return out;
}

std::vector<nldev::Counters> counters(nldev::Exchange &ex, std::string_view device)
{
	std::vector<nldev::Counters> out;
	for (const auto &d : devices(ex, device)) {
		for (std::uint32_t port = 1; port <= d.ports; ++port) {
			std::vector<nldev::Message> reply;
			try {
				reply = ex.request(request(RDMA_NLDEV_CMD_STAT_GET, false, d.index, port));
			} catch (const nldev::KernelError &e) {
				// A driver without hardware counters (siw).
				if (e.error() == EINVAL || e.error() == EOPNOTSUPP)
					continue;
				throw;
			}
			for (const auto &m : reply)
				out.push_back(nldev::parse_counters(m.header()));
		}
	}
	return out;
}

std::string proc_comm(std::uint32_t pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
	std::string s;
	std::getline(in, s);
	return s;
}

} // namespace softrdma::rdma
