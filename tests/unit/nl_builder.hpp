// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Builds RDMA netlink messages as the kernel's nldev would send them,
// with libnl, for the parsers' tests.
#pragma once

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nldev.hpp"

namespace softrdma::test {

class NlBuilder {
public:
	explicit NlBuilder(std::uint32_t cmd, int flags = 0)
		: msg_(nlmsg_alloc_simple(static_cast<int>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd)),
					  flags))
	{
		if (!msg_)
			throw std::bad_alloc();
	}
	NlBuilder &u8(int attr, std::uint8_t v) { return ok(nla_put_u8(msg_.get(), attr, v)); }
	NlBuilder &u32(int attr, std::uint32_t v) { return ok(nla_put_u32(msg_.get(), attr, v)); }
	NlBuilder &u64(int attr, std::uint64_t v) { return ok(nla_put_u64(msg_.get(), attr, v)); }
	NlBuilder &str(int attr, const std::string &v)
	{
		return ok(nla_put_string(msg_.get(), attr, v.c_str()));
	}
	// An attribute of exactly these bytes (a string without its NUL...).
	NlBuilder &raw(int attr, const std::string &bytes)
	{
		return ok(nla_put(msg_.get(), attr, static_cast<int>(bytes.size()), bytes.data()));
	}
	// The empty RDMA_NLDEV_ATTR_PAD the kernel may put before a u64.
	NlBuilder &pad() { return ok(nla_put(msg_.get(), RDMA_NLDEV_ATTR_PAD, 0, nullptr)); }
	// A nest as the kernel's nla_nest_start_noflag() makes it, or with
	// NLA_F_NESTED set as its nla_nest_start() does.
	NlBuilder &nest(int attr, bool flagged = false)
	{
		nlattr *n = nla_nest_start(msg_.get(), flagged ? attr | NLA_F_NESTED : attr);
		if (!n)
			throw std::bad_alloc();
		open_.push_back(n);
		return *this;
	}
	NlBuilder &end()
	{
		ok(nla_nest_end(msg_.get(), open_.back()));
		open_.pop_back();
		return *this;
	}
	[[nodiscard]] nldev::Message message() const { return nldev::Message(msg_.get()); }

private:
	NlBuilder &ok(int err)
	{
		if (err < 0)
			throw std::runtime_error("libnl could not build the message");
		return *this;
	}
	nldev::MsgPtr msg_;
	std::vector<nlattr *> open_;
};

} // namespace softrdma::test
