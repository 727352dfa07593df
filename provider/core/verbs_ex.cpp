// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The extended verbs' entry points: the ibv_cq_ex poll and readers, and the
// ibv_qp_ex builders (the ibv_wr_* API). libibverbs calls them through the
// function pointers softrdma_cq_ex_init() and softrdma_qp_ex_init() set;
// each finds its core object through the shim (softrdma_cqx_core(),
// softrdma_qpx_core()).
#include <cerrno>
#include <cstring>

#include "handles.hpp"

namespace {

softrdma_cq &cq_of(ibv_cq_ex *cqx)
{
	return *softrdma_cqx_core(cqx);
}

const ibv_wc &cur(ibv_cq_ex *cqx)
{
	return cq_of(cqx).cq.current();
}

// The current completion's status and wr_id, which ibv_cq_ex carries.
void show(ibv_cq_ex *cqx)
{
	cqx->status = cur(cqx).status;
	cqx->wr_id = cur(cqx).wr_id;
}

int start_poll(ibv_cq_ex *cqx, ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	softrdma_cq &cq = cq_of(cqx);
	std::unique_lock guard(cq.lock);
	if (const int ret = cq.cq.start_poll())
		return ret;
	cq.polling = std::move(guard);
	show(cqx);
	return 0;
}

int next_poll(ibv_cq_ex *cqx)
{
	if (const int ret = cq_of(cqx).cq.next_poll())
		return ret;
	show(cqx);
	return 0;
}

void end_poll(ibv_cq_ex *cqx)
{
	softrdma_cq &cq = cq_of(cqx);
	cq.cq.end_poll();
	cq.polling.unlock();
}

ibv_wc_opcode read_opcode(ibv_cq_ex *cqx)
{
	return cur(cqx).opcode;
}
std::uint32_t read_vendor_err(ibv_cq_ex *cqx)
{
	return cur(cqx).vendor_err;
}
std::uint32_t read_byte_len(ibv_cq_ex *cqx)
{
	return cur(cqx).byte_len;
}
__be32 read_imm_data(ibv_cq_ex *cqx)
{
	return cur(cqx).imm_data; // or the invalidated rkey: ibv_wc shares the field
}
std::uint32_t read_qp_num(ibv_cq_ex *cqx)
{
	return cur(cqx).qp_num;
}
std::uint32_t read_src_qp(ibv_cq_ex *cqx)
{
	return cur(cqx).src_qp;
}
unsigned int read_wc_flags(ibv_cq_ex *cqx)
{
	return cur(cqx).wc_flags;
}
std::uint32_t read_slid(ibv_cq_ex *cqx)
{
	return cur(cqx).slid;
}
std::uint8_t read_sl(ibv_cq_ex *cqx)
{
	return cur(cqx).sl;
}
std::uint8_t read_dlid_path_bits(ibv_cq_ex *cqx)
{
	return cur(cqx).dlid_path_bits;
}

// What a CQE carries; no timestamps, VLAN, flow tag or tag matching.
constexpr std::uint64_t kWcExFlags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				     IBV_WC_EX_WITH_DLID_PATH_BITS;

softrdma::Qp &qp_of(ibv_qp_ex *qpx)
{
	return softrdma_qpx_core(qpx)->qp;
}

// Starts the request a builder describes, with the wr_id and flags the
// caller set in qpx.
void begin(ibv_qp_ex *qpx, softrdma_wr_hdr h)
{
	h.wr_id = qpx->wr_id;
	h.send_flags = qpx->wr_flags;
	qp_of(qpx).wr_begin(h);
}

softrdma_wr_hdr op(ibv_wr_opcode opcode)
{
	softrdma_wr_hdr h{};
	h.opcode = opcode;
	return h;
}

softrdma_wr_hdr rdma(ibv_wr_opcode opcode, std::uint32_t rkey, std::uint64_t remote_addr)
{
	softrdma_wr_hdr h = op(opcode);
	h.rkey = rkey;
	h.remote_addr = remote_addr;
	return h;
}

softrdma_wr_hdr with_imm(softrdma_wr_hdr h, std::uint32_t imm)
{
	h.imm_data = imm;
	return h;
}

softrdma_wr_hdr atomic(ibv_wr_opcode opcode, std::uint32_t rkey, std::uint64_t remote_addr,
		       std::uint64_t compare_add, std::uint64_t swap)
{
	softrdma_wr_hdr h = rdma(opcode, rkey, remote_addr);
	h.compare_add = compare_add;
	h.swap = swap;
	return h;
}

void wr_send(ibv_qp_ex *qpx)
{
	begin(qpx, op(IBV_WR_SEND));
}
void wr_send_imm(ibv_qp_ex *qpx, __be32 imm_data)
{
	begin(qpx, with_imm(op(IBV_WR_SEND_WITH_IMM), imm_data));
}
void wr_send_inv(ibv_qp_ex *qpx, std::uint32_t invalidate_rkey)
{
	begin(qpx, with_imm(op(IBV_WR_SEND_WITH_INV), invalidate_rkey));
}
void wr_rdma_write(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr)
{
	begin(qpx, rdma(IBV_WR_RDMA_WRITE, rkey, remote_addr));
}
void wr_rdma_write_imm(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr,
		       __be32 imm_data)
{
	begin(qpx, with_imm(rdma(IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr), imm_data));
}
void wr_rdma_read(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr)
{
	begin(qpx, rdma(IBV_WR_RDMA_READ, rkey, remote_addr));
}
void wr_atomic_cmp_swp(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr,
		       std::uint64_t compare, std::uint64_t swap)
{
	begin(qpx, atomic(IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare, swap));
}
void wr_atomic_fetch_add(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr,
			 std::uint64_t add)
{
	begin(qpx, atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0));
}
void wr_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, std::uint32_t rkey, const ibv_mw_bind_info *info)
{
	begin(qpx, softrdma::bind_mw_hdr(mw->rkey, rkey, *info, false));
}
void wr_local_inv(ibv_qp_ex *qpx, std::uint32_t invalidate_rkey)
{
	begin(qpx, with_imm(op(IBV_WR_LOCAL_INV), invalidate_rkey));
}

