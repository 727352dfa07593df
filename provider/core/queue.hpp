// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Producer side of the send and receive queue rings.
#pragma once

#include <cstdint>
#include <mutex>

#include <infiniband/verbs.h>

#include "ring.hpp"

namespace softrdma {

// Writes send work requests into a send queue ring.
class SendQueue {
public:
	SendQueue(RingView ring, std::uint32_t max_sge, std::uint32_t max_inline) noexcept
		: ring_(ring), max_sge_(max_sge), max_inline_(max_inline)
	{
	}

	// Posts one work request and publishes it. Returns 0, ENOMEM if the
	// queue is full, or EINVAL if the request does not fit the queue.
	int post(const ibv_send_wr &wr) noexcept;

	[[nodiscard]] bool need_wakeup() const noexcept
	{
		return ring_.load_flags() & SOFTRDMA_RING_NEED_WAKEUP;
	}

private:
	RingView ring_;
	std::uint32_t max_sge_;
	std::uint32_t max_inline_;
};

// Writes receive work requests into a receive queue ring.
class RecvQueue {
public:
	RecvQueue(RingView ring, std::uint32_t max_sge) noexcept : ring_(ring), max_sge_(max_sge) {}

	// As SendQueue::post.
	int post(const ibv_recv_wr &wr) noexcept;

	[[nodiscard]] bool need_wakeup() const noexcept
	{
		return ring_.load_flags() & SOFTRDMA_RING_NEED_WAKEUP;
	}

private:
	RingView ring_;
	std::uint32_t max_sge_;
};

} // namespace softrdma
