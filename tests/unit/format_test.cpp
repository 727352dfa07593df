// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What the tool prints: text tables and --json, the JSON read back by a
// strict reader.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format.hpp"
#include "json.hpp"
#include "json_reader.hpp"

using softrdma::test::JsonReader;
using softrdma::test::JsonValue;
namespace fmt = softrdma::format;
namespace json = softrdma::json;
namespace nldev = softrdma::nldev;
namespace rdma = softrdma::rdma;

namespace {

std::vector<rdma::Link> sample_links()
{
	rdma::Link sr;
	sr.index = 0;
	sr.device = "sr1";
	sr.port = 1;
	sr.type = "softroce";
	sr.protocol = "roce";
	sr.state = "ACTIVE";
	sr.phys_state = "LINK_UP";
	sr.netdev = "veth0";
	sr.netdev_index = 3;
	sr.abi = 1;
	rdma::Link si = sr;
	si.index = 1;
	si.device = "si0";
	si.type = "softiwarp";
	si.protocol = "iw";
	si.netdev = "eth1";
	rdma::Link rxe = sr;
	rxe.index = 2;
	rxe.device = "rxe0";
	rxe.type = "rxe";
	rxe.abi = 2;
	rdma::Link other = sr;
	other.index = 3;
	other.device = "mlx5_0";
	other.type = "";
	other.state = "DOWN";
	other.phys_state = "DISABLED";
	other.netdev.reset();
	other.netdev_index.reset();
	other.abi.reset();
	return {sr, si, rxe, other};
}

std::vector<nldev::Qp> sample_qps()
{
	nldev::Qp gsi;
	gsi.device = 0;
	gsi.device_name = "sr1";
	gsi.port = 1;
	gsi.lqpn = 1;
	gsi.type = 1;
	gsi.state = 3;
	gsi.sq_psn = 0;
	gsi.kern_name = "ib_core";
	gsi.retx = "gbn";
	nldev::Qp rc;
	rc.device = 0;
	rc.device_name = "sr1";
	rc.port = 1;
	rc.lqpn = 17;
	rc.rqpn = 18;
	rc.sq_psn = 100;
	rc.rq_psn = 200;
	rc.type = 2;
	rc.state = 3;
	rc.pid = 4242;
	rc.comm = "say \"hi\"";
	rc.retx = "sr";
	nldev::Qp fresh;
	fresh.device = 1;
	fresh.device_name = "si0";
	fresh.lqpn = 5;
	fresh.type = 2;
	fresh.state = 0;
	fresh.pid = 77; // the process is gone: no comm
	return {gsi, rc, fresh};
}

} // namespace

