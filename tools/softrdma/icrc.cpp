// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "icrc.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace softrdma::icrc {

namespace {

constexpr std::uint16_t kRocePort = 4791;
constexpr std::size_t kBth = 12;
constexpr std::size_t kUdp = 8;

constexpr std::array<std::uint32_t, 256> make_table()
{
	std::array<std::uint32_t, 256> t{};
	for (std::uint32_t i = 0; i < 256; ++i) {
		std::uint32_t c = i;
		for (int k = 0; k < 8; ++k)
			c = (c & 1) ? 0xedb88320U ^ (c >> 1) : c >> 1;
		t[i] = c;
	}
	return t;
}

constexpr auto kTable = make_table();

std::uint16_t be16(std::span<const std::uint8_t> p, std::size_t off)
{
	return static_cast<std::uint16_t>(p[off] << 8 | p[off + 1]);
}

std::uint32_t le32(std::span<const std::uint8_t> p, std::size_t off)
{
	return static_cast<std::uint32_t>(p[off]) | static_cast<std::uint32_t>(p[off + 1]) << 8 |
	       static_cast<std::uint32_t>(p[off + 2]) << 16 |
	       static_cast<std::uint32_t>(p[off + 3]) << 24;
}

// Length of the IP header and the UDP length check: 0 if not RoCEv2.
std::size_t roce_ip_header(std::span<const std::uint8_t> p)
{
	if (p.empty())
		return 0;
	std::size_t ihl = 0;
	if ((p[0] >> 4) == 4) {
		if (p.size() < 20 || p[9] != 17)
			return 0;
		ihl = static_cast<std::size_t>(p[0] & 0xf) * 4;
	} else if ((p[0] >> 4) == 6) {
		if (p.size() < 40 || p[6] != 17)
			return 0;
		ihl = 40;
	} else {
		return 0;
	}
	if (p.size() < ihl + kUdp + kBth + 4 || be16(p, ihl + 2) != kRocePort)
		return 0;
	return ihl;
}

} // namespace

std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> data)
{
	for (const std::uint8_t b : data)
		crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
	return crc;
}

std::optional<std::uint32_t> compute(std::span<const std::uint8_t> p)
{
	const std::size_t ihl = roce_ip_header(p);
	if (!ihl)
		return std::nullopt;
	std::vector<std::uint8_t> masked(p.begin(), p.begin() + static_cast<long>(ihl + kUdp + kBth));
	if (ihl == 40) {
		masked[0] |= 0x0f; // traffic class
		masked[1] = 0xff; // traffic class, flow label
		masked[2] = 0xff;
		masked[3] = 0xff;
		masked[7] = 0xff; // hop limit
	} else {
		masked[1] = 0xff; // TOS
		masked[8] = 0xff; // TTL
		masked[10] = 0xff; // header checksum
		masked[11] = 0xff;
	}
	masked[ihl + 6] = 0xff; // UDP checksum
	masked[ihl + 7] = 0xff;
	masked[ihl + kUdp + 4] = 0xff; // BTH resv8a
	const std::array<std::uint8_t, 8> lrh{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	std::uint32_t crc = crc32(0xffffffffU, lrh);
	crc = crc32(crc, masked);
	const std::size_t rest = ihl + kUdp + kBth;
	crc = crc32(crc, p.subspan(rest, p.size() - rest - 4));
	return ~crc;
}

std::optional<std::uint32_t> carried(std::span<const std::uint8_t> p)
{
	if (!roce_ip_header(p))
		return std::nullopt;
	return le32(p, p.size() - 4);
}

Report check_pcap(const std::filesystem::path &file)
{
	Report r;
	std::ifstream in(file, std::ios::binary);
	const std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)),
					     std::istreambuf_iterator<char>());
	const std::span<const std::uint8_t> all(data);
	if (all.size() < 24) {
		r.error = "not a pcap file: " + file.string();
		return r;
	}
	const std::uint32_t magic = le32(all, 0);
	if (magic != 0xa1b2c3d4U && magic != 0xa1b23c4dU) {
		r.error = "not a little-endian pcap file: " + file.string();
		return r;
	}
	const std::uint32_t link = le32(all, 20);
	std::size_t l2 = 0;
	if (link == 1)
		l2 = 14; // Ethernet
	else if (link == 113)
		l2 = 16; // Linux cooked
	else {
		r.error = "unsupported link type " + std::to_string(link);
		return r;
	}
	std::size_t off = 24;
	while (off + 16 <= all.size()) {
		const std::uint32_t caplen = le32(all, off + 8);
		const std::uint32_t origlen = le32(all, off + 12);
		off += 16;
		if (off + caplen > all.size())
			break;
		auto frame = all.subspan(off, caplen);
		off += caplen;
		if (caplen != origlen || frame.size() <= l2)
			continue;
		std::size_t l3 = l2;
		std::uint16_t type = be16(frame, l2 - 2);
		if (link == 1 && type == 0x8100 && frame.size() > l2 + 4) {
			type = be16(frame, l2 + 2);
			l3 += 4;
		}
		if (type != 0x0800 && type != 0x86dd)
			continue;
		auto ip = frame.subspan(l3);
		if (ip.size() < 40 && !((ip.size() >= 20) && (ip[0] >> 4) == 4))
			continue;
		// Trim Ethernet padding: trust the IP length.
		std::size_t iplen = (ip[0] >> 4) == 4 ? be16(ip, 2) : 40U + be16(ip, 4);
		if (iplen > ip.size())
			continue;
		ip = ip.first(iplen);
		const auto want = compute(ip);
		if (!want)
			continue;
		++r.roce;
		if (*want == *carried(ip))
			++r.good;
		else
			++r.bad;
	}
	return r;
}

} // namespace softrdma::icrc
