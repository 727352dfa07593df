// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "queue.hpp"

#include <cerrno>
#include <cstring>

namespace softrdma {

namespace {

// Every opcode an RC QP takes.
bool rc_opcode(std::uint32_t op) noexcept
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
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
	case kWrFlush:
	case kWrAtomicWrite:
		return true;
	default:
		return false;
	}
}

// Ops with no local data: those the kernel carries out locally, and those
// whose operands are all in the WQE.
bool dataless_op(std::uint32_t op) noexcept
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV || op == kWrFlush ||
	       op == kWrAtomicWrite;
}

// Room for one more entry? Corrupt indices count as full.
bool has_room(const RingView &ring) noexcept
{
	const std::uint32_t used = ring.load_producer() - ring.load_consumer();
	return used < ring.num_slots();
}

// Ops whose data may be copied inline: those that send local data.
bool inline_ok(std::uint32_t op) noexcept
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		return true;
	default:
		return false;
	}
}

// Verbs carry buffer addresses as integers or pointers.
const void *buf_addr(const ibv_sge &s) noexcept
{
	return reinterpret_cast<const void *>(s.addr); // NOLINT(performance-no-int-to-ptr)
}
std::uint64_t buf_len(const ibv_sge &s) noexcept
{
	return s.length;
}
const void *buf_addr(const ibv_data_buf &b) noexcept
{
	return b.addr;
}
std::uint64_t buf_len(const ibv_data_buf &b) noexcept
{
	return b.length;
}

} // namespace

bool qp_type_opcode(ibv_qp_type type, std::uint32_t op) noexcept
{
	switch (type) {
	case IBV_QPT_RC:
		return rc_opcode(op);
	case IBV_QPT_XRC_SEND:
		return rc_opcode(op) && op != kWrFlush && op != kWrAtomicWrite;
	case IBV_QPT_UC:
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
		       op == IBV_WR_RDMA_WRITE_WITH_IMM;
	case IBV_QPT_UD:
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	default:
		return false;
	}
}

softrdma_wr_hdr bind_mw_hdr(std::uint32_t mw_rkey, std::uint32_t new_rkey,
			    const ibv_mw_bind_info &info, bool type1) noexcept
{
	softrdma_wr_hdr h{};
	h.opcode = IBV_WR_BIND_MW;
	h.bind_mw.mw_rkey = mw_rkey;
	h.bind_mw.new_rkey = new_rkey;
	h.bind_mw.addr = info.addr;
	h.bind_mw.length = info.length;
	h.bind_mw.mr_lkey = info.mr ? info.mr->lkey : 0;
	h.bind_mw.access = info.mw_access_flags;
	h.wqe_flags = type1 ? SOFTRDMA_WQE_BIND_TYPE1 : 0;
	return h;
}

int SendQueue::post(const ibv_send_wr &wr) noexcept
{
	// ibv_send_wr has no fields for a FLUSH's or an ATOMIC WRITE's operands.
	if (wr.opcode == kWrFlush || wr.opcode == kWrAtomicWrite)
		return EINVAL;
	softrdma_wr_hdr h{};
	h.opcode = wr.opcode;
	h.imm_data = wr.opcode == IBV_WR_SEND_WITH_INV || wr.opcode == IBV_WR_LOCAL_INV
			     ? wr.invalidate_rkey
			     : wr.imm_data;
	if (wr.opcode == IBV_WR_BIND_MW) {
		// Checked as libibverbs' ibv_bind_mw checks type 1 binds.
		if (!wr.bind_mw.mw)
			return EINVAL;
		h = bind_mw_hdr(wr.bind_mw.mw->rkey, wr.bind_mw.rkey, wr.bind_mw.bind_info, false);
	} else if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		h.remote_addr = wr.wr.atomic.remote_addr;
		h.rkey = wr.wr.atomic.rkey;
		h.compare_add = wr.wr.atomic.compare_add;
		h.swap = wr.wr.atomic.swap;
	} else {
		h.remote_addr = wr.wr.rdma.remote_addr;
		h.rkey = wr.wr.rdma.rkey;
	}
	h.wr_id = wr.wr_id;
	h.send_flags = wr.send_flags;
	if (type_ == IBV_QPT_XRC_SEND)
		h.remote_srqn = wr.qp_type.xrc.remote_srqn;
	start();
	begin(h);
	if (type_ == IBV_QPT_UD)
		set_ud(wr.wr.ud.ah, wr.wr.ud.remote_qpn, wr.wr.ud.remote_qkey);
	if (dataless_op(wr.opcode)) {
		// No data: the list, whatever it holds, means nothing.
	} else if (wr.num_sge < 0) {
		fail(EINVAL);
	} else {
		const std::span<const ibv_sge> sges(wr.sg_list, static_cast<std::size_t>(wr.num_sge));
		// IBV_SEND_INLINE means nothing to ops without data of their own.
		if ((wr.send_flags & IBV_SEND_INLINE) && inline_ok(wr.opcode))
			set_inline(sges);
		else
			set_sges(sges);
	}
	return complete();
}

void SendQueue::reset() noexcept
{
	next_ = ring_.load_producer();
	err_ = 0;
	cur_ = {};
	addressed_ = false;
}

void SendQueue::start() noexcept
{
	reset();
}

