// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests of DCQCN's reaction point (kernel/roce/cc.c): how CNPs cut
 * a QP's rate, how it climbs back without them, and the pacer's tokens.
 * Times are given, not read: 4 us between cuts at most, alpha's gain 1/256
 * every 55 us, increase events every 300 us or 2 MiB, five of them fast
 * recovery. Compiled into softrdma_kunit.ko: softrdma_kunit.c includes
 * this file.
 */

#define US(n)	((u64)(n) * NSEC_PER_USEC)
/* A time far from 0, as ktime_get_ns() gives after boot. */
#define T0	(US(1000000) * 100)

/* The first CNP: from the line rate, alpha 1, so half of it. */
static void dcqcn_first_cnp_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_may_send(&d, T0));
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_cnp(&d, T0));
	KUNIT_EXPECT_TRUE(test, d.paced);
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS / 2);
	KUNIT_EXPECT_EQ(test, d.target, SOFTRDMA_DCQCN_LINE_MBPS);
	KUNIT_EXPECT_EQ(test, d.alpha, SOFTRDMA_DCQCN_ONE);
}

/* One cut per 4 us at most; after that each CNP cuts by alpha / 2. */
static void dcqcn_cut_spacing_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	softrdma_dcqcn_cnp(&d, T0);
	KUNIT_EXPECT_FALSE(test, softrdma_dcqcn_cnp(&d, T0 + US(3)));
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS / 2);
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_cnp(&d, T0 + US(4)));
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS / 4);
	KUNIT_EXPECT_EQ(test, d.target, SOFTRDMA_DCQCN_LINE_MBPS / 2);
}

/* A CNP every 4 us, 40 of them, the last at T0 + 156 us. */
static void dcqcn_to_floor(struct softrdma_dcqcn *d)
{
	int i;

	for (i = 0; i < 40; i++)
		softrdma_dcqcn_cnp(d, T0 + US(4 * i));
}

/* A CNP every 4 us drives the rate to its floor, never under it. */
static void dcqcn_floor_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	dcqcn_to_floor(&d);
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_MIN_MBPS);
	KUNIT_EXPECT_TRUE(test, d.paced);
}

/*
 * Without CNPs alpha decays by 1/256 every 55 us: five periods take it
 * from 1024 to 1008, and the next cut is by 1008/2048 of the rate, not
 * half; the CNP then adds g back.
 */
static void dcqcn_alpha_decay_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	softrdma_dcqcn_cnp(&d, T0);
	softrdma_dcqcn_may_send(&d, T0 + US(55 * 5));
	KUNIT_EXPECT_EQ(test, d.alpha, 1008U);
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_cnp(&d, T0 + US(55 * 5)));
	KUNIT_EXPECT_EQ(test, d.rate, 5000U - 5000U * 1008 / 2048);
	KUNIT_EXPECT_EQ(test, d.alpha, 1009U);
}

/*
 * Fast recovery: each increase event (300 us) halves the way back to the
 * rate cut from; the pacing ends once the line rate is back.
 */
static void dcqcn_recovery_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	softrdma_dcqcn_cnp(&d, T0);
	softrdma_dcqcn_may_send(&d, T0 + US(300));
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS * 3 / 4);
	softrdma_dcqcn_may_send(&d, T0 + US(600));
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS * 7 / 8);
	KUNIT_EXPECT_TRUE(test, d.paced);
	/* 20 ms on: long past fast recovery, the line rate is back. */
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_may_send(&d, T0 + US(20000)));
	KUNIT_EXPECT_FALSE(test, d.paced);
}

/* Bytes sent count as increase events too, every 2 MiB. */
static void dcqcn_byte_events_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	softrdma_dcqcn_cnp(&d, T0);
	softrdma_dcqcn_sent(&d, 2 << 20);
	softrdma_dcqcn_may_send(&d, T0 + US(1));
	KUNIT_EXPECT_EQ(test, d.byte_events, 1U);
	KUNIT_EXPECT_EQ(test, d.timer_events, 0U);
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_LINE_MBPS * 3 / 4);
}

/*
 * The pacer: a spent bucket waits until the rate has paid the deficit
 * back (at 10 Mb/s, 1250 bytes a ms), within one increase period.
 */
static void dcqcn_tokens_test(struct kunit *test)
{
	struct softrdma_dcqcn d = {};

	dcqcn_to_floor(&d);
	KUNIT_ASSERT_EQ(test, d.rate, SOFTRDMA_DCQCN_MIN_MBPS);
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_may_send(&d, T0 + US(160)));
	softrdma_dcqcn_sent(&d, d.tokens + 300);
	KUNIT_EXPECT_FALSE(test, softrdma_dcqcn_may_send(&d, T0 + US(160)));
	/* 300 bytes back: 240 us; 200 us is not enough, 280 us is. */
	KUNIT_EXPECT_FALSE(test, softrdma_dcqcn_may_send(&d, T0 + US(360)));
	KUNIT_EXPECT_TRUE(test, softrdma_dcqcn_may_send(&d, T0 + US(440)));
	KUNIT_EXPECT_EQ(test, d.rate, SOFTRDMA_DCQCN_MIN_MBPS);
}

static struct kunit_case softrdma_dcqcn_cases[] = {
	KUNIT_CASE(dcqcn_first_cnp_test),
	KUNIT_CASE(dcqcn_cut_spacing_test),
	KUNIT_CASE(dcqcn_floor_test),
	KUNIT_CASE(dcqcn_alpha_decay_test),
	KUNIT_CASE(dcqcn_recovery_test),
	KUNIT_CASE(dcqcn_byte_events_test),
	KUNIT_CASE(dcqcn_tokens_test),
	{}
};

static struct kunit_suite softrdma_dcqcn_suite = {
	.name = "softrdma_dcqcn",
	.test_cases = softrdma_dcqcn_cases,
};
