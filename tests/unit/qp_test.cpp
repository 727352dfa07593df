// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A QP's posting side (qp.hpp): the one post loop, the states that take
// work, the kick, ibv_bind_mw and the ibv_wr_* batch. The rings are in
// ordinary memory and the kicks go into a pipe, where this test reads the
// commands the kernel would get.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fcntl.h>
#include <rdma/ib_user_verbs.h>
#include <unistd.h>

#include "aligned_ring.hpp"
#include "qp.hpp"

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint32_t kMaxSge = 2;
constexpr std::uint32_t kSendSlot = SOFTRDMA_SEND_WQE_HDR_SIZE + 64;
constexpr std::uint32_t kRecvSlot = SOFTRDMA_RECV_WQE_HDR_SIZE + kMaxSge * sizeof(softrdma_sge);
constexpr std::uint32_t kHandle = 0x2a;

// A command read back from the kick pipe: the header, then the fields of
// ib_uverbs_post_send (POST_RECV's are the same) without its flexible array.
struct Kick {
	ib_uverbs_cmd_hdr hdr;
	struct {
		std::uint64_t response;
		std::uint32_t qp_handle;
		std::uint32_t wr_count;
		std::uint32_t sge_count;
		std::uint32_t wqe_size;
	} payload;
};
static_assert(sizeof(Kick) == sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_send));

softrdma_wr_hdr wr_hdr(ibv_wr_opcode op, std::uint64_t wr_id)
{
	softrdma_wr_hdr h{};
	h.opcode = op;
	h.wr_id = wr_id;
	return h;
}

class Fixture {
public:
	explicit Fixture(bool iwarp = false)
		: sqm_(kSlots, kSendSlot), rqm_(kSlots, kRecvSlot), pipe_(make_pipe())
	{
		qp_.emplace(softrdma::SendQueue(*softrdma::RingView::make(sqm_.bytes(), kSlots,
									 kSendSlot),
						kMaxSge, 32),
			    softrdma::RecvQueue(*softrdma::RingView::make(rqm_.bytes(), kSlots,
									 kRecvSlot),
						kMaxSge),
			    softrdma::KickTarget{pipe_[1], kHandle}, iwarp);
	}
	~Fixture()
	{
		close(pipe_[0]);
		if (pipe_[1] >= 0)
			close(pipe_[1]);
	}
	Fixture(const Fixture &) = delete;
	Fixture &operator=(const Fixture &) = delete;
	Fixture(Fixture &&) = delete;
	Fixture &operator=(Fixture &&) = delete;

	softrdma::Qp &qp() { return *qp_; }
	AlignedRing &sq() { return sqm_; }
	AlignedRing &rq() { return rqm_; }
	// The next kick, if there is one.
	std::optional<Kick> kick()
	{
		Kick k{};
		if (read(pipe_[0], &k, sizeof(k)) != static_cast<ssize_t>(sizeof(k)))
			return std::nullopt;
		return k;
	}
	// Later kicks fail with EBADF.
	void break_kicks()
	{
		close(pipe_[1]);
		pipe_[1] = -1;
	}
	softrdma_send_wqe wqe(std::uint32_t i)
	{
		softrdma_send_wqe h{};
		std::memcpy(&h, sqm_.slot(i).data(), sizeof(h));
		return h;
	}

private:
	static std::array<int, 2> make_pipe()
	{
		std::array<int, 2> fds{-1, -1};
		EXPECT_EQ(pipe2(fds.data(), O_NONBLOCK), 0);
		return fds;
	}

	AlignedRing sqm_;
	AlignedRing rqm_;
	std::array<int, 2> pipe_;
	std::optional<softrdma::Qp> qp_;
};

// A list of n sends, linked.
template <std::size_t N>
std::array<ibv_send_wr, N> sends()
{
	std::array<ibv_send_wr, N> wr{};
	for (std::size_t i = 0; i < N; ++i) {
		wr[i].wr_id = 100 + i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i + 1 < N ? &wr[i + 1] : nullptr;
	}
	return wr;
}

} // namespace

