// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Cache-line aligned memory for a ring, standing in for the kernel's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "softrdma-abi.h"

class AlignedRing {
public:
	AlignedRing(std::uint32_t num_slots, std::uint32_t slot_size)
		: storage_(SOFTRDMA_RING_HDR_SIZE + std::size_t{num_slots} * slot_size +
			   SOFTRDMA_CACHELINE),
		  num_slots_(num_slots), slot_size_(slot_size)
	{
	}
	std::span<std::byte> bytes()
	{
		const auto p = reinterpret_cast<std::uintptr_t>(storage_.data());
		const auto skip = (SOFTRDMA_CACHELINE - p % SOFTRDMA_CACHELINE) % SOFTRDMA_CACHELINE;
		return std::span(storage_).subspan(skip, storage_.size() - SOFTRDMA_CACHELINE);
	}
	softrdma_ring_hdr &hdr() { return *reinterpret_cast<softrdma_ring_hdr *>(bytes().data()); }
	// The slot that holds index i.
	std::span<std::byte> slot(std::uint32_t i)
	{
		return bytes().subspan(SOFTRDMA_RING_HDR_SIZE +
					       std::size_t{i & (num_slots_ - 1)} * slot_size_,
				       slot_size_);
	}
	[[nodiscard]] std::uint32_t num_slots() const { return num_slots_; }

private:
	std::vector<std::byte> storage_;
	std::uint32_t num_slots_;
	std::uint32_t slot_size_;
};