#ifdef SOFTRDMA_HAVE_WR_FLUSH
void wr_flush(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr, std::size_t len,
	      std::uint8_t type, std::uint8_t level)
{
	softrdma_wr_hdr h = op(IBV_WR_FLUSH);
	h.flush.rkey = rkey;
	h.flush.remote_addr = remote_addr;
	h.flush.length = len;
	h.flush.type = type;
	h.flush.level = level;
	begin(qpx, h);
}
void wr_atomic_write(ibv_qp_ex *qpx, std::uint32_t rkey, std::uint64_t remote_addr,
		     const void *atomic_wr)
{
	softrdma_wr_hdr h = op(IBV_WR_ATOMIC_WRITE);
	h.atomic_write.rkey = rkey;
	h.atomic_write.remote_addr = remote_addr;
	std::memcpy(h.atomic_write.data, atomic_wr, sizeof(h.atomic_write.data));
	begin(qpx, h);
}
#endif

void wr_set_ud_addr(ibv_qp_ex *qpx, ibv_ah *ah, std::uint32_t remote_qpn,
		    std::uint32_t remote_qkey)
{
	qp_of(qpx).wr_set_ud(ah, remote_qpn, remote_qkey);
}
void wr_set_xrc_srqn(ibv_qp_ex *qpx, std::uint32_t remote_srqn)
{
	qp_of(qpx).wr_set_xrc_srqn(remote_srqn);
}
void wr_set_sge(ibv_qp_ex *qpx, std::uint32_t lkey, std::uint64_t addr, std::uint32_t length)
{
	const ibv_sge sge{addr, length, lkey};
	qp_of(qpx).wr_set_sges({&sge, 1});
}
void wr_set_sge_list(ibv_qp_ex *qpx, std::size_t n, const ibv_sge *sges)
{
	qp_of(qpx).wr_set_sges({sges, n});
}
void wr_set_inline_data(ibv_qp_ex *qpx, void *addr, std::size_t length)
{
	const ibv_data_buf buf{addr, length};
	qp_of(qpx).wr_set_inline({&buf, 1});
}
void wr_set_inline_data_list(ibv_qp_ex *qpx, std::size_t n, const ibv_data_buf *bufs)
{
	qp_of(qpx).wr_set_inline({bufs, n});
}
void wr_start(ibv_qp_ex *qpx)
{
	qp_of(qpx).wr_start();
}
int wr_complete(ibv_qp_ex *qpx)
{
	return qp_of(qpx).wr_complete();
}
void wr_abort(ibv_qp_ex *qpx)
{
	qp_of(qpx).wr_abort();
}

