// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <gtest/gtest.h>

#include <array>

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

TEST(CliParse, NetlinkCommandsTakeJsonAndADevice)
{
	const std::array<std::string_view, 3> a{"qps", "sr0", "--json"};
	auto r = parse(a);
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::qps);
	EXPECT_EQ(r.command.device, "sr0");
	EXPECT_TRUE(r.command.json);
	const std::array<std::string_view, 2> b{"counters", "--json"};
	r = parse(b);
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::counters);
	EXPECT_EQ(r.command.device, "");
	const std::array<std::string_view, 1> c{"links"};
	r = parse(c);
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::links);
	EXPECT_FALSE(r.command.json);
}

TEST(CliParse, IcrcCheckNeedsFiles)
{
	const std::array<std::string_view, 3> a{"icrc-check", "a.pcap", "b.pcap"};
	const auto r = parse(a);
	EXPECT_TRUE(r.error.empty());
	EXPECT_EQ(r.command.verb, Verb::icrc_check);
	EXPECT_EQ(r.command.files, (std::vector<std::string>{"a.pcap", "b.pcap"}));
	const std::array<std::string_view, 1> b{"icrc-check"};
	EXPECT_EQ(parse(b).error, "icrc-check needs a capture file");
}

TEST(CliParse, RejectsUnknownCommandAndArguments)
{
	const std::array<std::string_view, 1> a{"frobnicate"};
	EXPECT_EQ(parse(a).error, "unknown command 'frobnicate'");
	const std::array<std::string_view, 2> b{"version", "--json"};
	EXPECT_EQ(parse(b).error, "unexpected argument '--json'");
	// One device at most, options it does not know, no device for list.
	const std::array<std::string_view, 3> c{"links", "sr0", "si0"};
	EXPECT_EQ(parse(c).error, "unexpected argument 'si0'");
	const std::array<std::string_view, 2> d{"qps", "--all"};
	EXPECT_EQ(parse(d).error, "unexpected argument '--all'");
	const std::array<std::string_view, 2> e{"list", "sr0"};
	EXPECT_EQ(parse(e).error, "unexpected argument 'sr0'");
}
