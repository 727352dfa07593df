// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// verbs_keys DEVICE
//
// Keys and QP numbers must not be guessable: RoCEv2 and iWARP carry no
// authentication, so a packet with the right QP number and rkey writes
// into registered memory. This registers and frees 256 MRs (all held at
// once, then one at a time), allocates 64 memory windows (types 1 and 2)
// beside 256 MRs, creates and destroys 256 RC QPs (all held at once, then
// one at a time), and checks of each sequence of keys, key indices (a
// key's upper 24 bits) and QP numbers:
// - no step between consecutive values occurs more than twice: a counter
//   repeats its step every time, and an index counter under a random 8-bit
//   key (rdma_rxe) keeps its steps within 256 +- 255; 256 random 24-bit
//   values repeat a step with a chance of about 1 in 500, three times
//   about 1 in 10^8;
// - the values fall into at least 12 of the 16 equal parts of the 24-bit
//   range (10 for the 64 windows);
// - windows and MRs draw from one space: one index space for both shows
//   as MR indices and window indices in both halves of it;
// - QP numbers are never 0, 1 or 0xffffff, and none comes back in the run
//   (a destroyed number stays out of the draws: softrdma's quarantine).
// Exits non-zero if a check fails: rdma_rxe's numbering fails it.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check.hpp"

using vmtest::check;

namespace {

constexpr int kMany = 256;
constexpr int kWindows = 64;
constexpr std::uint32_t kHalf = 0x800000;	// the upper half of 24 bits

std::uint32_t index_of(std::uint32_t key)
{
	return key >> 8;
}

// The most times one step (modulo 2^32) between consecutive values occurs.
int most_repeated_step(const std::vector<std::uint32_t> &v)
{
	std::map<std::uint32_t, int> seen;
	int most = 0;
	for (std::size_t i = 1; i < v.size(); ++i)
		most = std::max(most, ++seen[v[i] - v[i - 1]]);
	return most;
}

// How many of the 16 equal parts of the 24-bit range the values fall in.
std::size_t parts(const std::vector<std::uint32_t> &v)
{
	std::set<std::uint32_t> p;
	for (const std::uint32_t x : v)
		p.insert((x >> 20) & 0xf);
	return p.size();
}

void check_steps(const std::string &what, const std::vector<std::uint32_t> &v)
{
	const int most = most_repeated_step(v);
	check(most <= 2, what + ": no step between consecutive values repeats more than twice (" +
				 std::to_string(most) + " times)");
	check(std::set<std::uint32_t>(v.begin(), v.end()).size() == v.size(),
	      what + ": no value given twice");
}

// @v: 24-bit values (key indices, QP numbers).
void check_spread(const std::string &what, const std::vector<std::uint32_t> &v,
		  std::size_t min_parts)
{
	check_steps(what, v);
	const std::size_t n = parts(v);
	check(n >= min_parts, what + ": spread over " + std::to_string(n) + " of 16 parts, want " +
				      std::to_string(min_parts));
}

std::vector<std::uint32_t> indices(const std::vector<std::uint32_t> &keys)
{
	std::vector<std::uint32_t> out;
	out.reserve(keys.size());
	for (const std::uint32_t k : keys)
		out.push_back(index_of(k));
	return out;
}

void check_keys(const std::string &what, const std::vector<std::uint32_t> &keys,
		std::size_t min_parts)
{
	check_steps(what + " keys", keys);
	check_spread(what + " key indices", indices(keys), min_parts);
}

bool any_of_half(const std::vector<std::uint32_t> &keys, bool upper)
{
	return std::any_of(keys.begin(), keys.end(),
			   [upper](std::uint32_t k) { return (index_of(k) >= kHalf) == upper; });
}

void test_mrs(ibv_pd *pd, std::vector<char> &buf)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;
	std::vector<ibv_mr *> mrs;
	std::vector<std::uint32_t> held;
	bool ok = true;
	for (int i = 0; i < kMany; ++i) {
		ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), access);
		if (!mr) {
			ok = false;
			break;
		}
		mrs.push_back(mr);
		held.push_back(mr->lkey);
		ok = ok && mr->rkey == mr->lkey;
	}
	check(ok, std::to_string(kMany) + " MRs held at once, rkey = lkey");
	check_keys("MRs held at once", held, 12);

	// Windows beside them: type 1 and type 2 in turn.
	std::vector<ibv_mw *> mws;
	std::vector<std::uint32_t> wkeys;
	ok = true;
	for (int i = 0; i < kWindows; ++i) {
		ibv_mw *mw = ibv_alloc_mw(pd, i % 2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		if (!mw) {
			ok = false;
			break;
		}
		mws.push_back(mw);
		wkeys.push_back(mw->rkey);
	}
	check(ok, std::to_string(kWindows) + " memory windows");
	check_keys("windows", wkeys, 10);
	std::set<std::uint32_t> mr_idx;
	for (const std::uint32_t k : held)
		mr_idx.insert(index_of(k));
	check(std::none_of(wkeys.begin(), wkeys.end(),
			   [&mr_idx](std::uint32_t k) { return mr_idx.contains(index_of(k)); }),
	      "no window shares an index with an MR");
	check(any_of_half(wkeys, false) && any_of_half(wkeys, true) && any_of_half(held, false) &&
		      any_of_half(held, true),
	      "windows and MRs both in both halves of one index space");
	for (ibv_mw *mw : mws)
		ok = ibv_dealloc_mw(mw) == 0 && ok;
	for (ibv_mr *mr : mrs)
		ok = ibv_dereg_mr(mr) == 0 && ok;
	check(ok, "windows and MRs freed");

	std::vector<std::uint32_t> one;
	ok = true;
	for (int i = 0; i < kMany && ok; ++i) {
		ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), access);
		ok = mr != nullptr;
		if (mr) {
			one.push_back(mr->lkey);
			ok = ibv_dereg_mr(mr) == 0;
		}
	}
	check(ok, std::to_string(kMany) + " MRs registered and freed one at a time");
	check_keys("MRs one at a time", one, 12);
}

