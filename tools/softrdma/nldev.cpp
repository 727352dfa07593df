// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "nldev.hpp"

#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string_view>

namespace softrdma::nldev {

namespace {

constexpr int kMaxAttr = RDMA_NLDEV_ATTR_MAX - 1;

// What each attribute this tool reads must look like; libnl checks it
// (lengths, a string's NUL) before the parsers look at a value.
constexpr std::array<nla_policy, RDMA_NLDEV_ATTR_MAX> make_policy()
{
	std::array<nla_policy, RDMA_NLDEV_ATTR_MAX> p{};
	const auto set = [&p](int attr, int type, int minlen = 0) {
		p.at(static_cast<std::size_t>(attr)) = nla_policy{
			static_cast<std::uint16_t>(type), static_cast<std::uint16_t>(minlen), 0};
	};
	for (const int a : {RDMA_NLDEV_ATTR_DEV_INDEX, RDMA_NLDEV_ATTR_PORT_INDEX,
			    RDMA_NLDEV_ATTR_NDEV_INDEX, RDMA_NLDEV_ATTR_RES_LQPN,
			    RDMA_NLDEV_ATTR_RES_RQPN, RDMA_NLDEV_ATTR_RES_SQ_PSN,
			    RDMA_NLDEV_ATTR_RES_RQ_PSN, RDMA_NLDEV_ATTR_RES_PID,
			    RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID})
		set(a, NLA_U32);
	for (const int a : {RDMA_NLDEV_ATTR_PORT_STATE, RDMA_NLDEV_ATTR_PORT_PHYS_STATE,
			    RDMA_NLDEV_ATTR_DEV_NODE_TYPE, RDMA_NLDEV_ATTR_RES_TYPE,
			    RDMA_NLDEV_ATTR_RES_STATE})
		set(a, NLA_U8);
	for (const int a : {RDMA_NLDEV_ATTR_CHARDEV_ABI,
			    RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE})
		set(a, NLA_U64);
	// A string attribute carries at least its NUL.
	for (const int a : {RDMA_NLDEV_ATTR_DEV_NAME, RDMA_NLDEV_ATTR_FW_VERSION,
			    RDMA_NLDEV_ATTR_DEV_PROTOCOL, RDMA_NLDEV_ATTR_NDEV_NAME,
			    RDMA_NLDEV_ATTR_CHARDEV_NAME, RDMA_NLDEV_ATTR_RES_KERN_NAME,
			    RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME})
		set(a, NLA_STRING, 1);
	for (const int a : {RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY,
			    RDMA_NLDEV_ATTR_DRIVER,
			    RDMA_NLDEV_ATTR_STAT_HWCOUNTERS,
			    RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY})
		set(a, NLA_NESTED);
	return p;
}

constexpr std::array<nla_policy, RDMA_NLDEV_ATTR_MAX> kPolicy = make_policy();

using Table = std::array<nlattr *, RDMA_NLDEV_ATTR_MAX>;

constexpr int nldev_type(std::uint32_t cmd)
{
	return static_cast<int>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

std::string cmd_name(std::uint32_t cmd)
{
	switch (cmd) {
	case RDMA_NLDEV_CMD_GET:
		return "RDMA_NLDEV_CMD_GET";
	case RDMA_NLDEV_CMD_PORT_GET:
		return "RDMA_NLDEV_CMD_PORT_GET";
	case RDMA_NLDEV_CMD_GET_CHARDEV:
		return "RDMA_NLDEV_CMD_GET_CHARDEV";
	case RDMA_NLDEV_CMD_RES_QP_GET:
		return "RDMA_NLDEV_CMD_RES_QP_GET";
	case RDMA_NLDEV_CMD_STAT_GET:
		return "RDMA_NLDEV_CMD_STAT_GET";
	default:
		return "command " + std::to_string(cmd);
	}
}

void check(int err, const std::string &what)
{
	if (err < 0)
		throw ParseError(what + ": " + nl_geterror(err));
}

// The attributes of a reply to cmd.
Table attrs_of(const nlmsghdr &nlh, std::uint32_t cmd)
{
	const std::string what = "reply to " + cmd_name(cmd);
	if (nlh.nlmsg_type != nldev_type(cmd))
		throw ParseError(what + ": message type " + std::to_string(nlh.nlmsg_type));
	Table tb{};
	check(nla_parse(tb.data(), kMaxAttr, nlmsg_attrdata(&nlh, 0), nlmsg_attrlen(&nlh, 0),
			kPolicy.data()),
	      what);
	return tb;
}

Table nested(nlattr *nest, const std::string &what)
{
	Table tb{};
	check(nla_parse_nested(tb.data(), kMaxAttr, nest, kPolicy.data()), what);
	return tb;
}

nlattr *need(const Table &tb, int attr, const std::string &what)
{
	nlattr *a = tb.at(static_cast<std::size_t>(attr));
	if (!a)
		throw ParseError(what + ": no attribute " + std::to_string(attr));
	return a;
}

nlattr *get(const Table &tb, int attr)
{
	return tb.at(static_cast<std::size_t>(attr));
}

std::string str(const nlattr *a)
{
	return nla_get_string(a); // the policy made sure it ends in a NUL
}

std::optional<std::uint32_t> opt_u32(const Table &tb, int attr)
{
	if (const nlattr *a = get(tb, attr))
		return nla_get_u32(a);
	return std::nullopt;
}

// For each attribute of type entry nested in table.
template <typename F> void for_each_entry(nlattr *table, int entry, F &&f)
{
	int rem = nla_len(table);
	for (auto *pos = static_cast<nlattr *>(nla_data(table)); nla_ok(pos, rem);
	     pos = nla_next(pos, &rem))
		if (nla_type(pos) == entry)
			f(pos);
}

std::string name_or_number(std::span<const char *const> names, std::uint8_t v)
{
	if (v < names.size() && names[v])
		return names[v];
	return "?" + std::to_string(v);
}

} // namespace

void MsgDeleter::operator()(nl_msg *m) const noexcept
{
	nlmsg_free(m);
}

Message::Message(const nlmsghdr &hdr)
	: words_((hdr.nlmsg_len + sizeof(std::uint32_t) - 1) / sizeof(std::uint32_t))
{
	std::memcpy(words_.data(), &hdr, hdr.nlmsg_len);
}

Message::Message(nl_msg *msg) : Message(*nlmsg_hdr(msg))
{
}

const nlmsghdr &Message::header() const
{
	return *reinterpret_cast<const nlmsghdr *>(words_.data());
}

MsgPtr build(const Request &r)
{
	MsgPtr m(nlmsg_alloc_simple(nldev_type(r.command), r.dump ? NLM_F_DUMP : 0));
	if (!m)
		throw std::bad_alloc();
	int err = 0;
	if (r.device)
		err = nla_put_u32(m.get(), RDMA_NLDEV_ATTR_DEV_INDEX, *r.device);
	if (!err && r.port)
		err = nla_put_u32(m.get(), RDMA_NLDEV_ATTR_PORT_INDEX, *r.port);
	if (!err && !r.chardev_type.empty())
		err = nla_put_string(m.get(), RDMA_NLDEV_ATTR_CHARDEV_TYPE,
				     r.chardev_type.c_str());
	if (err < 0)
		throw std::bad_alloc();
	return m;
}

Device parse_device(const nlmsghdr &nlh)
{
	const std::string what = "device";
	const Table tb = attrs_of(nlh, RDMA_NLDEV_CMD_GET);
	Device d;
	d.index = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_DEV_INDEX, what));
	d.name = str(need(tb, RDMA_NLDEV_ATTR_DEV_NAME, what));
	d.ports = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_PORT_INDEX, d.name));
	if (const nlattr *a = get(tb, RDMA_NLDEV_ATTR_FW_VERSION))
		d.fw = str(a);
	if (const nlattr *a = get(tb, RDMA_NLDEV_ATTR_DEV_PROTOCOL))
		d.protocol = str(a);
	if (const nlattr *a = get(tb, RDMA_NLDEV_ATTR_DEV_NODE_TYPE))
		d.node_type = nla_get_u8(a);
	return d;
}

