// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma_ktest: RC transfers between two softrdma devices, posted and
 * polled by a kernel consumer (this module) through the kernel verbs.
 *
 *   insmod softrdma_ktest.ko [dev_a=sr0 ip_a=10.0.0.1 dev_b=sr1 ip_b=10.0.0.2]
 *
 * Every check runs at load: insmod succeeds only if all passed; the first
 * mismatch is reported with pr_err and fails the load. Everything the test
 * made is released on every path.
 */
#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_a = "sr0";
static char *ip_a = "10.0.0.1";
static char *dev_b = "sr1";
static char *ip_b = "10.0.0.2";
module_param(dev_a, charp, 0444);
module_param(ip_a, charp, 0444);
module_param(dev_b, charp, 0444);
module_param(ip_b, charp, 0444);
MODULE_PARM_DESC(dev_a, "first device (requester of most tests)");
MODULE_PARM_DESC(ip_a, "IPv4 address of the first device's GID");
MODULE_PARM_DESC(dev_b, "second device (responder of most tests)");
MODULE_PARM_DESC(ip_b, "IPv4 address of the second device's GID");

#define KT_BUF		SZ_64K
#define KT_TIMEOUT_MS	20000
#define KT_FR_OFF	45056		/* FRMR region in B's buffer: 3 pages */
#define KT_FR_LEN	(3 * PAGE_SIZE)
#define KT_ALL_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

#define KT_FAIL(fmt, ...) ({						\
	pr_err("softrdma_ktest: line %d: " fmt "\n", __LINE__,		\
	       ##__VA_ARGS__);						\
	-EIO;								\
})

static __printf(3, 4) bool kt_bad(bool bad, int line, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (!bad)
		return false;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("softrdma_ktest: line %d: %pV\n", line, &vaf);
	va_end(args);
	return true;
}

/* True, after a pr_err naming @cond, if @cond does not hold. */
#define KT_BAD(cond, fmt, ...) \
	kt_bad(!(cond), __LINE__, "%s: " fmt, #cond, ##__VA_ARGS__)

struct kt_side {
	const char *name;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	bool cq_alloced;		/* ib_alloc_cq(), completions by wr_cqe */
	struct ib_qp *qp;
	struct ib_srq *srq;		/* receives go here, if set */
	union ib_gid gid;
	u8 sgid_index;
	u8 *buf;
	u64 dma;
	bool mapped;
	struct completion notified;	/* by the CQ's completion handler */
};

static struct kt_side kt_a, kt_b;
static struct ib_mr *kt_fr;		/* B's fast-registration MR */
static struct scatterlist kt_fr_sg;
static bool kt_fr_sg_mapped;

static void kt_comp(struct ib_cq *cq, void *ctx)
{
	struct kt_side *s = ctx;

	complete(&s->notified);
}

static void kt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 31 + i * 7 + (i >> 8));
}

/*
 * The RDMA device named @name, held (ib_device_put() lets it go), or NULL.
 * A kernel consumer meets devices as an ib_client: registering one calls
 * its add() for each registered device, before ib_register_client()
 * returns. Declining them all, the client keeps none.
 */
static const char *kt_want;
static struct ib_device *kt_found;

static int kt_client_add(struct ib_device *dev)
{
	if (!kt_found && !strcmp(dev_name(&dev->dev), kt_want) &&
	    ib_device_try_get(dev))
		kt_found = dev;
	return -EOPNOTSUPP;
}

static struct ib_client kt_client = {
	.name = "softrdma_ktest",
	.add = kt_client_add,
};

static struct ib_device *kt_device_get(const char *name)
{
	struct ib_device *dev;

	kt_want = name;
	kt_found = NULL;
	if (ib_register_client(&kt_client))
		return NULL;
	dev = kt_found;
	ib_unregister_client(&kt_client);
	return dev;
}

