// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "ring.hpp"

#include <bit>
#include <cerrno>
#include <cstring>

#include "softrdma-abi-check.h"

namespace softrdma {

std::optional<RingView> RingView::make(std::span<std::byte> mem,
				       std::uint32_t num_slots,
				       std::uint32_t slot_size) noexcept
{
	if (!std::has_single_bit(num_slots) || slot_size == 0)
		return std::nullopt;
	const std::size_t need = SOFTRDMA_RING_HDR_SIZE +
				 static_cast<std::size_t>(num_slots) * slot_size;
	if (mem.size() < need ||
	    reinterpret_cast<std::uintptr_t>(mem.data()) % SOFTRDMA_CACHELINE)
		return std::nullopt;
	auto *hdr = reinterpret_cast<softrdma_ring_hdr *>(mem.data());
	return RingView(hdr, mem.subspan(SOFTRDMA_RING_HDR_SIZE, need - SOFTRDMA_RING_HDR_SIZE),
			num_slots, slot_size);
}

namespace {

// The service level a datagram's completion reports. RoCEv2 carries no SL
// on the wire, and verbs have no field for the network header type of a
// received datagram (the kernel's ib_wc has network_hdr_type, ibv_wc does
// not). mlx5 reports that type in the low three bits of the SL of a RoCE
// completion (1: IPv6, 2: IPv4), and UCX's ud_verbs reads it there: from
// it, it takes where in the 40-byte GRH the destination address lies (an
// IPv4 header's last 4 bytes, or an IPv6 header's last 16) and drops
// datagrams whose destination is not one of its GIDs. Over IPv4 an SL of
// 0 makes it read 16 bytes of the IPv4 header as the GID and drop every
// datagram; so the SL says what mlx5's would.
std::uint8_t datagram_sl(const softrdma_cqe &cqe) noexcept
{
	switch (cqe.network_hdr_type) {
	case SOFTRDMA_NETWORK_IPV4:
		return 2;
	case SOFTRDMA_NETWORK_IPV6:
		return 1;
	default:
		return cqe.sl;
	}
}

} // namespace

void cqe_to_wc(const softrdma_cqe &cqe, ibv_wc &wc) noexcept
{
	wc = ibv_wc{};
	wc.wr_id = cqe.wr_id;
	wc.status = static_cast<ibv_wc_status>(cqe.status);
	wc.opcode = static_cast<ibv_wc_opcode>(cqe.opcode);
	wc.vendor_err = cqe.vendor_err;
	wc.byte_len = cqe.byte_len;
	wc.qp_num = cqe.qp_num;
	wc.src_qp = cqe.src_qp;
	wc.pkey_index = cqe.pkey_index;
	wc.slid = cqe.slid;
	wc.sl = cqe.sl;
	wc.dlid_path_bits = cqe.dlid_path_bits;
	unsigned int flags = 0;
	if (cqe.flags & SOFTRDMA_CQE_WITH_IMM) {
		flags |= IBV_WC_WITH_IMM;
		wc.imm_data = cqe.imm_data;
	} else if (cqe.flags & SOFTRDMA_CQE_WITH_INV) {
		flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = cqe.imm_data;
	}
	if (cqe.flags & SOFTRDMA_CQE_GRH) {
		flags |= IBV_WC_GRH;
		wc.sl = datagram_sl(cqe);
	}
	wc.wc_flags = flags;
}

int CqRing::poll(std::span<ibv_wc> out) noexcept
{
	const std::uint32_t prod = ring_.load_producer();
	std::uint32_t cons = ring_.load_consumer();
	const std::uint32_t avail = prod - cons;

	if (avail > ring_.num_slots())
		return -EIO;
	std::size_t n = 0;
	for (; n < out.size() && cons != prod; ++n, ++cons) {
		softrdma_cqe cqe{};
		std::memcpy(&cqe, ring_.slot(cons).data(), sizeof(cqe));
		cqe_to_wc(cqe, out[n]);
	}
	if (n)
		ring_.store_consumer(cons);
	return static_cast<int>(n);
}

int CqRing::purge(std::uint32_t qp_num) noexcept
{
	const std::uint32_t prod = ring_.load_producer();
	const std::uint32_t cons = ring_.load_consumer();

	if (prod - cons > ring_.num_slots())
		return -EIO;
	// From the newest to the oldest: each kept entry moves up by the
	// number of removed ones newer than it, so the kept ones end just
	// below the producer index, in order.
	std::uint32_t removed = 0;
	for (std::uint32_t idx = prod; idx != cons;) {
		--idx;
		softrdma_cqe cqe{};
		std::memcpy(&cqe, ring_.slot(idx).data(), sizeof(cqe));
		if (cqe.qp_num == qp_num)
			++removed;
		else if (removed)
			std::memcpy(ring_.slot(idx + removed).data(), &cqe, sizeof(cqe));
	}
	if (removed)
		ring_.store_consumer(cons + removed);
	return static_cast<int>(removed);
}

int CqRing::load(std::uint32_t idx) noexcept
{
	const std::uint32_t prod = ring_.load_producer();
	if (idx == prod)
		return ENOENT;
	if (prod - idx > ring_.num_slots())
		return EIO;
	softrdma_cqe cqe{};
	std::memcpy(&cqe, ring_.slot(idx).data(), sizeof(cqe));
	cqe_to_wc(cqe, cur_);
	idx_ = idx;
	return 0;
}

int CqRing::start_poll() noexcept
{
	return load(ring_.load_consumer());
}

int CqRing::next_poll() noexcept
{
	return load(idx_ + 1);
}

void CqRing::end_poll() noexcept
{
	ring_.store_consumer(idx_ + 1);
}

} // namespace softrdma
