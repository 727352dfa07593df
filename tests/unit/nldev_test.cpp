// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA netlink: requests the tool builds, replies it parses (messages
// built here the way the kernel's nldev.c builds them), and the queries
// that combine them, answered by a fake kernel.
#include <gtest/gtest.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cerrno>
#include <functional>
#include <map>
#include <tuple>
#include <string>
#include <system_error>
#include <vector>

#include "nl_builder.hpp"
#include "nldev.hpp"
#include "nlsock.hpp"
#include "rdma.hpp"

using softrdma::nldev::Message;
using softrdma::nldev::ParseError;
using softrdma::nldev::Request;
using softrdma::test::NlBuilder;
namespace nldev = softrdma::nldev;
namespace rdma = softrdma::rdma;

namespace {

constexpr std::uint8_t kPortActive = 4;
constexpr std::uint8_t kLinkUp = 5;
constexpr std::uint8_t kQptRc = 2;
constexpr std::uint8_t kQptGsi = 1;
constexpr std::uint8_t kQpsRts = 3;
constexpr std::uint8_t kQpsInit = 1;

NlBuilder device_msg(std::uint32_t index, const std::string &name, const std::string &fw,
		     const std::string &protocol)
{
	NlBuilder b(RDMA_NLDEV_CMD_GET, NLM_F_MULTI);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, index)
		.str(RDMA_NLDEV_ATTR_DEV_NAME, name)
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
		.pad()
		.u64(RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1234);
	if (!fw.empty())
		b.str(RDMA_NLDEV_ATTR_FW_VERSION, fw);
	b.u8(RDMA_NLDEV_ATTR_DEV_NODE_TYPE, protocol == "iw" ? 4 : 1)
		.str(RDMA_NLDEV_ATTR_DEV_PROTOCOL, protocol);
	return b;
}

NlBuilder port_msg(std::uint32_t index, const std::string &name, const std::string &netdev,
		   std::uint32_t ifindex)
{
	NlBuilder b(RDMA_NLDEV_CMD_PORT_GET, NLM_F_MULTI);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, index)
		.str(RDMA_NLDEV_ATTR_DEV_NAME, name)
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
		.u8(RDMA_NLDEV_ATTR_PORT_STATE, kPortActive)
		.u8(RDMA_NLDEV_ATTR_PORT_PHYS_STATE, kLinkUp);
	if (!netdev.empty())
		b.u32(RDMA_NLDEV_ATTR_NDEV_INDEX, ifindex).str(RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	return b;
}

NlBuilder chardev_msg(std::uint64_t abi, std::optional<std::uint32_t> driver_id)
{
	NlBuilder b(RDMA_NLDEV_CMD_GET_CHARDEV);
	if (driver_id)
		b.u32(RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, *driver_id);
	b.u64(RDMA_NLDEV_ATTR_CHARDEV, 0xe700000000ULL)
		.u64(RDMA_NLDEV_ATTR_CHARDEV_ABI, abi)
		.str(RDMA_NLDEV_ATTR_CHARDEV_NAME, "uverbs0");
	return b;
}

} // namespace

TEST(NldevRequest, DumpOfADevicesQps)
{
	Request r;
	r.command = RDMA_NLDEV_CMD_RES_QP_GET;
	r.dump = true;
	r.device = 7;
	const Message m(nldev::build(r).get());
	const nlmsghdr &h = m.header();
	EXPECT_EQ(h.nlmsg_type, (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_RES_QP_GET);
	EXPECT_EQ(h.nlmsg_flags & NLM_F_DUMP, NLM_F_DUMP);
	std::array<nlattr *, RDMA_NLDEV_ATTR_MAX> tb{};
	ASSERT_EQ(nla_parse(tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nlmsg_attrdata(&h, 0),
			    nlmsg_attrlen(&h, 0), nullptr),
		  0);
	ASSERT_NE(tb[RDMA_NLDEV_ATTR_DEV_INDEX], nullptr);
	EXPECT_EQ(nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]), 7U);
	EXPECT_EQ(tb[RDMA_NLDEV_ATTR_PORT_INDEX], nullptr);
	EXPECT_EQ(tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE], nullptr);
}