static int kt_setup(struct kt_side *s, const char *name, const char *ip,
		    bool use_srq, bool alloc_cq)
{
	struct ib_cq_init_attr cqa = { .cqe = 256 };
	struct ib_qp_init_attr qpa = {};
	const struct ib_gid_attr *ga;

	s->name = name;
	init_completion(&s->notified);
	s->dev = kt_device_get(name);
	if (!s->dev)
		return KT_FAIL("no RDMA device %s", name);
	/* softrdma has no DMA device: DMA addresses are kernel VAs. */
	if (KT_BAD(ib_uses_virt_dma(s->dev), "%s", name))
		return -EIO;
	ipv6_addr_set_v4mapped(in_aton(ip), (struct in6_addr *)s->gid.raw);
	ga = rdma_find_gid_by_port(s->dev, &s->gid, IB_GID_TYPE_ROCE_UDP_ENCAP,
				   1, NULL);
	if (IS_ERR(ga))
		return KT_FAIL("%s has no RoCEv2 GID for %s", name, ip);
	s->sgid_index = ga->index;
	rdma_put_gid_attr(ga);

	s->pd = ib_alloc_pd(s->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(s->pd)) {
		int ret = PTR_ERR(s->pd);

		s->pd = NULL;
		return KT_FAIL("%s: ib_alloc_pd: %d", name, ret);
	}
	if (alloc_cq)
		s->cq = ib_alloc_cq(s->dev, s, 64, 0, IB_POLL_WORKQUEUE);
	else
		s->cq = ib_create_cq(s->dev, kt_comp, NULL, s, &cqa);
	s->cq_alloced = alloc_cq && !IS_ERR(s->cq);
	if (IS_ERR(s->cq)) {
		int ret = PTR_ERR(s->cq);

		s->cq = NULL;
		return KT_FAIL("%s: ib_create_cq: %d", name, ret);
	}
	if (use_srq) {
		struct ib_srq_init_attr sa = {
			.srq_type = IB_SRQT_BASIC,
			.attr = { .max_wr = 32, .max_sge = 4 },
		};

		s->srq = ib_create_srq(s->pd, &sa);
		if (IS_ERR(s->srq)) {
			int ret = PTR_ERR(s->srq);

			s->srq = NULL;
			return KT_FAIL("%s: ib_create_srq: %d", name, ret);
		}
		qpa.srq = s->srq;
	}
	qpa.send_cq = s->cq;
	qpa.recv_cq = s->cq;
	qpa.qp_type = IB_QPT_RC;
	qpa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qpa.cap.max_send_wr = 32;
	qpa.cap.max_recv_wr = 32;
	qpa.cap.max_send_sge = 4;
	qpa.cap.max_recv_sge = 4;
	s->qp = ib_create_qp(s->pd, &qpa);
	if (IS_ERR(s->qp)) {
		int ret = PTR_ERR(s->qp);

		s->qp = NULL;
		return KT_FAIL("%s: ib_create_qp: %d", name, ret);
	}
	s->buf = kzalloc(KT_BUF, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	s->dma = ib_dma_map_single(s->dev, s->buf, KT_BUF, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(s->dev, s->dma))
		return KT_FAIL("%s: ib_dma_map_single failed", name);
	s->mapped = true;
	if (KT_BAD(s->dma == (uintptr_t)s->buf, "%s: %llx", name, s->dma))
		return -EIO;
	return 0;
}

static void kt_teardown(struct kt_side *s)
{
	if (s->qp)
		ib_destroy_qp(s->qp);
	if (s->srq)
		ib_destroy_srq(s->srq);
	if (s->cq && s->cq_alloced)
		ib_free_cq(s->cq);
	else if (s->cq)
		ib_destroy_cq(s->cq);
	if (s->mapped)
		ib_dma_unmap_single(s->dev, s->dma, KT_BUF, DMA_BIDIRECTIONAL);
	kfree(s->buf);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	if (s->dev)
		ib_device_put(s->dev);
	memset(s, 0, sizeof(*s));
}

/* Bring @s's QP to RTS, connected to @peer's. */
static int kt_connect(struct kt_side *s, struct kt_side *peer)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return KT_FAIL("%s: to INIT: %d", s->name, ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x1000;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &peer->gid, 0, s->sgid_index, 64, 0);
	ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return KT_FAIL("%s: to RTR: %d", s->name, ret);

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x1000;
	a.max_rd_atomic = 4;
	ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return KT_FAIL("%s: to RTS: %d", s->name, ret);
	return 0;
}

/* Poll one completion of @s, waiting up to KT_TIMEOUT_MS. */
static int kt_poll(struct kt_side *s, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KT_TIMEOUT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(s->cq, 1, wc);
		if (n)
			return n == 1 ? 0 : KT_FAIL("%s: poll: %d", s->name, n);
		if (time_after(jiffies, end))
			return KT_FAIL("%s: no completion", s->name);
		usleep_range(200, 1000);
	}
}

/* Poll the next completion of @s and check its wr_id, status, opcode. */
static int kt_expect(struct kt_side *s, u64 wr_id, enum ib_wc_status status,
		     enum ib_wc_opcode opcode, struct ib_wc *wc)
{
	int ret = kt_poll(s, wc);

	if (ret)
		return ret;
	if (wc->wr_id != wr_id || wc->status != status ||
	    (status == IB_WC_SUCCESS && wc->opcode != opcode))
		return KT_FAIL("%s: got wr_id %llu status %d (%s) opcode %d, want %llu %d (%s) %d",
			       s->name, wc->wr_id, wc->status,
			       ib_wc_status_msg(wc->status), wc->opcode,
			       wr_id, status, ib_wc_status_msg(status),
			       opcode);
	if (wc->qp != s->qp)
		return KT_FAIL("%s: wc.qp %p, want %p", s->name, wc->qp,
			       s->qp);
	return 0;
}

/* No completion is pending on @s (after a short wait). */
static int kt_expect_none(struct kt_side *s)
{
	struct ib_wc wc;
	int n;

	msleep(100);
	n = ib_poll_cq(s->cq, 1, &wc);
	if (n)
		return KT_FAIL("%s: unexpected completion wr_id %llu status %d",
			       s->name, wc.wr_id, wc.status);
	return 0;
}

