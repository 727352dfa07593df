// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The kernel end of RDMA netlink: requests go out on a libnl socket
// (NETLINK_RDMA) and every message of the reply comes back copied.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nldev.hpp"

struct nl_sock;

namespace softrdma::nldev {

// The kernel refused a request: err is its errno (positive).
class KernelError : public std::runtime_error {
public:
	KernelError(int err, const std::string &what);
	[[nodiscard]] int error() const noexcept { return err_; }

private:
	int err_;
};

// Sends requests and returns their replies: the netlink socket, or a
// unit test's canned messages.
class Exchange {
public:
	Exchange() = default;
	Exchange(const Exchange &) = delete;
	Exchange &operator=(const Exchange &) = delete;
	Exchange(Exchange &&) = delete;
	Exchange &operator=(Exchange &&) = delete;
	virtual ~Exchange() = default;
	// Every message of the reply (all parts of a dump), in order. Throws
	// KernelError when the kernel answers with an error.
	virtual std::vector<Message> request(const Request &r) = 0;
};

struct SockDeleter {
	void operator()(nl_sock *s) const noexcept;
};

class Socket final : public Exchange {
public:
	// Connects to NETLINK_RDMA; throws KernelError if it cannot.
	Socket();
	std::vector<Message> request(const Request &r) override;

private:
	std::unique_ptr<nl_sock, SockDeleter> sock_;
};

} // namespace softrdma::nldev
