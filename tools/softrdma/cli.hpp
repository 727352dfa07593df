// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The softrdma command-line tool: argument parsing and device discovery,
// kept free of I/O beyond sysfs reads so they can be unit-tested.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace softrdma::cli {

enum class Verb { help, version, list, icrc_check };

struct Command {
	Verb verb = Verb::help;
	bool json = false;
	std::vector<std::string> files; // icrc-check
};

struct ParseResult {
	Command command;
	std::string error; // empty on success
};

// Parses the arguments after the program name.
ParseResult parse(std::span<const std::string_view> args);

struct DeviceInfo {
	std::string name;      // ib_device name
	std::string transport; // "softroce" or "softiwarp"
	std::string netdev;    // the parent netdev
	unsigned abi_version = 0;
};

// The softrdma devices under sysfs_class (normally /sys/class/infiniband),
// sorted by name. Devices of other drivers are skipped.
std::vector<DeviceInfo> list_devices(const std::filesystem::path &sysfs_class);

// The text `softrdma list` prints.
std::string format_devices(const std::vector<DeviceInfo> &devices, bool json);

std::string usage();

} // namespace softrdma::cli
