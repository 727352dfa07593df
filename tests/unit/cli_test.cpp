// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <gtest/gtest.h>

#include <array>
#include <fstream>

#include "cli.hpp"

using softrdma::cli::parse;
using softrdma::cli::Verb;

TEST(CliParse, NoArgumentsIsHelp)
{
	const auto r = parse({});
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::help);
}

TEST(CliParse, ListWithJson)
{
	const std::array<std::string_view, 2> a{"list", "--json"};
	const auto r = parse(a);
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::list);
	EXPECT_TRUE(r.command.json);
}

TEST(CliParse, RejectsUnknownCommandAndArguments)
{
	const std::array<std::string_view, 1> a{"frobnicate"};
	EXPECT_EQ(parse(a).error, "unknown command 'frobnicate'");
	const std::array<std::string_view, 2> b{"version", "--json"};
	EXPECT_EQ(parse(b).error, "unexpected argument '--json'");
}

namespace {

void write(const std::filesystem::path &p, const std::string &s)
{
	std::ofstream(p) << s << '\n';
}

} // namespace

TEST(CliList, FindsOnlySoftrdmaDevices)
{
	const auto root = std::filesystem::temp_directory_path() /
			  ("softrdma-cli-test-" + std::to_string(::getpid()));
	std::filesystem::remove_all(root);
	for (const auto *d : {"sr1", "si0", "rxe0"})
		std::filesystem::create_directories(root / d);
	write(root / "sr1" / "softrdma_abi_version", "1");
	write(root / "sr1" / "transport", "softroce");
	write(root / "sr1" / "parent", "veth0");
	write(root / "si0" / "softrdma_abi_version", "1");
	write(root / "si0" / "transport", "softiwarp");
	write(root / "si0" / "parent", "eth1");
	write(root / "rxe0" / "parent", "veth0");

	const auto devs = softrdma::cli::list_devices(root);
	ASSERT_EQ(devs.size(), 2U);
	EXPECT_EQ(devs[0].name, "si0");
	EXPECT_EQ(devs[0].transport, "softiwarp");
	EXPECT_EQ(devs[1].name, "sr1");
	EXPECT_EQ(devs[1].netdev, "veth0");
	EXPECT_EQ(devs[1].abi_version, 1U);
	EXPECT_EQ(softrdma::cli::format_devices(devs, false),
		  "si0\tsoftiwarp\teth1\nsr1\tsoftroce\tveth0\n");
	EXPECT_EQ(softrdma::cli::format_devices(devs, true),
		  "[{\"name\":\"si0\",\"transport\":\"softiwarp\",\"netdev\":\"eth1\","
		  "\"abi_version\":1},{\"name\":\"sr1\",\"transport\":\"softroce\","
		  "\"netdev\":\"veth0\",\"abi_version\":1}]\n");
	std::filesystem::remove_all(root);
}

TEST(CliList, MissingClassDirectoryIsEmpty)
{
	EXPECT_TRUE(softrdma::cli::list_devices("/nonexistent/softrdma").empty());
}