static int kt_post_recv(struct kt_side *s, u64 wr_id, struct ib_sge *sge,
			int nsge)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
	};
	int ret;

	if (s->srq)
		ret = ib_post_srq_recv(s->srq, &wr, &bad);
	else
		ret = ib_post_recv(s->qp, &wr, &bad);

	return ret ? KT_FAIL("%s: post_recv: %d", s->name, ret) : 0;
}

static int kt_post_send(struct kt_side *s, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;
	int ret = ib_post_send(s->qp, wr, &bad);

	return ret ? KT_FAIL("%s: post_send: %d", s->name, ret) : 0;
}

static struct ib_sge kt_sge(struct kt_side *s, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = s->dma + off, .length = len,
		.lkey = s->pd->local_dma_lkey,
	};
}

static int kt_cmp(const u8 *got, const u8 *want, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			return KT_FAIL("%s: byte %zu is %#x, want %#x", what, i,
				       got[i], want[i]);
	return 0;
}

/* SEND, waited for with req_notify_cq and the completion handler. */
static int kt_test_send(void)
{
	struct ib_sge rsge = kt_sge(&kt_b, 0, 4096);
	struct ib_sge ssge = kt_sge(&kt_a, 0, 100);
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &ssge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	int ret;

	kt_fill(kt_a.buf, 100, 1);
	ret = kt_post_recv(&kt_b, 100, &rsge, 1);
	if (ret)
		return ret;
	reinit_completion(&kt_b.notified);
	/* Nothing completed yet: no missed event to report. */
	ret = ib_req_notify_cq(kt_b.cq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS);
	if (KT_BAD(ret == 0, "req_notify_cq returned %d", ret))
		return -EIO;
	ret = kt_post_send(&kt_a, &wr);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&kt_b.notified,
					 msecs_to_jiffies(KT_TIMEOUT_MS)))
		return KT_FAIL("no completion event on %s", kt_b.name);
	ret = kt_expect(&kt_b, 100, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 100, "%u", wc.byte_len))
		return -EIO;
	if (KT_BAD(!(wc.wc_flags & (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE)),
		   "%#x", wc.wc_flags))
		return -EIO;
	ret = kt_cmp(kt_b.buf, kt_a.buf, 100, "SEND data");
	if (!ret)
		ret = kt_expect(&kt_a, 1, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	if (!ret)	/* for kt_test_send_imm */
		ret = kt_post_recv(&kt_b, 101, &rsge, 1);
	return ret;
}

/* SEND with immediate data, solicited, to an IB_CQ_SOLICITED arming. */
static int kt_test_send_imm(void)
{
	struct ib_sge ssge = kt_sge(&kt_a, 0, 200);
	struct ib_send_wr wr = {
		.wr_id = 2, .opcode = IB_WR_SEND_WITH_IMM, .sg_list = &ssge,
		.num_sge = 1,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED,
		.ex.imm_data = cpu_to_be32(0x12345678),
	};
	struct ib_wc wc;
	int ret;

	kt_fill(kt_a.buf, 200, 2);
	memset(kt_b.buf, 0, 4096);
	reinit_completion(&kt_b.notified);
	ret = ib_req_notify_cq(kt_b.cq, IB_CQ_SOLICITED);
	if (KT_BAD(ret == 0, "req_notify_cq returned %d", ret))
		return -EIO;
	ret = kt_post_send(&kt_a, &wr);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&kt_b.notified,
					 msecs_to_jiffies(KT_TIMEOUT_MS)))
		return KT_FAIL("no solicited event on %s", kt_b.name);
	ret = kt_expect(&kt_b, 101, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 200, "%u", wc.byte_len))
		return -EIO;
	if (KT_BAD(wc.wc_flags & IB_WC_WITH_IMM, "%#x", wc.wc_flags))
		return -EIO;
	if (KT_BAD(wc.ex.imm_data == cpu_to_be32(0x12345678), "%#x",
		   be32_to_cpu(wc.ex.imm_data)))
		return -EIO;
	ret = kt_cmp(kt_b.buf, kt_a.buf, 200, "SEND_WITH_IMM data");
	if (ret)
		return ret;
	return kt_expect(&kt_a, 2, IB_WC_SUCCESS, IB_WC_SEND, &wc);
}

/*
 * A SEND from B to A's receive queue, posted with IRQs off (the kick
 * then goes through the work item).
 */
