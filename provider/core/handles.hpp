// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What the C handles of softrdma_core.h hold: the mappings of the kernel's
// rings and the C++ objects that use them.
#pragma once

#include <mutex>
#include <utility>

#include <infiniband/verbs.h>

#include "mapping.hpp"
#include "qp.hpp"
#include "queue.hpp"
#include "ring.hpp"
#include "softrdma_core.h"

struct softrdma_cq {
	softrdma_cq(softrdma::Mapping m, softrdma::RingView v, bool arm_mapped) noexcept
		: map(std::move(m)), cq(v), arm_mapped(arm_mapped)
	{
	}
	softrdma::Mapping map;
	softrdma::CqRing cq;
	bool arm_mapped;			// SOFTRDMA_CQ_ARM_MAPPED
	std::mutex lock;			// verbs let several threads poll one CQ
	std::unique_lock<std::mutex> polling;	// lock, from start_poll to end_poll
};

struct softrdma_qp {
	softrdma_qp(softrdma::Mapping sqm, softrdma::Mapping rqm, softrdma::SendQueue s,
		    softrdma::RecvQueue r, softrdma::KickTarget k, bool iwarp,
		    bool has_rq = true) noexcept
		: sq_map(std::move(sqm)), rq_map(std::move(rqm)), qp(s, r, k, iwarp, has_rq)
	{
	}
	softrdma::Mapping sq_map;
	softrdma::Mapping rq_map;
	softrdma::Qp qp;
};

struct softrdma_srq {
	softrdma_srq(softrdma::Mapping m, softrdma::RecvQueue q) noexcept : map(std::move(m)), rq(q)
	{
	}
	softrdma::Mapping map;
	softrdma::RecvQueue rq;
	std::mutex lock; // verbs let several threads post to one SRQ
};
