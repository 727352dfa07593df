// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// An address handle as the shim keeps it: the verbs object and the number
// the kernel gave it. ud_test.cpp defines softrdma_ah_num() over it.
#pragma once

#include <cstdint>

#include <infiniband/verbs.h>

struct TestAh {
	explicit TestAh(std::uint32_t n) : num(n) {}
	ibv_ah ah{};
	std::uint32_t num;
};