Port parse_port(const nlmsghdr &nlh)
{
	const std::string what = "port";
	const Table tb = attrs_of(nlh, RDMA_NLDEV_CMD_PORT_GET);
	Port p;
	p.device = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_DEV_INDEX, what));
	p.device_name = str(need(tb, RDMA_NLDEV_ATTR_DEV_NAME, what));
	const std::string of = "port of " + p.device_name;
	p.port = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_PORT_INDEX, of));
	p.state = nla_get_u8(need(tb, RDMA_NLDEV_ATTR_PORT_STATE, of));
	p.phys_state = nla_get_u8(need(tb, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, of));
	if (const nlattr *a = get(tb, RDMA_NLDEV_ATTR_NDEV_NAME))
		p.netdev = str(a);
	p.netdev_index = opt_u32(tb, RDMA_NLDEV_ATTR_NDEV_INDEX);
	return p;
}

Chardev parse_chardev(const nlmsghdr &nlh)
{
	const std::string what = "uverbs char device";
	const Table tb = attrs_of(nlh, RDMA_NLDEV_CMD_GET_CHARDEV);
	Chardev c;
	c.name = str(need(tb, RDMA_NLDEV_ATTR_CHARDEV_NAME, what));
	c.abi = nla_get_u64(need(tb, RDMA_NLDEV_ATTR_CHARDEV_ABI, what));
	c.driver_id = opt_u32(tb, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID);
	return c;
}

