// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>

#include "softrdma-abi.h"

namespace softrdma::cli {

ParseResult parse(std::span<const std::string_view> args)
{
	ParseResult r;
	if (args.empty())
		return r;
	const std::string_view verb = args[0];
	if (verb == "help" || verb == "-h" || verb == "--help") {
		r.command.verb = Verb::help;
	} else if (verb == "version" || verb == "--version") {
		r.command.verb = Verb::version;
	} else if (verb == "list") {
		r.command.verb = Verb::list;
	} else if (verb == "icrc-check") {
		r.command.verb = Verb::icrc_check;
		for (const std::string_view a : args.subspan(1))
			r.command.files.emplace_back(a);
		if (r.command.files.empty())
			r.error = "icrc-check needs a capture file";
		return r;
	} else {
		r.error = "unknown command '" + std::string(verb) + "'";
		return r;
	}
	for (const std::string_view a : args.subspan(1)) {
		if (r.command.verb == Verb::list && a == "--json") {
			r.command.json = true;
		} else {
			r.error = "unexpected argument '" + std::string(a) + "'";
			return r;
		}
	}
	return r;
}

namespace {

std::string read_line(const std::filesystem::path &p)
{
	std::ifstream in(p);
	std::string s;
	std::getline(in, s);
	return s;
}

std::string json_escape(std::string_view s)
{
	std::string out;
	for (const char c : s) {
		if (c == '"' || c == '\\')
			out += '\\';
		out += c;
	}
	return out;
}

} // namespace

std::vector<DeviceInfo> list_devices(const std::filesystem::path &sysfs_class)
{
	std::vector<DeviceInfo> out;
	std::error_code ec;
	for (const auto &entry : std::filesystem::directory_iterator(sysfs_class, ec)) {
		const auto abi_file = entry.path() / SOFTRDMA_SYSFS_ABI_ATTR;
		if (!std::filesystem::exists(abi_file, ec))
			continue;
		DeviceInfo d;
		d.name = entry.path().filename().string();
		const std::string abi = read_line(abi_file);
		std::from_chars(abi.data(), abi.data() + abi.size(), d.abi_version);
		d.transport = read_line(entry.path() / "transport");
		d.netdev = read_line(entry.path() / "parent");
		out.push_back(std::move(d));
	}
	std::ranges::sort(out, {}, &DeviceInfo::name);
	return out;
}

std::string format_devices(const std::vector<DeviceInfo> &devices, bool json)
{
	std::ostringstream os;
	if (json) {
		os << '[';
		for (std::size_t i = 0; i < devices.size(); ++i) {
			const auto &d = devices[i];
			os << (i ? "," : "") << R"({"name":")" << json_escape(d.name)
			   << R"(","transport":")" << json_escape(d.transport)
			   << R"(","netdev":")" << json_escape(d.netdev)
			   << R"(","abi_version":)" << d.abi_version << '}';
		}
		os << "]\n";
		return os.str();
	}
	for (const auto &d : devices)
		os << d.name << '\t' << d.transport << '\t' << d.netdev << '\n';
	return os.str();
}

std::string usage()
{
	return "usage: softrdma COMMAND\n"
	       "  list [--json]   softrdma devices: name, transport, netdev\n"
	       "  icrc-check FILE...  recompute the ICRC of every RoCEv2 packet in\n"
	       "                  pcap captures; fails on any mismatch\n"
	       "  version         the tool's version and uverbs ABI\n"
	       "  help            this text\n"
	       "Create devices with: rdma link add NAME type softroce|softiwarp netdev IF\n";
}

} // namespace softrdma::cli
