// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The kick: the one system call of the data path.
#pragma once

#include <cstdint>

namespace softrdma {

// Which queue of a QP a kick is for.
enum class KickQueue { send, recv };

// Tells the kernel that a QP's send (receive) ring holds new work requests:
// a POST_SEND (POST_RECV) command on cmd_fd with none of its own. The
// provider kicks only after it published the producer index and found
// SOFTRDMA_RING_NEED_KICK set (DESIGN.md, "Data path"). Returns 0 or an
// errno.
int kick(int cmd_fd, std::uint32_t qp_handle, KickQueue q) noexcept;

} // namespace softrdma