TEST(NldevRequest, ChardevAndStatAreNotDumps)
{
	Request r;
	r.command = RDMA_NLDEV_CMD_GET_CHARDEV;
	r.device = 2;
	r.port = 1;
	r.chardev_type = "uverbs";
	const Message m(nldev::build(r).get());
	const nlmsghdr &h = m.header();
	EXPECT_EQ(h.nlmsg_type, (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_GET_CHARDEV);
	EXPECT_EQ(h.nlmsg_flags & NLM_F_DUMP, 0);
	std::array<nlattr *, RDMA_NLDEV_ATTR_MAX> tb{};
	ASSERT_EQ(nla_parse(tb.data(), RDMA_NLDEV_ATTR_MAX - 1, nlmsg_attrdata(&h, 0),
			    nlmsg_attrlen(&h, 0), nullptr),
		  0);
	EXPECT_EQ(nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]), 2U);
	EXPECT_EQ(nla_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]), 1U);
	EXPECT_STREQ(nla_get_string(tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE]), "uverbs");
}

TEST(NldevParse, Device)
{
	const Message m = device_msg(3, "sr0", "0.1.0", "roce").message();
	const nldev::Device d = nldev::parse_device(m.header());
	EXPECT_EQ(d.index, 3U);
	EXPECT_EQ(d.name, "sr0");
	EXPECT_EQ(d.ports, 1U);
	EXPECT_EQ(d.fw, "0.1.0");
	EXPECT_EQ(d.protocol, "roce");
	EXPECT_EQ(d.node_type, 1);
}

TEST(NldevParse, DeviceWithoutFirmwareString)
{
	const Message m = device_msg(0, "rxe0", "", "roce").message();
	EXPECT_EQ(nldev::parse_device(m.header()).fw, "");
}

TEST(NldevParse, RejectsAnotherCommandsReply)
{
	const Message m = port_msg(0, "sr0", "veth0", 3).message();
	EXPECT_THROW(nldev::parse_device(m.header()), ParseError);
	EXPECT_THROW(nldev::parse_qps(m.header()), ParseError);
}

TEST(NldevParse, RejectsAMissingName)
{
	NlBuilder b(RDMA_NLDEV_CMD_GET);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 0).u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	const Message m = b.message();
	EXPECT_THROW(nldev::parse_device(m.header()), ParseError);
}

TEST(NldevParse, RejectsAStringWithoutItsNul)
{
	NlBuilder b(RDMA_NLDEV_CMD_GET);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 0)
		.raw(RDMA_NLDEV_ATTR_DEV_NAME, "sr0")
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	const Message m = b.message();
	EXPECT_THROW(nldev::parse_device(m.header()), ParseError);
}

TEST(NldevParse, RejectsAShortInteger)
{
	NlBuilder b(RDMA_NLDEV_CMD_GET);
	b.raw(RDMA_NLDEV_ATTR_DEV_INDEX, "ab")
		.str(RDMA_NLDEV_ATTR_DEV_NAME, "sr0")
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	const Message m = b.message();
	EXPECT_THROW(nldev::parse_device(m.header()), ParseError);
}

TEST(NldevParse, PortWithItsNetdev)
{
	const Message m = port_msg(3, "sr0", "veth0", 12).message();
	const nldev::Port p = nldev::parse_port(m.header());
	EXPECT_EQ(p.device, 3U);
	EXPECT_EQ(p.device_name, "sr0");
	EXPECT_EQ(p.port, 1U);
	EXPECT_EQ(p.state, kPortActive);
	EXPECT_EQ(p.phys_state, kLinkUp);
	EXPECT_EQ(p.netdev, "veth0");
	EXPECT_EQ(p.netdev_index, 12U);
}

TEST(NldevParse, PortWhoseNetdevIsInAnotherNamespace)
{
	const Message m = port_msg(1, "sr1", "", 0).message();
	const nldev::Port p = nldev::parse_port(m.header());
	EXPECT_FALSE(p.netdev.has_value());
	EXPECT_FALSE(p.netdev_index.has_value());
}