static int kt_test_reverse_send(void)
{
	struct ib_sge rsge = kt_sge(&kt_a, 57344, 4096);
	struct ib_sge ssge = kt_sge(&kt_b, 57344, 1300);
	struct ib_send_wr wr = {
		.wr_id = 20, .opcode = IB_WR_SEND, .sg_list = &ssge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;
	unsigned long flags;
	struct ib_wc wc;
	int ret;

	kt_fill(kt_b.buf + 57344, 1300, 20);
	ret = kt_post_recv(&kt_a, 120, &rsge, 1);
	if (ret)
		return ret;
	local_irq_save(flags);
	ret = ib_post_send(kt_b.qp, &wr, &bad);
	local_irq_restore(flags);
	if (ret)
		return KT_FAIL("post_send with IRQs off: %d", ret);
	ret = kt_expect(&kt_a, 120, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 1300, "%u", wc.byte_len))
		return -EIO;
	ret = kt_cmp(kt_a.buf + 57344, kt_b.buf + 57344, 1300,
		     "reverse SEND data");
	if (!ret)
		ret = kt_expect(&kt_b, 20, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	return ret;
}

/* RDMA WRITE of several packets through B's global rkey. */
static int kt_test_write(void)
{
	struct ib_sge sge = kt_sge(&kt_a, 4096, 3000);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 3, .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = kt_b.dma + 8192,
		.rkey = kt_b.pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	int ret;

	kt_fill(kt_a.buf + 4096, 3000, 3);
	reinit_completion(&kt_a.notified);
	ret = ib_req_notify_cq(kt_a.cq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS);
	if (KT_BAD(ret == 0, "req_notify_cq returned %d", ret))
		return -EIO;
	ret = kt_post_send(&kt_a, &wr.wr);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&kt_a.notified,
					 msecs_to_jiffies(KT_TIMEOUT_MS)))
		return KT_FAIL("no completion event on %s", kt_a.name);
	/* Armed again with a completion not polled yet: it is reported. */
	ret = ib_req_notify_cq(kt_a.cq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS);
	if (KT_BAD(ret > 0, "req_notify_cq returned %d", ret))
		return -EIO;
	ret = kt_expect(&kt_a, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc);
	if (ret)
		return ret;
	return kt_cmp(kt_b.buf + 8192, kt_a.buf + 4096, 3000, "WRITE data");
}

static int kt_test_write_imm(void)
{
	struct ib_sge rsge = kt_sge(&kt_b, 0, 16);
	struct ib_sge sge = kt_sge(&kt_a, 12288, 500);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 4, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xcafe0004) },
		.remote_addr = kt_b.dma + 12288,
		.rkey = kt_b.pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	int ret;

	kt_fill(kt_a.buf + 12288, 500, 4);
	ret = kt_post_recv(&kt_b, 104, &rsge, 1);
	if (ret)
		return ret;
	ret = kt_post_send(&kt_a, &wr.wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_b, 104, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
			&wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 500, "%u", wc.byte_len))
		return -EIO;
	if (KT_BAD(wc.wc_flags & IB_WC_WITH_IMM, "%#x", wc.wc_flags))
		return -EIO;
	if (KT_BAD(wc.ex.imm_data == cpu_to_be32(0xcafe0004), "%#x",
		   be32_to_cpu(wc.ex.imm_data)))
		return -EIO;
	ret = kt_cmp(kt_b.buf + 12288, kt_a.buf + 12288, 500,
		     "WRITE_WITH_IMM data");
	if (ret)
		return ret;
	return kt_expect(&kt_a, 4, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc);
}

static int kt_test_read(void)
{
	struct ib_sge sge = kt_sge(&kt_a, 20480, 2500);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 5, .opcode = IB_WR_RDMA_READ, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = kt_b.dma + 16384,
		.rkey = kt_b.pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	int ret;

	kt_fill(kt_b.buf + 16384, 2500, 5);
	memset(kt_a.buf + 20480, 0, 2500);
	ret = kt_post_send(&kt_a, &wr.wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_a, 5, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 2500, "%u", wc.byte_len))
		return -EIO;
	return kt_cmp(kt_a.buf + 20480, kt_b.buf + 16384, 2500, "READ data");
}

/* Three WRITEs in one post, only the last signalled: one completion. */
static int kt_test_unsignalled(void)
{
	struct ib_sge sge[3];
	struct ib_rdma_wr wr[3] = {};
	struct ib_wc wc;
	int i, ret;

	for (i = 0; i < 3; i++) {
		kt_fill(kt_a.buf + 24576 + i * 64, 64, 60 + i);
		sge[i] = kt_sge(&kt_a, 24576 + i * 64, 64);
		wr[i].wr.wr_id = 60 + i;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = kt_b.dma + 24576 + i * 64;
		wr[i].rkey = kt_b.pd->unsafe_global_rkey;
	}
	wr[2].wr.send_flags = IB_SEND_SIGNALED;
	ret = kt_post_send(&kt_a, &wr[0].wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_a, 62, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc);
	if (ret)
		return ret;
	ret = kt_expect_none(&kt_a);
	if (ret)
		return ret;
	return kt_cmp(kt_b.buf + 24576, kt_a.buf + 24576, 3 * 64,
		      "unsignalled WRITEs data");
}

