// membench: the machine's own limits, measured in the boot that measures
// the RDMA devices (tools/lab bench), so that their numbers can be read as
// fractions of what the CPUs can do at all:
//   memcpy_64k_mbs  memcpy of 64 KiB blocks (MiB/s, cache-resident, one CPU)
//   handoff_ns      one cache line handed from one CPU to another and back,
//                   per one-way handoff (ns); "-" with fewer than two CPUs
// Prints "NAME VALUE" lines.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

double memcpy_mbs(std::size_t block, double span)
{
	std::vector<unsigned char> src(block, 0x5a);
	std::vector<unsigned char> dst(block);
	constexpr std::size_t batch = 64;
	std::size_t bytes = 0;
	const auto t0 = Clock::now();
	do {
		for (std::size_t i = 0; i < batch; i++) {
			std::memcpy(dst.data(), src.data(), block);
			// The copy has an observer: the compiler may not drop it.
			asm volatile("" : : "r"(dst.data()) : "memory");
		}
		bytes += batch * block;
	} while (seconds_since(t0) < span);
	return static_cast<double>(bytes) / seconds_since(t0) / (1024.0 * 1024.0);
}

// Two threads on CPUs 0 and 1 take turns on one cache line: each waits
// for the other's store, then stores the next value.
double handoff_ns(long rounds)
{
	struct alignas(64) Line {
		std::atomic<long> turn{0};
	} line;
	bool peer_pinned = false; // read after join(), which orders it
	std::thread peer([&] {
		peer_pinned = pin_to(1);
		for (long i = 0; i < rounds; i++) {
			while (line.turn.load(std::memory_order_acquire) != 2 * i + 1)
				;
			line.turn.store(2 * i + 2, std::memory_order_release);
		}
	});
	const bool pinned = pin_to(0);
	const auto t0 = Clock::now();
	for (long i = 0; i < rounds; i++) {
		line.turn.store(2 * i + 1, std::memory_order_release);
		while (line.turn.load(std::memory_order_acquire) != 2 * i + 2)
			;
	}
	const double s = seconds_since(t0);
	peer.join();
	return pinned && peer_pinned ? s * 1e9 / (2.0 * static_cast<double>(rounds)) : -1.0;
}

} // namespace

int main()
{
	std::printf("memcpy_64k_mbs %.0f\n", memcpy_mbs(std::size_t{64} * 1024, 0.5));
	const double ns = std::thread::hardware_concurrency() < 2 ? -1.0 : handoff_ns(200000);
	if (ns < 0)
		std::printf("handoff_ns -\n");
	else
		std::printf("handoff_ns %.1f\n", ns);
	return 0;
}