TEST(NldevParse, Chardev)
{
	const Message a = chardev_msg(1, std::nullopt).message();
	const nldev::Chardev c = nldev::parse_chardev(a.header());
	EXPECT_EQ(c.name, "uverbs0");
	EXPECT_EQ(c.abi, 1U);
	EXPECT_FALSE(c.driver_id.has_value());
	const Message b = chardev_msg(2, RDMA_DRIVER_RXE).message();
	EXPECT_EQ(nldev::parse_chardev(b.header()).driver_id, std::uint32_t{RDMA_DRIVER_RXE});
}

TEST(NldevParse, QpsOfOneDumpMessage)
{
	NlBuilder b(RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_MULTI);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3).str(RDMA_NLDEV_ATTR_DEV_NAME, "sr0");
	b.nest(RDMA_NLDEV_ATTR_RES_QP);
	b.nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
		.u32(RDMA_NLDEV_ATTR_RES_LQPN, 1)
		.str(RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core")
		.u32(RDMA_NLDEV_ATTR_RES_SQ_PSN, 0)
		.u8(RDMA_NLDEV_ATTR_RES_TYPE, kQptGsi)
		.u8(RDMA_NLDEV_ATTR_RES_STATE, kQpsRts)
		.end();
	b.nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
		.u32(RDMA_NLDEV_ATTR_RES_LQPN, 17)
		.u32(RDMA_NLDEV_ATTR_RES_PDN, 2)
		.u32(RDMA_NLDEV_ATTR_RES_PID, 4242)
		.u32(RDMA_NLDEV_ATTR_RES_RQPN, 18)
		.u32(RDMA_NLDEV_ATTR_RES_RQ_PSN, 0xabcdef)
		.u32(RDMA_NLDEV_ATTR_RES_SQ_PSN, 0x123456)
		.u8(RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, 0)
		.u8(RDMA_NLDEV_ATTR_RES_TYPE, kQptRc)
		.u8(RDMA_NLDEV_ATTR_RES_STATE, kQpsRts);
	// softroce's driver attributes: "ece" 0x1 (u32, hex), "retx" "sr".
	b.nest(RDMA_NLDEV_ATTR_DRIVER)
		.str(RDMA_NLDEV_ATTR_DRIVER_STRING, "ece")
		.u8(RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE, RDMA_NLDEV_PRINT_TYPE_HEX)
		.u32(RDMA_NLDEV_ATTR_DRIVER_U32, 1)
		.str(RDMA_NLDEV_ATTR_DRIVER_STRING, "retx")
		.str(RDMA_NLDEV_ATTR_DRIVER_STRING, "sr")
		.end();
	b.end();
	// A QP that has no port yet (just created).
	b.nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		.u32(RDMA_NLDEV_ATTR_RES_LQPN, 19)
		.u32(RDMA_NLDEV_ATTR_RES_PID, 4243)
		.u8(RDMA_NLDEV_ATTR_RES_TYPE, kQptRc)
		.u8(RDMA_NLDEV_ATTR_RES_STATE, kQpsInit)
		.end();
	b.end();
	const Message m = b.message();
	const auto qps = nldev::parse_qps(m.header());
	ASSERT_EQ(qps.size(), 3U);
	EXPECT_EQ(qps[0].lqpn, 1U);
	EXPECT_EQ(qps[0].kern_name, "ib_core");
	EXPECT_FALSE(qps[0].pid.has_value());
	EXPECT_EQ(nldev::qp_type_name(qps[0].type), "GSI");
	EXPECT_EQ(qps[1].device, 3U);
	EXPECT_EQ(qps[1].device_name, "sr0");
	EXPECT_EQ(qps[1].port, 1U);
	EXPECT_EQ(qps[1].lqpn, 17U);
	EXPECT_EQ(qps[1].rqpn, 18U);
	EXPECT_EQ(qps[1].rq_psn, 0xabcdefU);
	EXPECT_EQ(qps[1].sq_psn, 0x123456U);
	EXPECT_EQ(qps[1].pid, 4242U);
	EXPECT_EQ(nldev::qp_type_name(qps[1].type), "RC");
	EXPECT_EQ(nldev::qp_state_name(qps[1].state), "RTS");
	EXPECT_EQ(qps[1].retx, "sr");
	EXPECT_TRUE(qps[0].retx.empty());
	EXPECT_FALSE(qps[2].port.has_value());
	EXPECT_FALSE(qps[2].rqpn.has_value());
	EXPECT_EQ(nldev::qp_state_name(qps[2].state), "INIT");
}