/* A SEND of 3 SGEs, 3200 bytes (4 packets), into 2 receive SGEs. */
static int kt_test_multi_sge(void)
{
	static const u32 off[3] = { 32768, 36864, 40960 };
	static const u32 len[3] = { 1000, 1500, 700 };
	struct ib_sge rsge[2] = { kt_sge(&kt_b, 32768, 2000),
				  kt_sge(&kt_b, 36864, 2000) };
	struct ib_sge ssge[3];
	struct ib_send_wr wr = {
		.wr_id = 7, .opcode = IB_WR_SEND, .sg_list = ssge,
		.num_sge = 3, .send_flags = IB_SEND_SIGNALED,
	};
	u8 *want, *p;
	struct ib_wc wc;
	int i, ret;

	want = kmalloc(3200, GFP_KERNEL);
	if (!want)
		return -ENOMEM;
	for (p = want, i = 0; i < 3; i++) {
		kt_fill(kt_a.buf + off[i], len[i], 70 + i);
		ssge[i] = kt_sge(&kt_a, off[i], len[i]);
		memcpy(p, kt_a.buf + off[i], len[i]);
		p += len[i];
	}
	ret = kt_post_recv(&kt_b, 107, rsge, 2);
	if (!ret)
		ret = kt_post_send(&kt_a, &wr);
	if (!ret)
		ret = kt_expect(&kt_b, 107, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	if (!ret && wc.byte_len != 3200)
		ret = KT_FAIL("byte_len %u, want 3200", wc.byte_len);
	if (!ret)
		ret = kt_cmp(kt_b.buf + 32768, want, 2000, "multi-SGE part 1");
	if (!ret)
		ret = kt_cmp(kt_b.buf + 36864, want + 2000, 1200,
			     "multi-SGE part 2");
	if (!ret)
		ret = kt_expect(&kt_a, 7, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	kfree(want);
	return ret;
}

/* Register B's FRMR under a new key with IB_WR_REG_MR. */
static int kt_reg_fr(u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = kt_fr,
		.access = KT_ALL_ACCESS,
	};
	struct ib_wc wc;
	int ret;

	ib_update_fast_reg_key(kt_fr, ib_inc_rkey(kt_fr->rkey));
	wr.key = kt_fr->rkey;
	ret = kt_post_send(&kt_b, &wr.wr);
	if (ret)
		return ret;
	return kt_expect(&kt_b, wr_id, IB_WC_SUCCESS, IB_WC_REG_MR, &wc);
}

/* FRMR: map B's region, register it, WRITE into it through its rkey. */
static int kt_test_frmr_write(void)
{
	struct ib_sge sge = kt_sge(&kt_a, KT_FR_OFF, 5000);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 8, .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
	};
	struct ib_wc wc;
	int n, ret;

	kt_fr = ib_alloc_mr(kt_b.pd, IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(kt_fr)) {
		ret = PTR_ERR(kt_fr);
		kt_fr = NULL;
		return KT_FAIL("ib_alloc_mr: %d", ret);
	}
	sg_init_one(&kt_fr_sg, kt_b.buf + KT_FR_OFF, KT_FR_LEN);
	n = ib_dma_map_sg(kt_b.dev, &kt_fr_sg, 1, DMA_BIDIRECTIONAL);
	if (KT_BAD(n == 1, "ib_dma_map_sg: %d", n))
		return -EIO;
	kt_fr_sg_mapped = true;
	n = ib_map_mr_sg(kt_fr, &kt_fr_sg, 1, NULL, PAGE_SIZE);
	if (KT_BAD(n == 1, "ib_map_mr_sg: %d", n))
		return -EIO;
	if (KT_BAD(kt_fr->iova == (uintptr_t)(kt_b.buf + KT_FR_OFF) &&
		   kt_fr->length == KT_FR_LEN, "iova %llx length %llu",
		   kt_fr->iova, kt_fr->length))
		return -EIO;
	ret = kt_reg_fr(80);
	if (ret)
		return ret;

	kt_fill(kt_a.buf + KT_FR_OFF, 5000, 8);
	wr.remote_addr = kt_fr->iova + 100;
	wr.rkey = kt_fr->rkey;
	ret = kt_post_send(&kt_a, &wr.wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_a, 8, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc);
	if (ret)
		return ret;
	return kt_cmp(kt_b.buf + KT_FR_OFF + 100, kt_a.buf + KT_FR_OFF, 5000,
		      "WRITE through the FRMR");
}

static int kt_atomic(u64 wr_id, enum ib_wr_opcode op, u64 compare_add,
		     u64 swap, u64 want_orig, u64 want_after)
{
	u64 *remote = (u64 *)(kt_b.buf + KT_FR_OFF + 8192);
	u64 *local = (u64 *)(kt_a.buf + 49152);
	struct ib_sge sge = kt_sge(&kt_a, 49152, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = kt_fr->iova + 8192,
		.rkey = kt_fr->rkey,
		.compare_add = compare_add,
		.swap = swap,
	};
	struct ib_wc wc;
	int ret;

	*local = 0xdeadbeef;
	ret = kt_post_send(&kt_a, &wr.wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_a, wr_id, IB_WC_SUCCESS,
			op == IB_WR_ATOMIC_CMP_AND_SWP ? IB_WC_COMP_SWAP :
			IB_WC_FETCH_ADD, &wc);
	if (ret)
		return ret;
	if (KT_BAD(*local == want_orig, "orig %llu, want %llu", *local,
		   want_orig))
		return -EIO;
	if (KT_BAD(READ_ONCE(*remote) == want_after, "now %llu, want %llu",
		   *remote, want_after))
		return -EIO;
	return 0;
}