ibv_qp *make_qp(ibv_pd *pd, ibv_cq *cq)
{
	ibv_qp_init_attr ia = vmtest::qp_attr(IBV_QPT_RC, cq, 1, 1);
	return ibv_create_qp(pd, &ia);
}

void check_qpns(const std::string &what, const std::vector<std::uint32_t> &qpns)
{
	check(std::none_of(qpns.begin(), qpns.end(),
			   [](std::uint32_t q) { return q <= 1 || q >= 0xffffff; }),
	      what + ": none is 0, 1, 0xffffff or above");
	check_spread(what, qpns, 12);
}

void test_qps(ibv_pd *pd, ibv_cq *cq)
{
	std::vector<ibv_qp *> qps;
	std::vector<std::uint32_t> held;
	bool ok = true;
	for (int i = 0; i < kMany; ++i) {
		ibv_qp *qp = make_qp(pd, cq);
		if (!qp) {
			ok = false;
			break;
		}
		qps.push_back(qp);
		held.push_back(qp->qp_num);
	}
	check(ok, std::to_string(kMany) + " QPs held at once");
	check_qpns("QP numbers held at once", held);
	for (ibv_qp *qp : qps)
		ok = ibv_destroy_qp(qp) == 0 && ok;
	check(ok, "QPs destroyed");

	std::vector<std::uint32_t> one;
	ok = true;
	for (int i = 0; i < kMany && ok; ++i) {
		ibv_qp *qp = make_qp(pd, cq);
		ok = qp != nullptr;
		if (qp) {
			one.push_back(qp->qp_num);
			ok = ibv_destroy_qp(qp) == 0;
		}
	}
	check(ok, std::to_string(kMany) + " QPs created and destroyed one at a time");
	check_qpns("QP numbers one at a time", one);

	std::vector<std::uint32_t> all = held;
	all.insert(all.end(), one.begin(), one.end());
	check(std::set<std::uint32_t>(all.begin(), all.end()).size() == all.size(),
	      "no QP number given again in the run");
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		(void)std::fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	ibv_context *ctx = vmtest::open_by_name(argv[1]);
	check(ctx != nullptr, std::string("open ") + argv[1]);
	if (!ctx)
		return vmtest::summary();
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ibv_cq *cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
	check(pd && cq, "PD and CQ");
	if (pd && cq) {
		std::vector<char> buf(4096);
		test_mrs(pd, buf);
		test_qps(pd, cq);
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return vmtest::summary();
}
