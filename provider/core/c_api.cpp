// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The C entry points of the core (softrdma_core.h).
#include <cerrno>
#include <memory>
#include <mutex>
#include <new>

#include "mapping.hpp"
#include "ring.hpp"
#include "softrdma_core.h"

struct softrdma_cq_ring {
	softrdma_cq_ring(softrdma::Mapping m, softrdma::RingView v) noexcept
		: map(std::move(m)), cq(v)
	{
	}
	softrdma::Mapping map;
	softrdma::CqRing cq;
	std::mutex lock; // verbs lets several threads poll one CQ
};

extern "C" struct softrdma_cq_ring *softrdma_cq_ring_open(int cmd_fd, uint64_t offset,
							  uint64_t size,
							  uint32_t num_slots)
{
	softrdma::Mapping map(cmd_fd, offset, size);
	if (!map.valid())
		return nullptr; // errno from mmap
	auto view = softrdma::RingView::make(map.bytes(), num_slots, SOFTRDMA_CQE_SIZE);
	if (!view) {
		errno = EPROTO;
		return nullptr;
	}
	auto *cq = new (std::nothrow) softrdma_cq_ring(std::move(map), *view);
	if (!cq)
		errno = ENOMEM;
	return cq;
}

extern "C" void softrdma_cq_ring_close(struct softrdma_cq_ring *cq)
{
	delete cq;
}

extern "C" int softrdma_cq_ring_poll(struct softrdma_cq_ring *cq, int n, struct ibv_wc *wc)
{
	if (n < 0)
		return -EINVAL;
	const std::lock_guard guard(cq->lock);
	return cq->cq.poll({wc, static_cast<std::size_t>(n)});
}