TEST(JsonQuote, EscapesWhatJsonRequires)
{
	EXPECT_EQ(json::quote("sr0"), "\"sr0\"");
	EXPECT_EQ(json::quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
	EXPECT_EQ(json::quote("a\nb\tc"), "\"a\\nb\\tc\"");
	EXPECT_EQ(json::quote(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
	EXPECT_EQ(json::quote(std::string("\0", 1)), "\"\\u0000\"");
}

TEST(JsonQuote, KeepsUtf8AndReplacesWhatIsNot)
{
	EXPECT_EQ(json::quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	EXPECT_EQ(json::quote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
	EXPECT_EQ(json::quote("a\xff" "b"), "\"a\\ufffdb\"");
	EXPECT_EQ(json::quote("\xc0\xaf"), "\"\\ufffd\\ufffd\""); // overlong '/'
	EXPECT_EQ(json::quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); // a surrogate
	EXPECT_EQ(json::quote("x\xc3"), "\"x\\ufffd\""); // cut short
	for (const std::string s : {"a\xff", "\xc0\xaf", "\xe2\x82", "q\"\x02"})
		EXPECT_NO_THROW(JsonReader::parse(json::quote(s))) << s;
	EXPECT_EQ(JsonReader::parse(json::quote("caf\xc3\xa9\n")).text, "caf\xc3\xa9\n");
}

TEST(JsonWriter, PutsCommasBetweenMembersAndItems)
{
	json::Writer w;
	w.begin_object();
	w.key("a").begin_array().value(std::uint64_t{1}).value("x").null().end_array();
	w.key("b").begin_object().end_object();
	w.key("c").boolean(false);
	w.key("d").begin_array().end_array();
	w.end_object();
	EXPECT_EQ(w.str(), "{\"a\":[1,\"x\",null],\"b\":{},\"c\":false,\"d\":[]}\n");
}

TEST(JsonReader, RejectsInvalidJson)
{
	for (const char *bad : {"", "[1,]", "{\"a\":1,}", "[1 2]", "{a:1}", "\"a", "[01]",
				"\"\x01\"", "[1]x", "nul", R"("\x")", "\"\xff\""})
		EXPECT_THROW(JsonReader::parse(bad), std::runtime_error) << bad;
}

TEST(FormatTable, PadsEveryColumnButTheLast)
{
	EXPECT_EQ(fmt::table({{"A", "BB", "C"}, {"aaa", "b", "cccc"}}),
		  "A    BB  C\naaa  b   cccc\n");
}

TEST(FormatLinks, Text)
{
	EXPECT_EQ(fmt::links(sample_links(), false),
		  "LINK      TYPE       STATE   PHYSICAL_STATE  NETDEV\n"
		  "sr1/1     softroce   ACTIVE  LINK_UP         veth0\n"
		  "si0/1     softiwarp  ACTIVE  LINK_UP         eth1\n"
		  "rxe0/1    rxe        ACTIVE  LINK_UP         veth0\n"
		  "mlx5_0/1  -          DOWN    DISABLED        -\n");
}

TEST(FormatLinks, Json)
{
	const std::string out = fmt::links(sample_links(), true);
	ASSERT_EQ(out.back(), '\n');
	const JsonValue v = JsonReader::parse(out);
	ASSERT_EQ(v.items.size(), 4U);
	EXPECT_EQ(v[0]["device"].text, "sr1");
	EXPECT_EQ(v[0]["index"].text, "0");
	EXPECT_EQ(v[0]["port"].text, "1");
	EXPECT_EQ(v[0]["type"].text, "softroce");
	EXPECT_EQ(v[0]["protocol"].text, "roce");
	EXPECT_EQ(v[0]["state"].text, "ACTIVE");
	EXPECT_EQ(v[0]["physical_state"].text, "LINK_UP");
	EXPECT_EQ(v[0]["netdev"].text, "veth0");
	EXPECT_EQ(v[0]["netdev_index"].text, "3");
	EXPECT_EQ(v[0]["abi_version"].text, "1");
	EXPECT_EQ(v[1]["type"].text, "softiwarp");
	EXPECT_EQ(v[2]["type"].text, "rxe");
	EXPECT_TRUE(v[3]["type"].is_null());
	EXPECT_TRUE(v[3]["netdev"].is_null());
	EXPECT_TRUE(v[3]["netdev_index"].is_null());
	EXPECT_TRUE(v[3]["abi_version"].is_null());
	EXPECT_EQ(fmt::links({}, true), "[]\n");
}

TEST(FormatQps, Text)
{
	EXPECT_EQ(fmt::qps(sample_qps(), false),
		  "LINK   LQPN  RQPN  TYPE  STATE  RETX  PID   COMM\n"
		  "sr1/1  1     -     GSI   RTS    gbn   -     [ib_core]\n"
		  "sr1/1  17    18    RC    RTS    sr    4242  say \"hi\"\n"
		  "si0/-  5     -     RC    RESET  -     77    -\n");
}

TEST(FormatQps, Json)
{
	const JsonValue v = JsonReader::parse(fmt::qps(sample_qps(), true));
	ASSERT_EQ(v.items.size(), 3U);
	EXPECT_EQ(v[0]["type"].text, "GSI");
	EXPECT_EQ(v[0]["comm"].text, "ib_core");
	EXPECT_TRUE(v[0]["kernel"].b);
	EXPECT_TRUE(v[0]["pid"].is_null());
	EXPECT_TRUE(v[0]["rqpn"].is_null());
	EXPECT_EQ(v[1]["device"].text, "sr1");
	EXPECT_EQ(v[1]["lqpn"].text, "17");
	EXPECT_EQ(v[1]["rqpn"].text, "18");
	EXPECT_EQ(v[1]["state"].text, "RTS");
	EXPECT_EQ(v[1]["sq_psn"].text, "100");
	EXPECT_EQ(v[1]["rq_psn"].text, "200");
	EXPECT_EQ(v[1]["pid"].text, "4242");
	EXPECT_EQ(v[1]["comm"].text, "say \"hi\"");
	EXPECT_FALSE(v[1]["kernel"].b);
	EXPECT_EQ(v[1]["retx"].text, "sr");
	EXPECT_TRUE(v[2]["retx"].is_null());
	EXPECT_TRUE(v[2]["port"].is_null());
	EXPECT_TRUE(v[2]["comm"].is_null());
	EXPECT_EQ(v[2]["index"].text, "1");
}

TEST(FormatCounters, TextAndJson)
{
	nldev::Counters c;
	c.device = 0;
	c.device_name = "sr1";
	c.port = 1;
	c.values = {{"tx_packets", 18446744073709551615ULL}, {"rx_packets", 0}};
	EXPECT_EQ(fmt::counters({c}, false),
		  "LINK   COUNTER     VALUE\n"
		  "sr1/1  tx_packets  18446744073709551615\n"
		  "sr1/1  rx_packets  0\n");
	const JsonValue v = JsonReader::parse(fmt::counters({c}, true));
	ASSERT_EQ(v.items.size(), 1U);
	EXPECT_EQ(v[0]["device"].text, "sr1");
	EXPECT_EQ(v[0]["port"].text, "1");
	const JsonValue &n = v[0]["counters"];
	ASSERT_EQ(n.keys.size(), 2U);
	EXPECT_EQ(n.keys[0], "tx_packets");
	EXPECT_EQ(n.items[0].text, "18446744073709551615");
	EXPECT_EQ(n.keys[1], "rx_packets");
	EXPECT_EQ(n["rx_packets"].text, "0");
}

TEST(FormatDevices, ListShowsSoftrdmaDevicesByName)
{
	EXPECT_EQ(fmt::devices(sample_links(), false), "si0\tsoftiwarp\teth1\nsr1\tsoftroce\tveth0\n");
	EXPECT_EQ(fmt::devices(sample_links(), true),
		  "[{\"name\":\"si0\",\"transport\":\"softiwarp\",\"netdev\":\"eth1\","
		  "\"abi_version\":1},{\"name\":\"sr1\",\"transport\":\"softroce\","
		  "\"netdev\":\"veth0\",\"abi_version\":1}]\n");
	auto l = sample_links();
	l[0].netdev.reset(); // in another network namespace
	EXPECT_EQ(fmt::devices(l, false), "si0\tsoftiwarp\teth1\nsr1\tsoftroce\t-\n");
	EXPECT_NO_THROW(JsonReader::parse(fmt::devices(l, true)));
}
