// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "icrc.hpp"
#include "softrdma-abi.h"

int main(int argc, char **argv)
{
	const std::vector<std::string_view> args(argv + 1, argv + argc);
	const auto r = softrdma::cli::parse(args);
	if (!r.error.empty()) {
		std::cerr << "softrdma: " << r.error << '\n' << softrdma::cli::usage();
		return 2;
	}
	switch (r.command.verb) {
	case softrdma::cli::Verb::help:
		std::cout << softrdma::cli::usage();
		return 0;
	case softrdma::cli::Verb::version:
		std::cout << "softrdma " << SOFTRDMA_FW_MAJOR << '.' << SOFTRDMA_FW_MINOR << '.'
			  << SOFTRDMA_FW_SUB << " (uverbs ABI " << SOFTRDMA_UVERBS_ABI_VERSION
			  << ")\n";
		return 0;
	case softrdma::cli::Verb::icrc_check: {
		int rc = 0;
		for (const auto &f : r.command.files) {
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
	case softrdma::cli::Verb::list:
		std::cout << softrdma::cli::format_devices(
			softrdma::cli::list_devices("/sys/class/infiniband"), r.command.json);
		return 0;
	}
	return 1;
}