void SendQueue::finish() noexcept
{
	if (!cur_.empty() && type_ == IBV_QPT_UD && !addressed_)
		fail(EINVAL); // a datagram with nowhere to go
	if (!cur_.empty() && !err_)
		std::memcpy(cur_.data(), &hdr_, sizeof(hdr_));
	cur_ = {};
	addressed_ = false;
}

void SendQueue::begin(const softrdma_wr_hdr &wr) noexcept
{
	finish();
	if (err_)
		return;
	if (!qp_type_opcode(type_, wr.opcode)) {
		fail(EINVAL);
		return;
	}
	// Corrupt indices count as full.
	if (next_ - ring_.load_consumer() >= ring_.num_slots()) {
		fail(ENOMEM);
		return;
	}
	hdr_ = softrdma_send_wqe{};
	hdr_.wr_id = wr.wr_id;
	hdr_.opcode = wr.opcode;
	if (wr.send_flags & IBV_SEND_SIGNALED)
		hdr_.flags |= SOFTRDMA_WQE_SIGNALED;
	if (wr.send_flags & IBV_SEND_SOLICITED)
		hdr_.flags |= SOFTRDMA_WQE_SOLICITED;
	if (wr.send_flags & IBV_SEND_FENCE)
		hdr_.flags |= SOFTRDMA_WQE_FENCE;
	hdr_.flags |= wr.wqe_flags & SOFTRDMA_WQE_BIND_TYPE1;
	if (type_ == IBV_QPT_XRC_SEND)
		hdr_.remote_srqn = wr.remote_srqn;
	if (type_ == IBV_QPT_UD) {
		hdr_.imm_data = wr.imm_data; // the address comes from set_ud()
	} else if (wr.opcode == IBV_WR_BIND_MW) {
		hdr_.bind_mw = wr.bind_mw;
	} else if (wr.opcode == kWrFlush) {
		hdr_.flush = wr.flush;
	} else if (wr.opcode == kWrAtomicWrite) {
		hdr_.atomic_write = wr.atomic_write;
	} else {
		hdr_.imm_data = wr.imm_data;
		hdr_.rkey = wr.rkey;
		hdr_.remote_addr = wr.remote_addr;
		hdr_.compare_add = wr.compare_add;
		hdr_.swap = wr.swap;
	}
	cur_ = ring_.slot(next_++);
}

void SendQueue::set_sges(std::span<const ibv_sge> sges) noexcept
{
	if (err_)
		return;
	if (cur_.empty() || sges.size() > max_sge_ ||
	    (dataless_op(hdr_.opcode) && !sges.empty())) {
		fail(EINVAL);
		return;
	}
	auto body = cur_.subspan(sizeof(softrdma_send_wqe));
	for (std::size_t i = 0; i < sges.size(); ++i) {
		const softrdma_sge e{sges[i].addr, sges[i].length, sges[i].lkey};
		std::memcpy(body.subspan(i * sizeof(e), sizeof(e)).data(), &e, sizeof(e));
	}
	hdr_.flags &= ~static_cast<std::uint32_t>(SOFTRDMA_WQE_INLINE);
	hdr_.num_sge = static_cast<std::uint32_t>(sges.size());
	hdr_.inline_len = 0;
}

void SendQueue::set_ud(const ibv_ah *ah, std::uint32_t remote_qpn,
			std::uint32_t remote_qkey) noexcept
{
	if (err_)
		return;
	if (cur_.empty() || type_ != IBV_QPT_UD || !ah) {
		fail(EINVAL);
		return;
	}
	hdr_.ud.ah_num = softrdma_ah_num(ah);
	hdr_.ud.remote_qpn = remote_qpn;
	hdr_.ud.remote_qkey = remote_qkey;
	addressed_ = true;
}

void SendQueue::set_xrc_srqn(std::uint32_t remote_srqn) noexcept
{
	if (err_)
		return;
	if (cur_.empty() || type_ != IBV_QPT_XRC_SEND) {
		fail(EINVAL);
		return;
	}
	hdr_.remote_srqn = remote_srqn;
}

template <typename Buf>
void SendQueue::put_inline(std::span<const Buf> bufs) noexcept
{
	if (err_)
		return;
	if (cur_.empty() || !inline_ok(hdr_.opcode)) {
		fail(EINVAL);
		return;
	}
	std::uint64_t total = 0;
	for (const auto &b : bufs)
		total += buf_len(b);
	if (total > max_inline_) {
		fail(EINVAL);
		return;
	}
	auto body = cur_.subspan(sizeof(softrdma_send_wqe));
	std::size_t off = 0;
	for (const auto &b : bufs) {
		const auto len = static_cast<std::size_t>(buf_len(b));
		if (len)
			std::memcpy(body.subspan(off, len).data(), buf_addr(b), len);
		off += len;
	}
	hdr_.flags |= SOFTRDMA_WQE_INLINE;
	hdr_.num_sge = 0;
	hdr_.inline_len = static_cast<std::uint32_t>(total);
}

void SendQueue::set_inline(std::span<const ibv_sge> bufs) noexcept
{
	put_inline(bufs);
}

void SendQueue::set_inline(std::span<const ibv_data_buf> bufs) noexcept
{
	put_inline(bufs);
}

int SendQueue::complete() noexcept
{
	finish();
	const int err = err_;
	if (!err)
		ring_.store_producer(next_);
	reset();
	return err;
}

void SendQueue::abort() noexcept
{
	reset();
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