TEST(NldevParse, RejectsAQpWithoutItsState)
{
	NlBuilder b(RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_MULTI);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3).str(RDMA_NLDEV_ATTR_DEV_NAME, "sr0");
	b.nest(RDMA_NLDEV_ATTR_RES_QP)
		.nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		.u32(RDMA_NLDEV_ATTR_RES_LQPN, 17)
		.u8(RDMA_NLDEV_ATTR_RES_TYPE, kQptRc)
		.end()
		.end();
	const Message m = b.message();
	EXPECT_THROW(nldev::parse_qps(m.header()), ParseError);
}

TEST(NldevParse, CountersInTheDriversOrder)
{
	NlBuilder b(RDMA_NLDEV_CMD_STAT_GET);
	b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 3)
		.str(RDMA_NLDEV_ATTR_DEV_NAME, "sr0")
		.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	b.nest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
	b.nest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true)
		.str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "tx_packets")
		.pad()
		.u64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 0x1'0000'0005ULL)
		.end();
	b.nest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true)
		.str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "rx_packets")
		.u64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 0)
		.end();
	b.end();
	const Message m = b.message();
	const nldev::Counters c = nldev::parse_counters(m.header());
	EXPECT_EQ(c.device, 3U);
	EXPECT_EQ(c.device_name, "sr0");
	EXPECT_EQ(c.port, 1U);
	ASSERT_EQ(c.values.size(), 2U);
	EXPECT_EQ(c.values[0].first, "tx_packets");
	EXPECT_EQ(c.values[0].second, 0x1'0000'0005ULL);
	EXPECT_EQ(c.values[1].first, "rx_packets");
	EXPECT_EQ(c.values[1].second, 0U);
}

TEST(NldevParse, StateNames)
{
	EXPECT_EQ(nldev::port_state_name(1), "DOWN");
	EXPECT_EQ(nldev::port_state_name(4), "ACTIVE");
	EXPECT_EQ(nldev::port_state_name(9), "?9");
	EXPECT_EQ(nldev::phys_state_name(3), "DISABLED");
	EXPECT_EQ(nldev::phys_state_name(5), "LINK_UP");
	EXPECT_EQ(nldev::phys_state_name(0), "?0");
	EXPECT_EQ(nldev::qp_type_name(4), "UD");
	EXPECT_EQ(nldev::qp_type_name(7), "?7");
	EXPECT_EQ(nldev::qp_state_name(6), "ERR");
}

namespace {

// The kernel's side of the exchange: answers each request from a table
// keyed by command and device index, or with an errno.
class FakeKernel final : public nldev::Exchange {
public:
	using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
	struct Answer {
		std::vector<NlBuilder> messages;
		int error = 0;
	};
	void answer(std::uint32_t cmd, std::uint32_t dev, std::uint32_t port, Answer a)
	{
		answers_[{cmd, dev, port}] = std::move(a);
	}
	std::vector<Message> request(const Request &r) override
	{
		requests_.push_back(r);
		const auto it = answers_.find({r.command, r.device.value_or(~0U), r.port.value_or(0)});
		if (it == answers_.end())
			throw nldev::KernelError(EINVAL, "unexpected request");
		if (it->second.error)
			throw nldev::KernelError(it->second.error, "request");
		std::vector<Message> out;
		for (const auto &b : it->second.messages)
			out.push_back(b.message());
		return out;
	}
	[[nodiscard]] const std::vector<Request> &requests() const { return requests_; }

private:
	std::vector<Request> requests_;
	std::map<Key, Answer> answers_;
};

constexpr std::uint32_t kAll = ~0U;

// sr0 (softroce on veth0), si0 (softiwarp on veth0), rxe0 and siw0.
void four_devices(FakeKernel &k)
{
	FakeKernel::Answer devs;
	devs.messages.push_back(device_msg(0, "sr0", "0.1.0", "roce"));
	devs.messages.push_back(device_msg(1, "si0", "0.1.0", "iw"));
	devs.messages.push_back(device_msg(2, "rxe0", "", "roce"));
	devs.messages.push_back(device_msg(3, "siw0", "", "iw"));
	k.answer(RDMA_NLDEV_CMD_GET, kAll, 0, std::move(devs));
	const std::array<std::optional<std::uint32_t>, 4> ids{
		std::nullopt, std::nullopt, RDMA_DRIVER_RXE, RDMA_DRIVER_SIW};
	const std::array<std::uint64_t, 4> abis{1, 1, 2, 1};
	const std::array<const char *, 4> names{"sr0", "si0", "rxe0", "siw0"};
	const std::array<const char *, 4> netdevs{"veth0", "veth0", "veth0", ""};
	for (std::uint32_t i = 0; i < 4; ++i) {
		FakeKernel::Answer c;
		c.messages.push_back(chardev_msg(abis.at(i), ids.at(i)));
		k.answer(RDMA_NLDEV_CMD_GET_CHARDEV, i, 0, std::move(c));
		FakeKernel::Answer p;
		p.messages.push_back(port_msg(i, names.at(i), netdevs.at(i), 5));
		k.answer(RDMA_NLDEV_CMD_PORT_GET, i, 0, std::move(p));
	}
}

} // namespace

