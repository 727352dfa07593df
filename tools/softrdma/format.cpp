// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "format.hpp"

#include <algorithm>

#include "json.hpp"

namespace softrdma::format {

namespace {

std::string or_dash(const std::string &s)
{
	return s.empty() ? "-" : s;
}

template <typename T> std::string or_dash(const std::optional<T> &v)
{
	if (!v)
		return "-";
	if constexpr (std::is_same_v<T, std::string>)
		return *v;
	else
		return std::to_string(*v);
}

std::string link_name(const std::string &device, std::optional<std::uint32_t> port)
{
	return device + '/' + or_dash(port);
}

std::string comm_of(const nldev::Qp &q)
{
	if (!q.kern_name.empty())
		return '[' + q.kern_name + ']';
	return or_dash(q.comm);
}

bool is_softrdma(const rdma::Link &l)
{
	return l.type == "softroce" || l.type == "softiwarp";
}

} // namespace

std::string table(const std::vector<std::vector<std::string>> &rows)
{
	std::vector<std::size_t> width;
	for (const auto &r : rows) {
		width.resize(std::max(width.size(), r.size()));
		for (std::size_t i = 0; i < r.size(); ++i)
			width[i] = std::max(width[i], r[i].size());
	}
	std::string out;
	for (const auto &r : rows) {
		for (std::size_t i = 0; i < r.size(); ++i) {
			out += r[i];
			if (i + 1 < r.size())
				out += std::string(width[i] - r[i].size() + 2, ' ');
		}
		out += '\n';
	}
	return out;
}

std::string links(const std::vector<rdma::Link> &links, bool json)
{
	if (json) {
		json::Writer w;
		w.begin_array();
		for (const auto &l : links) {
			w.begin_object();
			w.key("device").value(l.device);
			w.key("index").value(std::uint64_t{l.index});
			w.key("port").value(std::uint64_t{l.port});
			w.key("type");
			if (l.type.empty())
				w.null();
			else
				w.value(l.type);
			w.key("protocol").value(l.protocol);
			w.key("state").value(l.state);
			w.key("physical_state").value(l.phys_state);
			w.key("netdev").value(l.netdev);
			w.key("netdev_index").value(l.netdev_index);
			w.key("abi_version").value(l.abi);
			w.end_object();
		}
		w.end_array();
		return w.str();
	}
	std::vector<std::vector<std::string>> rows{
		{"LINK", "TYPE", "STATE", "PHYSICAL_STATE", "NETDEV"}};
	for (const auto &l : links)
		rows.push_back({link_name(l.device, l.port), or_dash(l.type), l.state, l.phys_state,
				or_dash(l.netdev)});
	return table(rows);
}

std::string qps(const std::vector<nldev::Qp> &qps, bool json)
{
	if (json) {
		json::Writer w;
		w.begin_array();
		for (const auto &q : qps) {
			w.begin_object();
			w.key("device").value(q.device_name);
			w.key("index").value(std::uint64_t{q.device});
			w.key("port").value(q.port);
			w.key("lqpn").value(std::uint64_t{q.lqpn});
			w.key("rqpn").value(q.rqpn);
			w.key("type").value(nldev::qp_type_name(q.type));
			w.key("state").value(nldev::qp_state_name(q.state));
			w.key("sq_psn").value(q.sq_psn);
			w.key("rq_psn").value(q.rq_psn);
			w.key("pid").value(q.pid);
			w.key("comm");
			if (!q.kern_name.empty())
				w.value(q.kern_name);
			else if (!q.comm.empty())
				w.value(q.comm);
			else
				w.null();
			w.key("kernel").boolean(!q.kern_name.empty());
			w.key("retx");
			if (q.retx.empty())
				w.null();
			else
				w.value(q.retx);
			w.end_object();
		}
		w.end_array();
		return w.str();
	}
	std::vector<std::vector<std::string>> rows{
		{"LINK", "LQPN", "RQPN", "TYPE", "STATE", "RETX", "PID", "COMM"}};
	for (const auto &q : qps)
		rows.push_back({link_name(q.device_name, q.port), std::to_string(q.lqpn),
				or_dash(q.rqpn), nldev::qp_type_name(q.type),
				nldev::qp_state_name(q.state), or_dash(q.retx), or_dash(q.pid),
				comm_of(q)});
	return table(rows);
}

std::string counters(const std::vector<nldev::Counters> &counters, bool json)
{
	if (json) {
		json::Writer w;
		w.begin_array();
		for (const auto &c : counters) {
			w.begin_object();
			w.key("device").value(c.device_name);
			w.key("index").value(std::uint64_t{c.device});
			w.key("port").value(std::uint64_t{c.port});
			w.key("counters").begin_object();
			for (const auto &[name, value] : c.values)
				w.key(name).value(value);
			w.end_object();
			w.end_object();
		}
		w.end_array();
		return w.str();
	}
	std::vector<std::vector<std::string>> rows{{"LINK", "COUNTER", "VALUE"}};
	for (const auto &c : counters)
		for (const auto &[name, value] : c.values)
			rows.push_back({link_name(c.device_name, c.port), name, std::to_string(value)});
	return table(rows);
}

std::string devices(const std::vector<rdma::Link> &links, bool json)
{
	std::vector<rdma::Link> devs;
	std::ranges::copy_if(links, std::back_inserter(devs),
			     [](const rdma::Link &l) { return is_softrdma(l) && l.port == 1; });
	std::ranges::sort(devs, {}, &rdma::Link::device);
	if (json) {
		json::Writer w;
		w.begin_array();
		for (const auto &d : devs) {
			w.begin_object();
			w.key("name").value(d.device);
			w.key("transport").value(d.type);
			w.key("netdev").value(d.netdev);
			w.key("abi_version").value(d.abi);
			w.end_object();
		}
		w.end_array();
		return w.str();
	}
	std::string out;
	for (const auto &d : devs)
		out += d.device + '\t' + d.type + '\t' + or_dash(d.netdev) + '\n';
	return out;
}

} // namespace softrdma::format