// The builders we have, by QP type: those of the opcodes the type takes
// (softrdma::qp_type_opcode()). RDMA FLUSH and ATOMIC WRITE are RoCE's
// (IBTA 1.5): iWARP has neither.
std::uint64_t send_ops(ibv_qp_type type, bool iwarp)
{
	constexpr std::uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	constexpr std::uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE |
				     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	constexpr std::uint64_t rc = uc | IBV_QP_EX_WITH_SEND_WITH_INV |
				     IBV_QP_EX_WITH_RDMA_READ |
				     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				     IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
#ifdef SOFTRDMA_HAVE_WR_FLUSH
	constexpr std::uint64_t rc_ext = IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE;
#else
	constexpr std::uint64_t rc_ext = 0;
#endif
	switch (type) {
	case IBV_QPT_RC:
		return iwarp ? rc : rc | rc_ext;
	case IBV_QPT_XRC_SEND:
		return rc;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_UD:
		return ud;
	default:
		return 0;
	}
}

} // namespace

extern "C" int softrdma_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	// No parent domain; single-threaded use needs nothing from us.
	if ((attr->wc_flags & ~kWcExFlags) ||
	    (attr->comp_mask & ~static_cast<std::uint32_t>(IBV_CQ_INIT_ATTR_MASK_FLAGS)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~static_cast<std::uint32_t>(IBV_CREATE_CQ_ATTR_SINGLE_THREADED))))
		return EOPNOTSUPP;
	return 0;
}

extern "C" void softrdma_cq_ex_init(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_wc_flags = read_wc_flags;
	cqx->read_byte_len = read_byte_len;
	cqx->read_imm_data = read_imm_data;
	cqx->read_qp_num = read_qp_num;
	cqx->read_src_qp = read_src_qp;
	cqx->read_slid = read_slid;
	cqx->read_sl = read_sl;
	cqx->read_dlid_path_bits = read_dlid_path_bits;
}

extern "C" int softrdma_qp_ex_check(const struct ibv_qp_init_attr_ex *attr, bool iwarp)
{
	constexpr std::uint64_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					IBV_QP_INIT_ATTR_CREATE_FLAGS;
	if (attr->comp_mask & ~known)
		return EOPNOTSUPP;
	// One creation flag, for UD QPs (the kernel checks the type).
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (attr->create_flags & ~static_cast<std::uint32_t>(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~send_ops(attr->qp_type, iwarp)))
		return EOPNOTSUPP;
	return 0;
}

extern "C" void softrdma_qp_ex_init(struct ibv_qp_ex *qpx, uint64_t ops)
{
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = wr_local_inv;
#ifdef SOFTRDMA_HAVE_WR_FLUSH
	if (ops & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = wr_flush;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = wr_atomic_write;
#endif
	if (qpx->qp_base.qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = wr_set_ud_addr;
	if (qpx->qp_base.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
}
