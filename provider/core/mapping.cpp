// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "mapping.hpp"

#include <sys/mman.h>
#include <sys/types.h>

namespace softrdma {

Mapping::Mapping(int fd, std::uint64_t offset, std::size_t len) noexcept
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       static_cast<off_t>(offset));
	if (p != MAP_FAILED) {
		addr_ = p;
		len_ = len;
	}
}

Mapping::~Mapping()
{
	reset();
}

Mapping &Mapping::operator=(Mapping &&o) noexcept
{
	if (this != &o) {
		reset();
		addr_ = std::exchange(o.addr_, nullptr);
		len_ = std::exchange(o.len_, 0);
	}
	return *this;
}

void Mapping::reset() noexcept
{
	if (addr_)
		munmap(addr_, len_);
	addr_ = nullptr;
	len_ = 0;
}

} // namespace softrdma