static int kt_test_atomics(void)
{
	u64 *remote = (u64 *)(kt_b.buf + KT_FR_OFF + 8192);
	int ret;

	WRITE_ONCE(*remote, 1000);
	ret = kt_atomic(90, IB_WR_ATOMIC_CMP_AND_SWP, 1000, 2000, 1000, 2000);
	if (!ret)	/* a compare that fails swaps nothing */
		ret = kt_atomic(91, IB_WR_ATOMIC_CMP_AND_SWP, 1, 3, 2000, 2000);
	if (!ret)
		ret = kt_atomic(92, IB_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 2000,
				2005);
	return ret;
}

/* LOCAL_INV of the FRMR's key, then a new registration under a new key. */
static int kt_test_local_inv(void)
{
	struct ib_send_wr wr = {
		.wr_id = 93, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = kt_fr->rkey,
	};
	struct ib_wc wc;
	int ret;

	ret = kt_post_send(&kt_b, &wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_b, 93, IB_WC_SUCCESS, IB_WC_LOCAL_INV, &wc);
	if (ret)
		return ret;
	return kt_reg_fr(94);
}

/* RoCE has no RDMA Read with Invalidate: refused at post, nothing queued. */
static int kt_test_read_inv_refused(void)
{
	struct ib_sge sge = kt_sge(&kt_b, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 95, .opcode = IB_WR_RDMA_READ_WITH_INV,
			.sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = kt_fr->rkey },
		.remote_addr = kt_a.dma,
		.rkey = kt_a.pd->unsafe_global_rkey,
	};
	const struct ib_send_wr *bad = NULL;
	int ret;

	ret = ib_post_send(kt_b.qp, &wr.wr, &bad);
	if (KT_BAD(ret == -EINVAL && bad == &wr.wr, "post: %d", ret))
		return -EIO;
	return kt_expect_none(&kt_b);
}

/*
 * SEND with Invalidate of the FRMR's rkey: B's receive says so; a WRITE
 * through that rkey then fails on B, and A sees a remote access error.
 */
