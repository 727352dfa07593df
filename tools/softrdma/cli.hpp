// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The softrdma command-line tool: argument parsing and usage, pure so
// they can be unit-tested.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace softrdma::cli {

enum class Verb { help, version, list, links, qps, counters, icrc_check };

struct Command {
	Verb verb = Verb::help;
	bool json = false;
	std::string device;		 // links, qps, counters: only this device
	std::vector<std::string> files; // icrc-check
};

struct ParseResult {
	Command command;
	std::string error; // empty on success
};

// Parses the arguments after the program name.
ParseResult parse(std::span<const std::string_view> args);

std::string usage();

} // namespace softrdma::cli
