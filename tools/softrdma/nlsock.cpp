// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "nlsock.hpp"

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include <cstring>
#include <system_error>
#include <new>

namespace softrdma::nldev {

namespace {

struct CbDeleter {
	void operator()(nl_cb *c) const noexcept { nl_cb_put(c); }
};

// What one request's callbacks collect.
struct Reply {
	std::vector<Message> messages;
	int error = 0; // the errno of an NLMSG_ERROR
	bool done = false;
	bool out_of_memory = false;
};

// libnl calls these from C: nothing may throw out of them.
int on_valid(nl_msg *msg, void *arg) noexcept
{
	auto *r = static_cast<Reply *>(arg);
	try {
		r->messages.emplace_back(*nlmsg_hdr(msg));
	} catch (...) {
		r->out_of_memory = true;
		r->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

// NLMSG_DONE ends a dump, with the dump's error (0 or -errno) as payload.
int on_finish(nl_msg *msg, void *arg) noexcept
{
	auto *r = static_cast<Reply *>(arg);
	const nlmsghdr *h = nlmsg_hdr(msg);
	int status = 0;
	if (nlmsg_datalen(h) >= static_cast<int>(sizeof(status)))
		std::memcpy(&status, nlmsg_data(h), sizeof(status));
	if (status < 0)
		r->error = -status;
	r->done = true;
	return NL_STOP;
}

// An ACK (NLMSG_ERROR of 0) ends any other request.
int on_ack(nl_msg * /*msg*/, void *arg) noexcept
{
	static_cast<Reply *>(arg)->done = true;
	return NL_STOP;
}

int on_error(sockaddr_nl * /*nla*/, nlmsgerr *e, void *arg) noexcept
{
	auto *r = static_cast<Reply *>(arg);
	r->error = -e->error;
	r->done = true;
	return NL_STOP;
}

std::string describe(const Request &r)
{
	std::string s = "RDMA netlink command " + std::to_string(r.command);
	if (r.device)
		s += " for device index " + std::to_string(*r.device);
	if (r.port)
		s += " port " + std::to_string(*r.port);
	return s;
}

} // namespace

KernelError::KernelError(int err, const std::string &what)
	: std::runtime_error(what + ": " + std::generic_category().message(err)), err_(err)
{
}

void SockDeleter::operator()(nl_sock *s) const noexcept
{
	nl_socket_free(s);
}

Socket::Socket() : sock_(nl_socket_alloc())
{
	if (!sock_)
		throw std::bad_alloc();
	const int err = nl_connect(sock_.get(), NETLINK_RDMA);
	if (err < 0)
		throw std::runtime_error(std::string("cannot open RDMA netlink (is ib_core loaded?): ") +
					 nl_geterror(err));
}

std::vector<Message> Socket::request(const Request &r)
{
	const MsgPtr msg = build(r);
	const std::unique_ptr<nl_cb, CbDeleter> cb(nl_cb_alloc(NL_CB_DEFAULT));
	if (!cb)
		throw std::bad_alloc();
	Reply reply;
	nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &reply);
	nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &reply);
	nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_ack, &reply);
	nl_cb_err(cb.get(), NL_CB_CUSTOM, on_error, &reply);

	// libnl adds NLM_F_REQUEST, NLM_F_ACK and the sequence number.
	int err = nl_send_auto(sock_.get(), msg.get());
	if (err < 0)
		throw std::runtime_error("cannot send " + describe(r) + ": " + nl_geterror(err));
	while (!reply.done) {
		err = nl_recvmsgs(sock_.get(), cb.get());
		if (reply.error)
			throw KernelError(reply.error, describe(r));
		if (reply.out_of_memory)
			throw std::bad_alloc();
		if (err < 0)
			throw std::runtime_error("reply to " + describe(r) + ": " + nl_geterror(err));
	}
	return std::move(reply.messages);
}

} // namespace softrdma::nldev
