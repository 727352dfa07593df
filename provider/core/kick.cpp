// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kick.hpp"

#include <cerrno>
#include <cstring>

#include <rdma/ib_user_verbs.h>
#include <unistd.h>

namespace softrdma {

namespace {

// A uverbs write command: its header, then its payload, with no padding
// between (the layout libibverbs' own commands have).
template <typename Payload>
struct Command {
	ib_uverbs_cmd_hdr hdr;
	Payload payload;
};

template <typename Payload>
int write_command(int cmd_fd, std::uint32_t command, std::uint32_t qp_handle,
		  std::uint32_t wqe_size) noexcept
{
	static_assert(sizeof(Command<Payload>) == sizeof(ib_uverbs_cmd_hdr) + sizeof(Payload));
	ib_uverbs_post_send_resp resp{};
	Command<Payload> cmd{};
	cmd.hdr.command = command;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.payload.response = reinterpret_cast<std::uintptr_t>(&resp);
	cmd.payload.qp_handle = qp_handle;
	cmd.payload.wqe_size = wqe_size;
	if (write(cmd_fd, &cmd, sizeof(cmd)) != static_cast<ssize_t>(sizeof(cmd)))
		return errno ? errno : EIO;
	return 0;
}

} // namespace

int kick(int cmd_fd, std::uint32_t qp_handle, KickQueue q) noexcept
{
	if (q == KickQueue::send)
		return write_command<ib_uverbs_post_send>(cmd_fd, IB_USER_VERBS_CMD_POST_SEND,
							  qp_handle, sizeof(ib_uverbs_send_wr));
	return write_command<ib_uverbs_post_recv>(cmd_fd, IB_USER_VERBS_CMD_POST_RECV, qp_handle,
						  sizeof(ib_uverbs_recv_wr));
}

} // namespace softrdma
