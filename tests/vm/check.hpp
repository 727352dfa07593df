// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// TAP-style checks shared by the guest test programs.
#pragma once

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

namespace vmtest {

inline int failures = 0;
inline int checks = 0;

inline void check(bool ok, const std::string &what)
{
	++checks;
	if (!ok)
		++failures;
	std::printf("%s %d - %s\n", ok ? "ok" : "not ok", checks, what.c_str());
}

inline void check_errno(int got, int want, const std::string &what)
{
	check(got == want,
	      what + " (errno " + std::to_string(got) + ", want " + std::to_string(want) + ")");
}

// The state @qp is in once it reaches @want, or after 2 s: a QP enters ERR
// asynchronously to its error completion in some drivers (rxe writes the CQE
// first). -1 if query_qp fails.
inline int wait_qp_state(ibv_qp *qp, ibv_qp_state want)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
	for (;;) {
		ibv_qp_attr qa{};
		ibv_qp_init_attr qi{};
		if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi))
			return -1;
		if (qa.qp_state == want || std::chrono::steady_clock::now() >= end)
			return qa.qp_state;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
}

inline ibv_context *open_by_name(std::string_view name)
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	ibv_context *ctx = nullptr;
	for (int i = 0; list && i < n; ++i)
		if (name == ibv_get_device_name(list[i]))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

// The port-1 GID table index of the GID written as text (IPv6 notation,
// e.g. ::ffff:10.0.0.1), stored into out; -1 if the table lacks it.
inline int gid_index(ibv_context *ctx, const char *text, ibv_gid &out)
{
	if (inet_pton(AF_INET6, text, out.raw) != 1)
		return -1;
	for (int i = 0; i < 32; ++i) {
		ibv_gid g{};
		if (ibv_query_gid(ctx, 1, i, &g) == 0 && std::memcmp(g.raw, out.raw, 16) == 0)
			return i;
	}
	return -1;
}

// The init attributes of a QP of type with cq for both queues and wr WRs
// of sge SGEs each way; the caller sets what else it needs.
inline ibv_qp_init_attr qp_attr(ibv_qp_type type, ibv_cq *cq, std::uint32_t wr,
				std::uint32_t sge)
{
	ibv_qp_init_attr ia{};
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = wr;
	ia.cap.max_recv_wr = wr;
	ia.cap.max_send_sge = sge;
	ia.cap.max_recv_sge = sge;
	return ia;
}

// A counter of device DEV's port 1 (rdma statistic), -1 if unreadable.
inline long hw_counter(const std::string &dev, const char *name)
{
	std::ifstream f("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/" + name);
	long v = -1;

	f >> v;
	return v;
}

// On-demand paging: the device's mapping of the whole pages within
// [p, p + len) goes (an MMU notifier invalidation of the ODP MRs over
// them). With keep, their bytes stay (mprotect to read-only and back);
// else the pages go too (MADV_DONTNEED: the next touch, the device's or
// the process's, finds zeros). Return: false if a call failed.
inline bool odp_invalidate(void *p, std::size_t len, bool keep)
{
	const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
	const auto at = reinterpret_cast<std::uintptr_t>(p);
	const std::uintptr_t lo = (at + page - 1) & ~(page - 1);
	const std::uintptr_t hi = (at + len) & ~(page - 1);

	if (hi <= lo)
		return true;
	void *first = reinterpret_cast<void *>(lo);
	if (!keep)
		return madvise(first, hi - lo, MADV_DONTNEED) == 0;
	return mprotect(first, hi - lo, PROT_READ) == 0 &&
	       mprotect(first, hi - lo, PROT_READ | PROT_WRITE) == 0;
}

inline int summary()
{
	std::printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

} // namespace vmtest