TEST(RdmaLinks, TypesFromDriverIdFirmwareAndProtocol)
{
	FakeKernel k;
	four_devices(k);
	const auto links = rdma::links(k);
	ASSERT_EQ(links.size(), 4U);
	EXPECT_EQ(links[0].device, "sr0");
	EXPECT_EQ(links[0].type, "softroce");
	EXPECT_EQ(links[0].protocol, "roce");
	EXPECT_EQ(links[0].state, "ACTIVE");
	EXPECT_EQ(links[0].phys_state, "LINK_UP");
	EXPECT_EQ(links[0].netdev, "veth0");
	EXPECT_EQ(links[0].netdev_index, 5U);
	EXPECT_EQ(links[0].abi, 1U);
	EXPECT_EQ(links[1].type, "softiwarp");
	EXPECT_EQ(links[2].type, "rxe");
	EXPECT_EQ(links[2].abi, 2U);
	EXPECT_EQ(links[3].type, "siw");
	EXPECT_FALSE(links[3].netdev.has_value());
	// Port dumps name their device.
	const auto &r = k.requests().back();
	EXPECT_EQ(r.command, std::uint32_t{RDMA_NLDEV_CMD_PORT_GET});
	EXPECT_TRUE(r.dump);
	EXPECT_EQ(r.device, 3U);
}

TEST(RdmaLinks, OneDeviceByName)
{
	FakeKernel k;
	four_devices(k);
	const auto links = rdma::links(k, "si0");
	ASSERT_EQ(links.size(), 1U);
	EXPECT_EQ(links[0].device, "si0");
	EXPECT_THROW(rdma::links(k, "nosuch0"), std::runtime_error);
}

TEST(RdmaLinks, SoftrdmaWithoutUverbsIsKnownByItsFirmware)
{
	FakeKernel k;
	four_devices(k);
	k.answer(RDMA_NLDEV_CMD_GET_CHARDEV, 0, 0, {.messages = {}, .error = EOPNOTSUPP});
	const auto links = rdma::links(k, "sr0");
	ASSERT_EQ(links.size(), 1U);
	EXPECT_EQ(links[0].type, "softroce");
	EXPECT_FALSE(links[0].abi.has_value());
}

TEST(RdmaLinks, LinkTypeNeedsFirmwareAndAbiToMatch)
{
	nldev::Device d;
	d.fw = "0.1.0";
	d.protocol = "iw";
	nldev::Chardev c;
	c.abi = 1;
	EXPECT_EQ(rdma::link_type(d, c), "softiwarp");
	d.protocol = "ib";
	EXPECT_EQ(rdma::link_type(d, c), "");
	d.protocol = "roce";
	c.abi = 2;
	EXPECT_EQ(rdma::link_type(d, c), "");
	c.abi = 1;
	d.fw = "2.0.0";
	EXPECT_EQ(rdma::link_type(d, c), "");
	c.driver_id = 1; // mlx5: another driver, whatever its firmware says
	d.fw = "0.1.0";
	EXPECT_EQ(rdma::link_type(d, c), "");
}

