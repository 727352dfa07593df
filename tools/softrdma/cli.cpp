// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace softrdma::cli {

namespace {

struct VerbName {
	std::string_view name;
	Verb verb;
};

constexpr std::array<VerbName, 10> kVerbs{{
	{"help", Verb::help},
	{"-h", Verb::help},
	{"--help", Verb::help},
	{"version", Verb::version},
	{"--version", Verb::version},
	{"list", Verb::list},
	{"links", Verb::links},
	{"qps", Verb::qps},
	{"counters", Verb::counters},
	{"icrc-check", Verb::icrc_check},
}};

bool takes_json(Verb v)
{
	return v == Verb::list || v == Verb::links || v == Verb::qps || v == Verb::counters;
}

bool takes_device(Verb v)
{
	return v == Verb::links || v == Verb::qps || v == Verb::counters;
}

} // namespace

ParseResult parse(std::span<const std::string_view> args)
{
	ParseResult r;
	if (args.empty())
		return r;
	const std::string_view verb = args[0];
	const auto *const it = std::ranges::find(kVerbs, verb, &VerbName::name);
	if (it == kVerbs.end()) {
		r.error = "unknown command '" + std::string(verb) + "'";
		return r;
	}
	r.command.verb = it->verb;
	if (r.command.verb == Verb::icrc_check) {
		for (const std::string_view a : args.subspan(1))
			r.command.files.emplace_back(a);
		if (r.command.files.empty())
			r.error = "icrc-check needs a capture file";
		return r;
	}
	for (const std::string_view a : args.subspan(1)) {
		if (takes_json(r.command.verb) && a == "--json") {
			r.command.json = true;
		} else if (takes_device(r.command.verb) && r.command.device.empty() &&
			   !a.empty() && !a.starts_with('-')) {
			r.command.device = a;
		} else {
			r.error = "unexpected argument '" + std::string(a) + "'";
			return r;
		}
	}
	return r;
}

std::string usage()
{
	return "usage: softrdma COMMAND\n"
	       "  links [DEV] [--json]     RDMA links: type (softroce, softiwarp, rxe,\n"
	       "                           siw), port state, netdev\n"
	       "  qps [DEV] [--json]       QPs: number, type, state, owner\n"
	       "  counters [DEV] [--json]  hardware counters of each port\n"
	       "  list [--json]            softrdma devices: name, transport, netdev\n"
	       "  icrc-check FILE...       recompute the ICRC of every RoCEv2 packet in\n"
	       "                           pcap captures; fails on any mismatch\n"
	       "  version                  the tool's version and uverbs ABI\n"
	       "  help                     this text\n"
	       "The tool asks the kernel over RDMA netlink, as rdma(8) does.\n"
	       "Create devices with: rdma link add NAME type softroce|softiwarp netdev IF\n";
}

} // namespace softrdma::cli