namespace {

// The string value of the driver attribute called name in a driver nest
// (RDMA_NLDEV_ATTR_DRIVER): each is its name (a DRIVER_STRING), maybe a
// print type, then its value (a DRIVER_STRING, _S32, _U32, _S64 or _U64).
std::string driver_string(nlattr *nest, std::string_view name)
{
	std::optional<std::string_view> key;
	int rem = nla_len(nest);
	for (auto *pos = static_cast<nlattr *>(nla_data(nest)); nla_ok(pos, rem);
	     pos = nla_next(pos, &rem)) {
		const int type = nla_type(pos);
		if (type == RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE)
			continue;
		if (type != RDMA_NLDEV_ATTR_DRIVER_STRING) {
			key.reset(); // a number: the value of the pending name
			continue;
		}
		// Strings the kernel sends end in their NUL; take no other.
		const auto *p = static_cast<const char *>(nla_data(pos));
		const auto len = static_cast<std::size_t>(nla_len(pos));
		if (len == 0 || p[len - 1] != '\0')
			return {};
		const std::string_view v(p, len - 1);
		if (!key) {
			key = v;
			continue;
		}
		if (*key == name)
			return std::string(v);
		key.reset();
	}
	return {};
}

} // namespace

std::vector<Qp> parse_qps(const nlmsghdr &nlh)
{
	const Table tb = attrs_of(nlh, RDMA_NLDEV_CMD_RES_QP_GET);
	const std::uint32_t index = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_DEV_INDEX, "QPs"));
	const std::string name = str(need(tb, RDMA_NLDEV_ATTR_DEV_NAME, "QPs"));
	const std::string what = "QP of " + name;
	std::vector<Qp> out;
	for_each_entry(need(tb, RDMA_NLDEV_ATTR_RES_QP, "QPs of " + name),
		       RDMA_NLDEV_ATTR_RES_QP_ENTRY, [&](nlattr *entry) {
			       const Table e = nested(entry, what);
			       Qp q;
			       q.device = index;
			       q.device_name = name;
			       q.port = opt_u32(e, RDMA_NLDEV_ATTR_PORT_INDEX);
			       q.lqpn = nla_get_u32(need(e, RDMA_NLDEV_ATTR_RES_LQPN, what));
			       q.rqpn = opt_u32(e, RDMA_NLDEV_ATTR_RES_RQPN);
			       q.sq_psn = opt_u32(e, RDMA_NLDEV_ATTR_RES_SQ_PSN);
			       q.rq_psn = opt_u32(e, RDMA_NLDEV_ATTR_RES_RQ_PSN);
			       q.type = nla_get_u8(need(e, RDMA_NLDEV_ATTR_RES_TYPE, what));
			       q.state = nla_get_u8(need(e, RDMA_NLDEV_ATTR_RES_STATE, what));
			       q.pid = opt_u32(e, RDMA_NLDEV_ATTR_RES_PID);
			       if (const nlattr *a = get(e, RDMA_NLDEV_ATTR_RES_KERN_NAME))
				       q.kern_name = str(a);
			       if (nlattr *a = get(e, RDMA_NLDEV_ATTR_DRIVER))
				       q.retx = driver_string(a, "retx");
			       out.push_back(std::move(q));
		       });
	return out;
}

Counters parse_counters(const nlmsghdr &nlh)
{
	const Table tb = attrs_of(nlh, RDMA_NLDEV_CMD_STAT_GET);
	Counters c;
	c.device = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_DEV_INDEX, "counters"));
	c.device_name = str(need(tb, RDMA_NLDEV_ATTR_DEV_NAME, "counters"));
	const std::string what = "counters of " + c.device_name;
	c.port = nla_get_u32(need(tb, RDMA_NLDEV_ATTR_PORT_INDEX, what));
	for_each_entry(need(tb, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, what),
		       RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, [&](nlattr *entry) {
			       const Table e = nested(entry, what);
			       c.values.emplace_back(
				       str(need(e, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, what)),
				       nla_get_u64(need(e, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
							what)));
		       });
	return c;
}

std::string port_state_name(std::uint8_t s)
{
	static constexpr std::array<const char *, 6> names{"NOP",   "DOWN",   "INIT",
							    "ARMED", "ACTIVE", "ACTIVE_DEFER"};
	return name_or_number(names, s);
}

std::string phys_state_name(std::uint8_t s)
{
	static constexpr std::array<const char *, 8> names{
		nullptr,     "SLEEP",	"POLLING",	       "DISABLED", "PORT_CONFIGURATION_TRAINING",
		"LINK_UP", "LINK_ERROR_RECOVERY", "PHY_TEST"};
	return name_or_number(names, s);
}

std::string qp_type_name(std::uint8_t t)
{
	static constexpr std::array<const char *, 11> names{
		"SMI", "GSI",	      "RC",	  "UC",	  "UD",	    "RAW_IPV6",
		"RAW_ETHERTYPE", nullptr, "RAW_PACKET", "XRC_INI", "XRC_TGT"};
	return name_or_number(names, t);
}

std::string qp_state_name(std::uint8_t s)
{
	static constexpr std::array<const char *, 7> names{"RESET", "INIT", "RTR", "RTS",
							    "SQD",   "SQE",  "ERR"};
	return name_or_number(names, s);
}

} // namespace softrdma::nldev
