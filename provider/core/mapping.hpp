// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RAII for a shared mapping of kernel memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace softrdma {

class Mapping {
public:
	Mapping() noexcept = default;
	// Map len bytes of fd at offset, read-write and shared. Check valid().
	Mapping(int fd, std::uint64_t offset, std::size_t len) noexcept;
	~Mapping();
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&o) noexcept
		: addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0))
	{
	}
	Mapping &operator=(Mapping &&o) noexcept;

	[[nodiscard]] bool valid() const noexcept { return addr_ != nullptr; }
	[[nodiscard]] std::span<std::byte> bytes() const noexcept
	{
		return {static_cast<std::byte *>(addr_), len_};
	}

private:
	void reset() noexcept;

	void *addr_ = nullptr;
	std::size_t len_ = 0;
};

} // namespace softrdma
