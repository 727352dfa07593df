// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "queue.hpp"

#include <cerrno>
#include <cstring>

namespace softrdma {

namespace {

bool known_opcode(ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return true;
	default:
		return false;
	}
}

// Room for one more entry? Corrupt indices count as full.
bool has_room(const RingView &ring) noexcept
{
	const std::uint32_t used = ring.load_producer() - ring.load_consumer();
	return used < ring.num_slots();
}

} // namespace

int SendQueue::post(const ibv_send_wr &wr) noexcept
{
	if (!known_opcode(wr.opcode))
		return EINVAL;
	softrdma_send_wqe hdr{};
	hdr.wr_id = wr.wr_id;
	hdr.opcode = wr.opcode;
	if (wr.send_flags & IBV_SEND_SIGNALED)
		hdr.flags |= SOFTRDMA_WQE_SIGNALED;
	if (wr.send_flags & IBV_SEND_SOLICITED)
		hdr.flags |= SOFTRDMA_WQE_SOLICITED;
	if (wr.send_flags & IBV_SEND_FENCE)
		hdr.flags |= SOFTRDMA_WQE_FENCE;
	hdr.imm_data = wr.opcode == IBV_WR_SEND_WITH_INV ? wr.invalidate_rkey : wr.imm_data;
	if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		hdr.remote_addr = wr.wr.atomic.remote_addr;
		hdr.rkey = wr.wr.atomic.rkey;
		hdr.compare_add = wr.wr.atomic.compare_add;
		hdr.swap = wr.wr.atomic.swap;
	} else {
		hdr.remote_addr = wr.wr.rdma.remote_addr;
		hdr.rkey = wr.wr.rdma.rkey;
	}
	if (wr.num_sge < 0)
		return EINVAL;
	const auto nsge = static_cast<std::uint32_t>(wr.num_sge);
	std::span<const ibv_sge> sges(wr.sg_list, nsge);

	const bool inl = (wr.send_flags & IBV_SEND_INLINE) && wr.opcode != IBV_WR_RDMA_READ;
	std::uint64_t inline_len = 0;
	if (inl) {
		for (const auto &s : sges)
			inline_len += s.length;
		if (inline_len > max_inline_)
			return EINVAL;
		hdr.flags |= SOFTRDMA_WQE_INLINE;
		hdr.inline_len = static_cast<std::uint32_t>(inline_len);
	} else {
		if (nsge > max_sge_)
			return EINVAL;
		hdr.num_sge = nsge;
	}
	if (!has_room(ring_))
		return ENOMEM;

	const std::uint32_t prod = ring_.load_producer();
	auto slot = ring_.slot(prod);
	std::memcpy(slot.data(), &hdr, sizeof(hdr));
	auto body = slot.subspan(sizeof(hdr));
	if (inl) {
		std::size_t off = 0;
		for (const auto &s : sges) {
			// Verbs carry buffer addresses as integers.
			const auto *src = reinterpret_cast<const void *>( // NOLINT(performance-no-int-to-ptr)
				s.addr);
			std::memcpy(body.subspan(off, s.length).data(), src, s.length);
			off += s.length;
		}
	} else {
		for (std::uint32_t i = 0; i < nsge; ++i) {
			const softrdma_sge e{sges[i].addr, sges[i].length, sges[i].lkey};
			std::memcpy(body.subspan(i * sizeof(e), sizeof(e)).data(), &e, sizeof(e));
		}
	}
	ring_.store_producer(prod + 1);
	return 0;
}

int RecvQueue::post(const ibv_recv_wr &wr) noexcept
{
	if (wr.num_sge < 0 || static_cast<std::uint32_t>(wr.num_sge) > max_sge_)
		return EINVAL;
	if (!has_room(ring_))
		return ENOMEM;
	const auto nsge = static_cast<std::uint32_t>(wr.num_sge);
	softrdma_recv_wqe hdr{};
	hdr.wr_id = wr.wr_id;
	hdr.num_sge = nsge;
	const std::uint32_t prod = ring_.load_producer();
	auto slot = ring_.slot(prod);
	std::memcpy(slot.data(), &hdr, sizeof(hdr));
	auto body = slot.subspan(sizeof(hdr));
	std::span<const ibv_sge> sges(wr.sg_list, nsge);
	for (std::uint32_t i = 0; i < nsge; ++i) {
		const softrdma_sge e{sges[i].addr, sges[i].length, sges[i].lkey};
		std::memcpy(body.subspan(i * sizeof(e), sizeof(e)).data(), &e, sizeof(e));
	}
	ring_.store_producer(prod + 1);
	return 0;
}

} // namespace softrdma