// The post loop stops at the first bad request: those before it are posted
// and the kernel is kicked for them, with the command libibverbs would send.
TEST(Qp, PostSendStopsAtFirstBadAndKicks)
{
	Fixture f;
	f.qp().set_state(IBV_QPS_RTS);
	f.sq().hdr().flags = SOFTRDMA_RING_NEED_KICK;
	auto wr = sends<3>();
	wr[2].opcode = static_cast<ibv_wr_opcode>(99);
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(f.qp().post_send(wr.data(), &bad), EINVAL);
	EXPECT_EQ(bad, &wr[2]);
	EXPECT_EQ(f.sq().hdr().producer, 2U);
	EXPECT_EQ(f.wqe(1).wr_id, 101U);
	const auto k = f.kick();
	ASSERT_TRUE(k);
	EXPECT_EQ(k->hdr.command, unsigned{IB_USER_VERBS_CMD_POST_SEND});
	EXPECT_EQ(k->hdr.in_words, sizeof(Kick) / 4);
	EXPECT_EQ(k->hdr.out_words, sizeof(ib_uverbs_post_send_resp) / 4);
	EXPECT_EQ(k->payload.qp_handle, kHandle);
	EXPECT_EQ(k->payload.wr_count, 0U);
	EXPECT_EQ(k->payload.wqe_size, sizeof(ib_uverbs_send_wr));
	EXPECT_FALSE(f.kick());
}

// No kick while the kernel polls the queue, or when nothing was posted.
TEST(Qp, KicksOnlyWhenAsked)
{
	Fixture f;
	f.qp().set_state(IBV_QPS_RTS);
	auto wr = sends<2>();
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(f.qp().post_send(wr.data(), &bad), 0);
	EXPECT_EQ(f.sq().hdr().producer, 2U);
	EXPECT_FALSE(f.kick());
	f.sq().hdr().flags = SOFTRDMA_RING_NEED_KICK;
	wr[0].opcode = static_cast<ibv_wr_opcode>(99);
	EXPECT_EQ(f.qp().post_send(wr.data(), &bad), EINVAL);
	EXPECT_EQ(bad, wr.data());
	EXPECT_FALSE(f.kick());
	// A failed kick is the post's error, after the post.
	f.break_kicks();
	wr[0].opcode = IBV_WR_SEND;
	EXPECT_EQ(f.qp().post_send(wr.data(), &bad), EBADF);
	EXPECT_EQ(f.sq().hdr().producer, 4U);
}

// RoCE takes sends from RTS on; iWARP from INIT on (the kernel holds them
// until the connection is up). Nothing is posted before.
TEST(Qp, SendStatesPerTransport)
{
	for (const bool iwarp : {false, true}) {
		for (const auto s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
				     IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR}) {
			Fixture f(iwarp);
			f.qp().set_state(s);
			const bool ok = s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE ||
					s == IBV_QPS_ERR || (iwarp && s != IBV_QPS_RESET);
			auto wr = sends<1>();
			ibv_send_wr *bad = nullptr;
			EXPECT_EQ(f.qp().post_send(wr.data(), &bad), ok ? 0 : EINVAL)
				<< iwarp << " " << s;
			EXPECT_EQ(f.sq().hdr().producer, ok ? 1U : 0U) << iwarp << " " << s;
			if (!ok) {
				EXPECT_EQ(bad, wr.data());
			}
			// The ibv_wr_* batch is refused in the same states.
			f.qp().wr_start();
			f.qp().wr_begin(wr_hdr(IBV_WR_SEND, 1));
			EXPECT_EQ(f.qp().wr_complete(), ok ? 0 : EINVAL) << iwarp << " " << s;
			EXPECT_EQ(f.sq().hdr().producer, ok ? 2U : 0U) << iwarp << " " << s;
		}
	}
}

// The ibv_wr_* batch publishes at wr_complete and then kicks; wr_abort and
// a refused batch leave the queue unlocked for the next one.
TEST(Qp, WrBatchPublishesKicksAndUnlocks)
{
	Fixture f;
	f.qp().set_state(IBV_QPS_RTS);
	f.sq().hdr().flags = SOFTRDMA_RING_NEED_KICK;
	const ibv_sge s{0x10, 1, 2};
	f.qp().wr_start();
	f.qp().wr_begin(wr_hdr(IBV_WR_RDMA_WRITE, 7));
	f.qp().wr_set_sges({&s, 1});
	EXPECT_FALSE(f.kick());
	EXPECT_EQ(f.qp().wr_complete(), 0);
	EXPECT_EQ(f.sq().hdr().producer, 1U);
	EXPECT_EQ(f.wqe(0).num_sge, 1U);
	EXPECT_TRUE(f.kick());
	f.qp().wr_start();
	f.qp().wr_begin(wr_hdr(IBV_WR_SEND, 8));
	f.qp().wr_abort();
	f.qp().wr_start(); // would deadlock if the abort kept the lock
	EXPECT_EQ(f.qp().wr_complete(), 0);
	EXPECT_EQ(f.sq().hdr().producer, 1U);
	auto wr = sends<1>();
	ibv_send_wr *bad = nullptr;
	EXPECT_EQ(f.qp().post_send(wr.data(), &bad), 0);
	EXPECT_EQ(f.sq().hdr().producer, 2U);
}