static int kt_test_send_inv(void)
{
	struct ib_sge rsge = kt_sge(&kt_b, 0, 4096);
	struct ib_sge ssge = kt_sge(&kt_a, 0, 64);
	struct ib_send_wr wr = {
		.wr_id = 10, .opcode = IB_WR_SEND_WITH_INV, .sg_list = &ssge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = kt_fr->rkey,
	};
	struct ib_rdma_wr wwr = {
		.wr = { .wr_id = 11, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &ssge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = kt_fr->iova,
		.rkey = kt_fr->rkey,
	};
	u8 *target = kt_b.buf + KT_FR_OFF;
	struct ib_wc wc;
	int ret;

	kt_fill(kt_a.buf, 64, 10);
	ret = kt_post_recv(&kt_b, 110, &rsge, 1);
	if (!ret)
		ret = kt_post_send(&kt_a, &wr);
	if (!ret)
		ret = kt_expect(&kt_b, 110, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	if (ret)
		return ret;
	if (KT_BAD(wc.byte_len == 64, "%u", wc.byte_len))
		return -EIO;
	if (KT_BAD(wc.wc_flags & IB_WC_WITH_INVALIDATE, "%#x", wc.wc_flags))
		return -EIO;
	if (KT_BAD(wc.ex.invalidate_rkey == kt_fr->rkey, "%#x, want %#x",
		   wc.ex.invalidate_rkey, kt_fr->rkey))
		return -EIO;
	ret = kt_cmp(kt_b.buf, kt_a.buf, 64, "SEND_WITH_INV data");
	if (!ret)
		ret = kt_expect(&kt_a, 10, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	if (ret)
		return ret;

	memset(target, 0x5a, 64);
	ret = kt_post_send(&kt_a, &wwr.wr);
	if (ret)
		return ret;
	ret = kt_expect(&kt_a, 11, IB_WC_REM_ACCESS_ERR, 0, &wc);
	if (ret)
		return ret;
	if (KT_BAD(!memchr_inv(target, 0x5a, 64),
		   "a WRITE through an invalidated rkey changed memory"))
		return -EIO;
	return 0;
}

/* Work requests posted to a QP in the error state are flushed. */
static int kt_test_flush(void)
{
	struct ib_sge sge = kt_sge(&kt_a, 0, 64);
	struct ib_send_wr wr = {
		.wr_id = 12, .opcode = IB_WR_SEND, .sg_list = &sge,
		.num_sge = 1,	/* unsignalled: flushed all the same */
	};
	struct ib_qp_attr attr;
	struct ib_qp_init_attr init;
	struct ib_wc wc;
	int ret;

	/* A's QP went to ERR with the access error. */
	ret = ib_query_qp(kt_a.qp, &attr, IB_QP_STATE, &init);
	if (KT_BAD(!ret && attr.qp_state == IB_QPS_ERR, "%d state %d", ret,
		   attr.qp_state))
		return -EIO;
	ret = kt_post_send(&kt_a, &wr);
	if (!ret)
		ret = kt_expect(&kt_a, 12, IB_WC_WR_FLUSH_ERR, 0, &wc);
	if (!ret)
		ret = kt_post_recv(&kt_a, 112, &sge, 1);
	if (!ret)
		ret = kt_expect(&kt_a, 112, IB_WC_WR_FLUSH_ERR, 0, &wc);
	if (ret)
		return ret;

	/* And B's, moved there by ib_modify_qp. */
	attr.qp_state = IB_QPS_ERR;
	ret = ib_modify_qp(kt_b.qp, &attr, IB_QP_STATE);
	if (KT_BAD(ret == 0, "to ERR: %d", ret))
		return -EIO;
	sge = kt_sge(&kt_b, 0, 64);
	wr.wr_id = 13;
	ret = kt_post_send(&kt_b, &wr);
	if (!ret)
		ret = kt_expect(&kt_b, 13, IB_WC_WR_FLUSH_ERR, 0, &wc);
	if (!ret)
		ret = kt_expect_none(&kt_a);
	if (!ret)
		ret = kt_expect_none(&kt_b);
	return ret;
}

struct kt_cqe {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

static void kt_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_cqe *c = container_of(wc->wr_cqe, struct kt_cqe, cqe);

	c->wc = *wc;
	complete(&c->done);
}

static int kt_cqe_wait(struct kt_cqe *c, enum ib_wc_status status,
		       const char *what)
{
	if (!wait_for_completion_timeout(&c->done,
					 msecs_to_jiffies(KT_TIMEOUT_MS)))
		return KT_FAIL("%s: no completion", what);
	if (c->wc.status != status)
		return KT_FAIL("%s: status %d (%s), want %d", what,
			       c->wc.status, ib_wc_status_msg(c->wc.status),
			       status);
	return 0;
}

/*
 * The way most kernel ULPs work: CQs from ib_alloc_cq() polled by the
 * core's workqueue, completions by wr_cqe, and ib_drain_qp() (which flushes
 * a marker posted to the QP in the error state) before destruction.
 */
static int kt_test_pooled_cq_and_drain(void)
{
	struct kt_side c = {}, d = {};
	struct kt_cqe sc = { .cqe.done = kt_cqe_done };
	struct kt_cqe rc = { .cqe.done = kt_cqe_done };
	struct ib_sge ssge, rsge;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = &ssge, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED, .wr_cqe = &sc.cqe,
	};
	struct ib_recv_wr rwr = {
		.sg_list = &rsge, .num_sge = 1, .wr_cqe = &rc.cqe,
	};
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *bad;
	int ret;

	init_completion(&sc.done);
	init_completion(&rc.done);
	ret = kt_setup(&c, dev_a, ip_a, false, true);
	if (!ret)
		ret = kt_setup(&d, dev_b, ip_b, false, true);
	if (!ret)
		ret = kt_connect(&c, &d);
	if (!ret)
		ret = kt_connect(&d, &c);
	if (ret)
		goto out;
	ssge = kt_sge(&c, 0, 2048);
	rsge = kt_sge(&d, 0, 4096);
	kt_fill(c.buf, 2048, 30);
	ret = ib_post_recv(d.qp, &rwr, &rbad);
	if (!ret)
		ret = ib_post_send(c.qp, &wr, &bad);
	if (ret) {
		ret = KT_FAIL("post: %d", ret);
		goto out;
	}
	ret = kt_cqe_wait(&rc, IB_WC_SUCCESS, "pooled CQ receive");
	if (!ret)
		ret = kt_cqe_wait(&sc, IB_WC_SUCCESS, "pooled CQ send");
	if (!ret && rc.wc.byte_len != 2048)
		ret = KT_FAIL("byte_len %u", rc.wc.byte_len);
	if (!ret)
		ret = kt_cmp(d.buf, c.buf, 2048, "pooled CQ SEND data");
	if (ret)
		goto out;
	/* Returns once the markers have flushed: it would hang otherwise. */
	ib_drain_qp(c.qp);
	ib_drain_qp(d.qp);
out:
	kt_teardown(&c);
	kt_teardown(&d);
	return ret;
}

#define KT_KEYS		64

/* How many of the 16 equal parts of the 24-bit range key indices fall in. */
static int kt_key_parts(const u32 *keys, int n)
{
	u16 parts = 0;
	int i;

	for (i = 0; i < n; i++)
		parts |= BIT(keys[i] >> 28);
	return hweight16(parts);
}

/* The most times one step between consecutive values occurs. */
static int kt_most_repeated_step(const u32 *v, int n)
{
	int i, j, most = 0;

	for (i = 1; i < n; i++) {
		int times = 0;

		for (j = 1; j < n; j++)
			times += v[j] - v[j - 1] == v[i] - v[i - 1];
		most = max(most, times);
	}
	return most;
}

/*
 * @keys of @n MRs made one after the other: random 24-bit indices, spread
 * over at least 10 of 16 parts of the range, no step between consecutive
 * keys or indices three times (64 random values: a chance of about 1 in
 * 10^9; a counter repeats its step every time).
 */
static int kt_check_keys(const char *what, const u32 *keys, int n)
{
	u32 idx[KT_KEYS];
	int i;

	for (i = 0; i < n; i++)
		idx[i] = keys[i] >> 8;
	if (KT_BAD(kt_key_parts(keys, n) >= 10, "%s: %d of 16 parts", what,
		   kt_key_parts(keys, n)) ||
	    KT_BAD(kt_most_repeated_step(keys, n) <= 2, "%s: keys", what) ||
	    KT_BAD(kt_most_repeated_step(idx, n) <= 2, "%s: indices", what))
		return -EIO;
	return 0;
}

struct kt_keys {
	struct ib_pd *pd[KT_KEYS];	/* each with a DMA MR: local_dma_lkey */
	struct ib_mr *fr[KT_KEYS];
	u32 dma_key[KT_KEYS];
	u32 fr_key[KT_KEYS];
};

/*
 * Kernel DMA MRs (a PD's local_dma_lkey: softrdma has no device-wide
 * one) and fast-registration MRs get random keys too; their key byte
 * turns as ib_update_fast_reg_key() says (frmr_write, local_inv).
 */
static int kt_test_keys(void)
{
	struct kt_keys *k = kzalloc(sizeof(*k), GFP_KERNEL);
	int i, ret = 0;

	if (!k)
		return -ENOMEM;
	for (i = 0; i < KT_KEYS && !ret; i++) {
		k->pd[i] = ib_alloc_pd(kt_a.dev, 0);
		if (IS_ERR(k->pd[i])) {
			ret = KT_FAIL("ib_alloc_pd: %ld", PTR_ERR(k->pd[i]));
			k->pd[i] = NULL;
			break;
		}
		k->dma_key[i] = k->pd[i]->local_dma_lkey;
		k->fr[i] = ib_alloc_mr(kt_a.pd, IB_MR_TYPE_MEM_REG, 1);
		if (IS_ERR(k->fr[i])) {
			ret = KT_FAIL("ib_alloc_mr: %ld", PTR_ERR(k->fr[i]));
			k->fr[i] = NULL;
			break;
		}
		k->fr_key[i] = k->fr[i]->rkey;
		if (KT_BAD(k->fr[i]->lkey == k->fr_key[i], "%#x", k->fr_key[i]))
			ret = -EIO;
	}
	if (!ret)
		ret = kt_check_keys("DMA MRs", k->dma_key, KT_KEYS);
	if (!ret)
		ret = kt_check_keys("fast-registration MRs", k->fr_key, KT_KEYS);
	for (i = 0; i < KT_KEYS; i++) {
		if (k->fr[i])
			ib_dereg_mr(k->fr[i]);
		if (k->pd[i])
			ib_dealloc_pd(k->pd[i]);
	}
	kfree(k);
	return ret;
}

static int kt_run(void)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} tests[] = {
		{ "send", kt_test_send },
		{ "send_imm", kt_test_send_imm },
		{ "reverse_send", kt_test_reverse_send },
		{ "write", kt_test_write },
		{ "write_imm", kt_test_write_imm },
		{ "read", kt_test_read },
		{ "unsignalled", kt_test_unsignalled },
		{ "multi_sge", kt_test_multi_sge },
		{ "frmr_write", kt_test_frmr_write },
		{ "atomics", kt_test_atomics },
		{ "local_inv", kt_test_local_inv },
		{ "read_inv_refused", kt_test_read_inv_refused },
		{ "send_inv", kt_test_send_inv },
		{ "flush", kt_test_flush },
		{ "pooled_cq_and_drain", kt_test_pooled_cq_and_drain },
		{ "keys", kt_test_keys },
	};
	int i, ret;

	ret = kt_setup(&kt_a, dev_a, ip_a, false, false);
	if (!ret)	/* B receives through an SRQ, A through its RQ */
		ret = kt_setup(&kt_b, dev_b, ip_b, true, false);
	if (!ret)
		ret = kt_connect(&kt_a, &kt_b);
	if (!ret)
		ret = kt_connect(&kt_b, &kt_a);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		ret = tests[i].fn();
		if (ret) {
			pr_err("softrdma_ktest: FAIL %s\n", tests[i].name);
			return ret;
		}
		pr_info("softrdma_ktest: ok %s\n", tests[i].name);
	}
	return 0;
}

static int __init kt_init(void)
{
	int ret = kt_run();

	if (kt_a.qp)
		ib_destroy_qp(kt_a.qp);
	kt_a.qp = NULL;
	if (kt_b.qp)
		ib_destroy_qp(kt_b.qp);
	kt_b.qp = NULL;
	if (kt_fr)
		ib_dereg_mr(kt_fr);
	kt_fr = NULL;
	if (kt_fr_sg_mapped)
		ib_dma_unmap_sg(kt_b.dev, &kt_fr_sg, 1, DMA_BIDIRECTIONAL);
	kt_fr_sg_mapped = false;
	kt_teardown(&kt_a);
	kt_teardown(&kt_b);
	if (ret)
		return ret;
	pr_info("softrdma_ktest: all passed\n");
	return 0;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("softrdma: kernel verbs consumer test");
MODULE_LICENSE("Dual BSD/GPL");
