// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV): requests built and
// replies parsed with libnl into plain structs. No I/O here: the socket is
// in nlsock.hpp, so all of this runs on messages a unit test builds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct nl_msg;
struct nlmsghdr;

namespace softrdma::nldev {

// A reply the kernel sent that lacks what its command always carries.
class ParseError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

// libnl's message, freed with nlmsg_free().
struct MsgDeleter {
	void operator()(nl_msg *m) const noexcept;
};
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;

// One netlink message as received: header and payload, copied out of the
// receive buffer into storage aligned for struct nlmsghdr.
class Message {
public:
	// Copies hdr->nlmsg_len bytes from hdr.
	explicit Message(const nlmsghdr &hdr);
	// A copy of a message libnl built (what a test sends to the parsers).
	explicit Message(nl_msg *msg);
	[[nodiscard]] const nlmsghdr &header() const;

private:
	std::vector<std::uint32_t> words_;
};

// One request to the kernel's nldev client.
struct Request {
	std::uint32_t command = 0; // RDMA_NLDEV_CMD_*
	bool dump = false;	   // NLM_F_DUMP
	std::optional<std::uint32_t> device; // RDMA_NLDEV_ATTR_DEV_INDEX
	std::optional<std::uint32_t> port;   // RDMA_NLDEV_ATTR_PORT_INDEX
	std::string chardev_type;	     // RDMA_NLDEV_ATTR_CHARDEV_TYPE, if set
};

// The message for r (nlmsg_type, flags, attributes; libnl adds the
// sequence number and NLM_F_REQUEST when it sends it).
MsgPtr build(const Request &r);

// RDMA_NLDEV_CMD_GET: one device.
struct Device {
	std::uint32_t index = 0;
	std::string name;
	std::uint32_t ports = 0; // the last port's number
	std::string fw;		 // empty: the driver reports none
	std::string protocol;	 // "roce", "iw", "ib", ...
	std::uint8_t node_type = 0;
};

// RDMA_NLDEV_CMD_PORT_GET: one port of a device.
struct Port {
	std::uint32_t device = 0;
	std::string device_name;
	std::uint32_t port = 0;
	std::uint8_t state = 0;	     // enum ib_port_state
	std::uint8_t phys_state = 0; // enum ib_port_phys_state
	// Absent when the netdev is in another network namespace.
	std::optional<std::string> netdev;
	std::optional<std::uint32_t> netdev_index;
};

// RDMA_NLDEV_CMD_GET_CHARDEV for "uverbs": the device's verbs char device.
struct Chardev {
	std::string name;     // uverbsN
	std::uint64_t abi = 0; // the driver's uverbs ABI version
	// enum rdma_driver_id; absent when the driver asks not to be bound by
	// it (out-of-tree drivers such as softrdma).
	std::optional<std::uint32_t> driver_id;
};

// RDMA_NLDEV_CMD_RES_QP_GET: one QP of a device.
struct Qp {
	std::uint32_t device = 0;
	std::string device_name;
	std::optional<std::uint32_t> port; // absent before the QP has one
	std::uint32_t lqpn = 0;
	std::optional<std::uint32_t> rqpn; // RC and UC
	std::optional<std::uint32_t> sq_psn;
	std::optional<std::uint32_t> rq_psn; // RC and UC
	std::uint8_t type = 0;		     // enum ib_qp_type
	std::uint8_t state = 0;		     // enum ib_qp_state
	std::optional<std::uint32_t> pid;    // a process's QP
	std::string kern_name;		     // a kernel QP's owner
	std::string comm;		     // filled by the caller from pid
	// softroce's driver attribute "retx": sr (selective repeat agreed
	// by ECE) or gbn; empty where the driver does not say.
	std::string retx;
};

// RDMA_NLDEV_CMD_STAT_GET of a port: its hardware counters in the order
// the driver lists them.
struct Counters {
	std::uint32_t device = 0;
	std::string device_name;
	std::uint32_t port = 0;
	std::vector<std::pair<std::string, std::uint64_t>> values;
};

// Each throws ParseError when the message is not the reply to that command
// or misses an attribute the kernel always puts in it.
Device parse_device(const nlmsghdr &nlh);
Port parse_port(const nlmsghdr &nlh);
Chardev parse_chardev(const nlmsghdr &nlh);
// One message of a QP dump: the QPs it carries (a dump of many QPs comes
// in several messages).
std::vector<Qp> parse_qps(const nlmsghdr &nlh);
Counters parse_counters(const nlmsghdr &nlh);

// Names as the IB specification and `rdma` print them; "?" plus the
// number for a value this tool does not know.
std::string port_state_name(std::uint8_t s);
std::string phys_state_name(std::uint8_t s);
std::string qp_type_name(std::uint8_t t);
std::string qp_state_name(std::uint8_t s);

} // namespace softrdma::nldev
