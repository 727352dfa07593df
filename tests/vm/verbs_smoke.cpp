// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_smoke DEVICE roce|iwarp [EXPECTED_GID]
// verbs_smoke DEVICE hold     (keep the device open until killed)
//
// Opens a softrdma device through libibverbs and checks what issue [1]
// promises: device and port attributes, PD, MR, CQ with its mapped ring
// polled empty, completion channels, and the exact errors of bad input.
// Prints one "ok"/"not ok" line per check; exits 0 only if all passed.
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"

using vmtest::check;
using vmtest::check_errno;
using vmtest::open_by_name;

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: verbs_smoke DEVICE roce|iwarp [GID]\n");
		return 2;
	}
	const std::string_view name = argv[1];
	const bool roce = std::string_view(argv[2]) == "roce";

	ibv_context *ctx = open_by_name(name);
	check(ctx != nullptr, "open " + std::string(name));
	if (!ctx)
		return 1;
	if (std::string_view(argv[2]) == "hold") {
		std::fflush(stdout);
		for (;;)
			pause();
	}

	ibv_device_attr dattr{};
	check(ibv_query_device(ctx, &dattr) == 0, "query_device");
	check(dattr.vendor_id == 0xffffff, "vendor_id is 0xffffff");
	check(std::string(dattr.fw_ver) == "0.1.0", "fw_ver 0.1.0, got " + std::string(dattr.fw_ver));
	check(dattr.phys_port_cnt == 1, "one port");
	check(dattr.max_cqe >= 4096 && dattr.max_pd > 0 && dattr.max_mr > 0, "CQ/PD/MR limits advertised");
	check(ctx->device->transport_type ==
		      (roce ? IBV_TRANSPORT_IB : IBV_TRANSPORT_IWARP),
	      "transport type");
	check(ctx->device->node_type == (roce ? IBV_NODE_CA : IBV_NODE_RNIC), "node type");

	ibv_port_attr pattr{};
	check(ibv_query_port(ctx, 1, &pattr) == 0, "query_port");
	check(pattr.state == IBV_PORT_ACTIVE, "port ACTIVE");
	check(pattr.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer Ethernet");
	check(pattr.active_mtu == IBV_MTU_1024, "active MTU 1024 on a 1500-byte netdev");
	check(pattr.max_mtu == IBV_MTU_4096, "max MTU 4096");

	if (argc > 3) {
		ibv_gid want{};
		bool found = false;
		if (inet_pton(AF_INET6, argv[3], want.raw) == 1) {
			for (int i = 0; i < pattr.gid_tbl_len; ++i) {
				ibv_gid g{};
				if (ibv_query_gid(ctx, 1, i, &g) == 0 &&
				    std::memcmp(g.raw, want.raw, sizeof(g.raw)) == 0)
					found = true;
			}
		}
		check(found, std::string("GID ") + argv[3] + " in the table");
	}

	ibv_pd *pd = ibv_alloc_pd(ctx);
	check(pd != nullptr, "alloc_pd");

	const size_t len = 64 * 1024;
	std::vector<char> buf(len);
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), len, rw);
	check(mr != nullptr, "reg_mr 64 KiB");
	ibv_mr *mr2 = ibv_reg_mr(pd, buf.data(), 4096, IBV_ACCESS_LOCAL_WRITE);
	check(mr2 != nullptr, "reg_mr 4 KiB");
	if (mr && mr2) {
		check(mr->lkey == mr->rkey && mr->length == len && mr->addr == buf.data(),
		      "MR keys and bounds");
		check(mr->lkey != mr2->lkey, "distinct MRs have distinct keys");
	}

	errno = 0;
	check(ibv_reg_mr(pd, buf.data(), len, IBV_ACCESS_REMOTE_WRITE) == nullptr, "remote write without local write refused");
	check_errno(errno, EINVAL, "... with EINVAL");
	errno = 0;
	check(ibv_reg_mr(pd, buf.data(), 0, IBV_ACCESS_LOCAL_WRITE) == nullptr, "zero-length MR refused");
	check_errno(errno, EINVAL, "... with EINVAL");
	void *hole = mmap(nullptr, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 8192);
	errno = 0;
	check(ibv_reg_mr(pd, hole, 8192, IBV_ACCESS_LOCAL_WRITE) == nullptr, "MR over unmapped memory refused");
	check_errno(errno, EFAULT, "... with EFAULT");

	ibv_cq *cq = ibv_create_cq(ctx, 100, nullptr, nullptr, 0);
	check(cq != nullptr, "create_cq 100");
	if (cq) {
		check(cq->cqe >= 100, "CQ holds at least 100, got " + std::to_string(cq->cqe));
		ibv_wc wc[4];
		check(ibv_poll_cq(cq, 4, wc) == 0, "new CQ polls empty");
		check(ibv_poll_cq(cq, 4, wc) == 0, "and again");
		check_errno(ibv_req_notify_cq(cq, 0), 0, "req_notify_cq");
	}
	errno = 0;
	check(ibv_create_cq(ctx, 0, nullptr, nullptr, 0) == nullptr, "create_cq 0 refused");
	check_errno(errno, EINVAL, "... with EINVAL");
	errno = 0;
	check(ibv_create_cq(ctx, dattr.max_cqe + 1, nullptr, nullptr, 0) == nullptr, "create_cq above max_cqe refused");
	check_errno(errno, EINVAL, "... with EINVAL");
	errno = 0;
	check(ibv_create_cq(ctx, 16, nullptr, nullptr, 5) == nullptr, "create_cq on a missing vector refused");
	check_errno(errno, EINVAL, "... with EINVAL");

	ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	check(ch != nullptr, "create_comp_channel");
	ibv_cq *ccq = ch ? ibv_create_cq(ctx, 16, nullptr, ch, 0) : nullptr;
	check(ccq != nullptr, "create_cq on a channel");
	if (ccq) {
		check_errno(ibv_req_notify_cq(ccq, 1), 0, "arm solicited");
		fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
		ibv_cq *evcq = nullptr;
		void *evctx = nullptr;
		errno = 0;
		check(ibv_get_cq_event(ch, &evcq, &evctx) == -1 && errno == EAGAIN, "no event without a completion");
		check(ibv_destroy_cq(ccq) == 0, "destroy channel CQ");
	}
	if (ch)
		check(ibv_destroy_comp_channel(ch) == 0, "destroy channel");

	ibv_qp_init_attr qattr = vmtest::qp_attr(IBV_QPT_RC, cq, 1, 1);
	ibv_qp *qp = cq ? ibv_create_qp(pd, &qattr) : nullptr;
	check(qp != nullptr, "create an RC QP (verbs_qp tests them)");
	if (qp)
		check(ibv_destroy_qp(qp) == 0, "destroy it");

	check_errno(ibv_dealloc_pd(pd), EBUSY, "dealloc_pd with MRs on it");
	if (mr2)
		check(ibv_dereg_mr(mr2) == 0, "dereg_mr 4 KiB");
	if (mr)
		check(ibv_dereg_mr(mr) == 0, "dereg_mr 64 KiB");
	if (cq)
		check(ibv_destroy_cq(cq) == 0, "destroy_cq");
	check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "close_device");

	return vmtest::summary();
}
