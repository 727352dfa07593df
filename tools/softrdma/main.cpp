// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "format.hpp"
#include "icrc.hpp"
#include "nlsock.hpp"
#include "rdma.hpp"
#include "softrdma-abi.h"

namespace {

int icrc_check(const std::vector<std::string> &files)
{
	int rc = 0;
	for (const auto &f : files) {
		const auto rep = softrdma::icrc::check_pcap(f);
		if (!rep.error.empty()) {
			std::cerr << "softrdma: " << rep.error << '\n';
			rc = 1;
			continue;
		}
		std::cout << f << ": " << rep.roce << " RoCEv2 packets, " << rep.good
			  << " ICRC good, " << rep.bad << " bad\n";
		if (rep.bad || !rep.roce)
			rc = 1;
	}
	return rc;
}

int run(const softrdma::cli::Command &c)
{
	using softrdma::cli::Verb;
	namespace fmt = softrdma::format;
	namespace rdma = softrdma::rdma;

	switch (c.verb) {
	case Verb::help:
		std::cout << softrdma::cli::usage();
		return 0;
	case Verb::version:
		std::cout << "softrdma " << SOFTRDMA_FW_MAJOR << '.' << SOFTRDMA_FW_MINOR << '.'
			  << SOFTRDMA_FW_SUB << " (uverbs ABI " << SOFTRDMA_UVERBS_ABI_VERSION
			  << ")\n";
		return 0;
	case Verb::icrc_check:
		return icrc_check(c.files);
	case Verb::list: {
		softrdma::nldev::Socket s;
		std::cout << fmt::devices(rdma::links(s), c.json);
		return 0;
	}
	case Verb::links: {
		softrdma::nldev::Socket s;
		std::cout << fmt::links(rdma::links(s, c.device), c.json);
		return 0;
	}
	case Verb::qps: {
		softrdma::nldev::Socket s;
		std::cout << fmt::qps(rdma::qps(s, c.device, rdma::proc_comm), c.json);
		return 0;
	}
	case Verb::counters: {
		softrdma::nldev::Socket s;
		std::cout << fmt::counters(rdma::counters(s, c.device), c.json);
		return 0;
	}
	}
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	const std::vector<std::string_view> args(argv + 1, argv + argc);
	const auto r = softrdma::cli::parse(args);
	if (!r.error.empty()) {
		std::cerr << "softrdma: " << r.error << '\n' << softrdma::cli::usage();
		return 2;
	}
	try {
		return run(r.command);
	} catch (const std::exception &e) {
		std::cerr << "softrdma: " << e.what() << '\n';
		return 1;
	}
}