TEST(RdmaQps, EveryDevicesQpsWithTheirOwners)
{
	FakeKernel k;
	four_devices(k);
	for (std::uint32_t i = 0; i < 4; ++i) {
		FakeKernel::Answer a;
		if (i == 1) {
			NlBuilder b(RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_MULTI);
			b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, 1).str(RDMA_NLDEV_ATTR_DEV_NAME, "si0");
			b.nest(RDMA_NLDEV_ATTR_RES_QP)
				.nest(RDMA_NLDEV_ATTR_RES_QP_ENTRY)
				.u32(RDMA_NLDEV_ATTR_RES_LQPN, 5)
				.u32(RDMA_NLDEV_ATTR_RES_PID, 77)
				.u8(RDMA_NLDEV_ATTR_RES_TYPE, kQptRc)
				.u8(RDMA_NLDEV_ATTR_RES_STATE, kQpsRts)
				.end()
				.end();
			a.messages.push_back(std::move(b));
		}
		k.answer(RDMA_NLDEV_CMD_RES_QP_GET, i, 0, std::move(a));
	}
	std::vector<std::uint32_t> asked;
	const auto qps = rdma::qps(k, "", [&asked](std::uint32_t pid) {
		asked.push_back(pid);
		return std::string("ibv_rc_pingpong");
	});
	ASSERT_EQ(qps.size(), 1U);
	EXPECT_EQ(qps[0].device_name, "si0");
	EXPECT_EQ(qps[0].lqpn, 5U);
	EXPECT_EQ(qps[0].comm, "ibv_rc_pingpong");
	EXPECT_EQ(asked, std::vector<std::uint32_t>{77});
	int dumps = 0;
	for (const auto &r : k.requests())
		if (r.command == RDMA_NLDEV_CMD_RES_QP_GET) {
			EXPECT_TRUE(r.dump);
			EXPECT_TRUE(r.device.has_value());
			++dumps;
		}
	EXPECT_EQ(dumps, 4);
}

TEST(RdmaCounters, PortsWithoutCountersAreSkippedOtherErrorsAreNot)
{
	FakeKernel k;
	four_devices(k);
	for (std::uint32_t i = 0; i < 4; ++i) {
		FakeKernel::Answer a;
		if (i == 3) {
			a.error = EINVAL; // siw has no hardware counters
		} else {
			NlBuilder b(RDMA_NLDEV_CMD_STAT_GET);
			b.u32(RDMA_NLDEV_ATTR_DEV_INDEX, i)
				.str(RDMA_NLDEV_ATTR_DEV_NAME, "d" + std::to_string(i))
				.u32(RDMA_NLDEV_ATTR_PORT_INDEX, 1)
				.nest(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true)
				.nest(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true)
				.str(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "tx_packets")
				.u64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 10 + i)
				.end()
				.end();
			a.messages.push_back(std::move(b));
		}
		k.answer(RDMA_NLDEV_CMD_STAT_GET, i, 1, std::move(a));
	}
	const auto c = rdma::counters(k);
	ASSERT_EQ(c.size(), 3U);
	EXPECT_EQ(c[2].device, 2U);
	EXPECT_EQ(c[2].values.at(0).second, 12U);
	const auto &r = k.requests().back();
	EXPECT_EQ(r.command, std::uint32_t{RDMA_NLDEV_CMD_STAT_GET});
	EXPECT_FALSE(r.dump);
	EXPECT_EQ(r.port, 1U);

	k.answer(RDMA_NLDEV_CMD_STAT_GET, 3, 1, {.messages = {}, .error = EPERM});
	EXPECT_THROW(rdma::counters(k), nldev::KernelError);
}

TEST(RdmaSocket, KernelErrorCarriesTheErrno)
{
	const nldev::KernelError e(EOPNOTSUPP, "x");
	EXPECT_EQ(e.error(), EOPNOTSUPP);
	EXPECT_EQ(std::string(e.what()), "x: " + std::generic_category().message(EOPNOTSUPP));
}
