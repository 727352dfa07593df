// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Producer side of the send and receive queue rings.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>

#include <infiniband/verbs.h>

#include "ring.hpp"
#include "softrdma_core.h"

// The fields of one send work request besides its data. A bind
// (IBV_WR_BIND_MW) uses bind_mw, an RDMA FLUSH flush, an ATOMIC WRITE
// atomic_write, every other opcode the fields beside them, as in the WQE
// (softrdma-abi.h); a request on an XRC INI QP also remote_srqn.
struct softrdma_wr_hdr {
	std::uint64_t wr_id;
	std::uint32_t opcode;	   // enum ibv_wr_opcode
	std::uint32_t send_flags;  // enum ibv_send_flags
	std::uint32_t wqe_flags;   // SOFTRDMA_WQE_BIND_TYPE1 or 0
	std::uint32_t remote_srqn; // XRC INI QPs: the XRC SRQ at the target
	union {
		struct {
			std::uint32_t imm_data; // immediate (big endian) or rkey to invalidate
			std::uint32_t rkey;
			std::uint64_t remote_addr;
			std::uint64_t compare_add;
			std::uint64_t swap;
		};
		softrdma_bind_mw_wqe bind_mw;
		softrdma_flush_wqe flush;
		softrdma_atomic_write_wqe atomic_write;
	};
};

namespace softrdma {

// IBTA 1.5's RDMA FLUSH and ATOMIC WRITE (IBV_WR_FLUSH, IBV_WR_ATOMIC_WRITE),
// which libibverbs names from rdma-core 45 on: only the ibv_wr_* API
// carries their fields.
inline constexpr std::uint32_t kWrFlush = 14;
inline constexpr std::uint32_t kWrAtomicWrite = 15;

// Whether a QP of this type takes this send opcode: RC every one we know,
// XRC INI every RC one but RDMA FLUSH and ATOMIC WRITE, UC SEND and RDMA
// WRITE (with immediate), UD SEND (with immediate).
bool qp_type_opcode(ibv_qp_type type, std::uint32_t op) noexcept;

// The header of a bind WQE besides wr_id and send_flags: the window whose
// current rkey is mw_rkey gets new_rkey and the binding in info. type1:
// from ibv_bind_mw (a type 1 window), not a bind work request.
softrdma_wr_hdr bind_mw_hdr(std::uint32_t mw_rkey, std::uint32_t new_rkey,
			    const ibv_mw_bind_info &info, bool type1) noexcept;

// Writes send work requests into a send queue ring.
//
// The QP's type decides which opcodes it takes (qp_type_opcode()) and how
// a request names its destination: on a UD QP each request needs an
// address (set_ud()) before the next begins or the batch completes; its
// WQE carries the address in ud and no remote address or rkey.
//
// Every request, whatever API it comes from (ibv_post_send, the ibv_wr_*
// API, ibv_bind_mw), is built the same way: begin() takes the next free
// slot and fills in the WQE header in a copy of its own, a data setter
// writes the body into the slot and completes the copy, and the header is
// written into the slot once, when the next request begins or the batch
// completes. complete() then publishes all requests built since start()
// with one release store of the producer index; until then the kernel sees
// none of them, and abort() drops them. The first error (queue full, a
// request that does not fit) sticks: later calls do nothing and complete()
// returns it, publishing nothing.
class SendQueue {
public:
	SendQueue(RingView ring, std::uint32_t max_sge, std::uint32_t max_inline,
		  ibv_qp_type type = IBV_QPT_RC) noexcept
		: ring_(ring), max_sge_(max_sge), max_inline_(max_inline), type_(type),
		  next_(ring.load_producer())
	{
	}

	// Posts one work request (a batch of one) and publishes it. Returns 0,
	// ENOMEM if the queue is full, or EINVAL if the request does not fit
	// (or, on a UD QP, has no address handle).
	int post(const ibv_send_wr &wr) noexcept;

	// Opens a batch.
	void start() noexcept;
	// Starts a request in the next slot: ENOMEM if none is free, EINVAL for
	// an opcode unknown or not for this QP type. Only SIGNALED, SOLICITED and FENCE of
	// wr.send_flags count here; data comes from the setters.
	void begin(const softrdma_wr_hdr &wr) noexcept;
	// The data of the request begun last: gather list (EINVAL if longer
	// than the queue takes) or inline copy (EINVAL if longer than
	// max_inline, or for an opcode that carries no data of its own).
	void set_sges(std::span<const ibv_sge> sges) noexcept;
	void set_inline(std::span<const ibv_sge> bufs) noexcept;
	void set_inline(std::span<const ibv_data_buf> bufs) noexcept;
	// The destination of the request begun last on a UD QP (EINVAL on
	// another QP type, or without an address handle): the AH the kernel
	// numbered ah_num, the remote QP and its Q_Key.
	void set_ud(const ibv_ah *ah, std::uint32_t remote_qpn, std::uint32_t remote_qkey) noexcept;
	// The XRC SRQ the request begun last on an XRC INI QP goes to (EINVAL
	// on another QP type).
	void set_xrc_srqn(std::uint32_t remote_srqn) noexcept;
	// Publishes the batch, or returns the first error and drops it.
	int complete() noexcept;
	// Drops the batch.
	void abort() noexcept;

	[[nodiscard]] bool need_kick() const noexcept
	{
		return ring_.load_flags() & SOFTRDMA_RING_NEED_KICK;
	}

private:
	template <typename Buf>
	void put_inline(std::span<const Buf> bufs) noexcept;
	// Writes the header of the request begun last into its slot.
	void finish() noexcept;
	void reset() noexcept;
	void fail(int err) noexcept
	{
		if (!err_)
			err_ = err;
	}

	RingView ring_;
	std::uint32_t max_sge_;
	std::uint32_t max_inline_;
	ibv_qp_type type_;
	// The batch: the index of the next slot to fill, the first error, and
	// the slot of the request begun last (empty before any) with the
	// header it gets, and whether it has its UD address.
	std::uint32_t next_;
	int err_ = 0;
	bool addressed_ = false;
	std::span<std::byte> cur_;
	softrdma_send_wqe hdr_{};
};

// Writes receive work requests into a receive queue ring.
class RecvQueue {
public:
	RecvQueue(RingView ring, std::uint32_t max_sge) noexcept : ring_(ring), max_sge_(max_sge) {}

	// Posts one work request and publishes it: 0, ENOMEM if the queue is
	// full, EINVAL if the request has more SGEs than it takes.
	int post(const ibv_recv_wr &wr) noexcept;

	[[nodiscard]] bool need_kick() const noexcept
	{
		return ring_.load_flags() & SOFTRDMA_RING_NEED_KICK;
	}

private:
	RingView ring_;
	std::uint32_t max_sge_;
};

} // namespace softrdma
