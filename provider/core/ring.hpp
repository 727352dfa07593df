// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Views over the rings the kernel maps into the process (uapi/softrdma-abi.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include <infiniband/verbs.h>

#include "softrdma-abi.h"

namespace softrdma {

// A ring header and its slots, laid out as the ABI says. Does not own the
// memory. Indices are free-running; slot i is at i & (num_slots - 1).
class RingView {
public:
	// A view over mem, or nothing if mem cannot hold such a ring.
	static std::optional<RingView> make(std::span<std::byte> mem,
					    std::uint32_t num_slots,
					    std::uint32_t slot_size) noexcept;

	[[nodiscard]] std::uint32_t num_slots() const noexcept { return num_slots_; }

	[[nodiscard]] std::uint32_t load_producer() const noexcept
	{
		return std::atomic_ref<std::uint32_t>(hdr_->producer)
			.load(std::memory_order_acquire);
	}
	void store_producer(std::uint32_t v) noexcept
	{
		std::atomic_ref<std::uint32_t>(hdr_->producer)
			.store(v, std::memory_order_release);
	}
	[[nodiscard]] std::uint32_t load_consumer() const noexcept
	{
		return std::atomic_ref<std::uint32_t>(hdr_->consumer)
			.load(std::memory_order_acquire);
	}
	void store_consumer(std::uint32_t v) noexcept
	{
		std::atomic_ref<std::uint32_t>(hdr_->consumer)
			.store(v, std::memory_order_release);
	}
	[[nodiscard]] std::uint32_t load_flags() const noexcept
	{
		return std::atomic_ref<std::uint32_t>(hdr_->flags)
			.load(std::memory_order_acquire);
	}
	// A CQ's arm word (SOFTRDMA_CQ_ARM_MAPPED): the request is seen by
	// the kernel before the caller's next read of the producer index.
	void arm(bool solicited_only) noexcept
	{
		std::atomic_ref<std::uint32_t> word(hdr_->arm);
		std::uint32_t old = word.load(std::memory_order_relaxed);
		std::uint32_t v = 0;

		// One more request in its half, the other half as it was.
		do {
			v = solicited_only ?
				    (old & SOFTRDMA_CQ_ARM_NEXT) |
					    ((old + 1) & SOFTRDMA_CQ_ARM_SOLICITED) :
				    old + (SOFTRDMA_CQ_ARM_SOLICITED + 1);
		} while (!word.compare_exchange_weak(old, v, std::memory_order_seq_cst,
						     std::memory_order_relaxed));
		std::atomic_thread_fence(std::memory_order_seq_cst);
	}

	// The slot holding index idx.
	[[nodiscard]] std::span<std::byte> slot(std::uint32_t idx) const noexcept
	{
		return slots_.subspan(static_cast<std::size_t>(idx & (num_slots_ - 1)) *
					      slot_size_,
				      slot_size_);
	}

private:
	RingView(softrdma_ring_hdr *hdr, std::span<std::byte> slots,
		 std::uint32_t num_slots, std::uint32_t slot_size) noexcept
		: hdr_(hdr), slots_(slots), num_slots_(num_slots), slot_size_(slot_size)
	{
	}

	softrdma_ring_hdr *hdr_;
	std::span<std::byte> slots_;
	std::uint32_t num_slots_;
	std::uint32_t slot_size_;
};

// The verbs work completion a softrdma CQE stands for.
void cqe_to_wc(const softrdma_cqe &cqe, ibv_wc &wc) noexcept;

// The consumer side of a completion queue ring.
class CqRing {
public:
	explicit CqRing(RingView ring) noexcept : ring_(ring) {}

	// Moves up to out.size() completions into out. Returns how many, or
	// -EIO if the producer index cannot be right (more entries than slots).
	int poll(std::span<ibv_wc> out) noexcept;

	// Removes the completions of QP qp_num that wait, keeping the others
	// in their order: after the kernel destroyed that QP (or reset it),
	// nothing may poll them (mlx5 does the same). The kernel only writes
	// beyond the producer index, so the entries moved here are the
	// consumer's own. Returns how many went, or -EIO if the producer index
	// cannot be right.
	int purge(std::uint32_t qp_num) noexcept;

	// Asks for an event at the next completion (or the next solicited
	// one) through the ring header: no system call.
	void arm(bool solicited_only) noexcept { ring_.arm(solicited_only); }

	// True if no completion waits.
	[[nodiscard]] bool empty() const noexcept
	{
		return ring_.load_producer() == ring_.load_consumer();
	}

	// The extended poll (ibv_cq_ex): start_poll() makes the oldest
	// completion current(), next_poll() the one after it; 0, ENOENT if
	// there is none, or EIO if the producer index cannot be right.
	// end_poll() hands the completions up to current() back to the kernel;
	// it is due after start_poll() returned 0, not otherwise.
	int start_poll() noexcept;
	int next_poll() noexcept;
	void end_poll() noexcept;
	[[nodiscard]] const ibv_wc &current() const noexcept { return cur_; }

private:
	int load(std::uint32_t idx) noexcept;

	RingView ring_;
	std::uint32_t idx_ = 0; // the index of current()
	ibv_wc cur_{};
};

} // namespace softrdma
