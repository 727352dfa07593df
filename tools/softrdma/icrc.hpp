// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RoCEv2 ICRC (IBTA Annex A17.3.3) and a pcap reader to check captures,
// written independently of the kernel's: a second opinion on the wire.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace softrdma::icrc {

// CRC-32 (IEEE 802.3, reflected), continuing from crc (0xffffffff to start).
std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> data);

// The ICRC of a RoCEv2 packet p given from its IP header (v4 or v6) on,
// ICRC included at its end. nullopt if it is not a RoCEv2 packet.
std::optional<std::uint32_t> compute(std::span<const std::uint8_t> p);

// The ICRC the packet carries (its last four bytes, little endian).
std::optional<std::uint32_t> carried(std::span<const std::uint8_t> p);

struct Report {
	unsigned roce = 0; // RoCEv2 packets seen
	unsigned good = 0;
	unsigned bad = 0;
	std::string error; // a file that could not be read
};

// Checks every UDP 4791 packet of an Ethernet or Linux "any" capture.
Report check_pcap(const std::filesystem::path &file);

} // namespace softrdma::icrc