// ibv_bind_mw: a type 1 bind WQE under the next 8-bit key, which the window
// takes once it is posted.
TEST(Qp, BindMwType1)
{
	Fixture f;
	ibv_mr mr{};
	mr.lkey = 0x4455;
	ibv_mw mw{};
	mw.rkey = 0x800001ff;
	ibv_mw_bind bind{};
	bind.wr_id = 5;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info = {&mr, 0x9000, 0x40, IBV_ACCESS_REMOTE_READ};
	EXPECT_EQ(f.qp().bind_mw(mw, bind), EINVAL); // RESET
	EXPECT_EQ(mw.rkey, 0x800001ffU);
	f.qp().set_state(IBV_QPS_RTS);
	ASSERT_EQ(f.qp().bind_mw(mw, bind), 0);
	EXPECT_EQ(mw.rkey, 0x80000100U);
	const auto w = f.wqe(0);
	EXPECT_EQ(w.opcode, unsigned{IBV_WR_BIND_MW});
	EXPECT_EQ(w.wr_id, 5U);
	EXPECT_EQ(w.flags, unsigned{SOFTRDMA_WQE_SIGNALED | SOFTRDMA_WQE_BIND_TYPE1});
	EXPECT_EQ(w.bind_mw.mw_rkey, 0x800001ffU);
	EXPECT_EQ(w.bind_mw.new_rkey, 0x80000100U);
	EXPECT_EQ(w.bind_mw.addr, 0x9000U);
	EXPECT_EQ(w.bind_mw.length, 0x40U);
	EXPECT_EQ(w.bind_mw.mr_lkey, 0x4455U);
	EXPECT_EQ(w.bind_mw.access, unsigned{IBV_ACCESS_REMOTE_READ});
	EXPECT_EQ(f.sq().hdr().producer, 1U);
}

// Receives need a kick only in ERR (to be flushed) or when the ring asks.
TEST(Qp, PostRecvKicksInErrorOrWhenAsked)
{
	Fixture f;
	std::array<ibv_recv_wr, 2> wr{};
	wr[0].next = &wr[1];
	wr[1].num_sge = kMaxSge + 1;
	ibv_recv_wr *bad = nullptr;
	EXPECT_EQ(f.qp().post_recv(wr.data(), &bad), EINVAL); // RESET
	EXPECT_EQ(bad, wr.data());
	f.qp().set_state(IBV_QPS_INIT);
	EXPECT_EQ(f.qp().post_recv(wr.data(), &bad), EINVAL);
	EXPECT_EQ(bad, &wr[1]);
	EXPECT_EQ(f.rq().hdr().producer, 1U);
	EXPECT_FALSE(f.kick());
	wr[0].next = nullptr;
	f.rq().hdr().flags = SOFTRDMA_RING_NEED_KICK;
	EXPECT_EQ(f.qp().post_recv(wr.data(), &bad), 0);
	auto k = f.kick();
	ASSERT_TRUE(k);
	EXPECT_EQ(k->hdr.command, unsigned{IB_USER_VERBS_CMD_POST_RECV});
	EXPECT_EQ(k->payload.qp_handle, kHandle);
	EXPECT_EQ(k->payload.wqe_size, sizeof(ib_uverbs_recv_wr));
	f.rq().hdr().flags = 0;
	f.qp().set_state(IBV_QPS_ERR);
	EXPECT_EQ(f.qp().post_recv(wr.data(), &bad), 0);
	EXPECT_TRUE(f.kick());
	EXPECT_EQ(f.rq().hdr().producer, 3U);
}

// The loop every post verb uses, over any queue.
TEST(Qp, PostListReportsTheFirstFailure)
{
	struct Counting {
		int left;
		int post(const ibv_recv_wr & /*wr*/) noexcept { return left-- > 0 ? 0 : ENOMEM; }
	};
	std::array<ibv_recv_wr, 3> wr{};
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	ibv_recv_wr *bad = nullptr;
	Counting all{3};
	EXPECT_EQ(softrdma::post_list(all, wr.data(), &bad), 0);
	EXPECT_EQ(bad, nullptr);
	Counting two{2};
	EXPECT_EQ(softrdma::post_list(two, wr.data(), &bad), ENOMEM);
	EXPECT_EQ(bad, &wr[2]);
}
