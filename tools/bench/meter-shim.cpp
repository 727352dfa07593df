// meter-shim: LD_PRELOADed into perftest and qperf on the exact clock
// (tools/lab bench --exact), so that a phase of the meter
// (tools/meter/meter.cpp) is the transfer and nothing else, and so that
// nothing in the transfer waits for the host.
//
// In every process: mlockall(MCL_CURRENT | MCL_FUTURE) at load, so every
// page of the program and its libraries (and of whatever they map later,
// the provider included) is read in before the transfer, not faulted in
// over 9p inside it (a read from the host idles the vCPU, and guest time
// leaps to the next timer).
//
// perftest prints its table's header once connected. Its clock
// calibration, get_cpu_mhz() (0.2 s of a busy loop calling
// gettimeofday(), then a read of /proc/cpuinfo), comes after the transfer
// in the bandwidth tests, but in the latency tests once before it too. So
// a calibration is counted from its first gettimeofday() to its fclose()
// of /proc/cpuinfo; METER_SHIM_BEFORE (1 for ib_*_lat, 0 otherwise: the
// default by the program's name) says how many precede the transfer. The
// transfer starts at the header (or at the end of the last calibration
// before it) and ends at the first gettimeofday() after that.
// METER_SHIM=mark (the client) executes the meter's marker at both, each
// noted by a line in METER_SHIM_LOG; before the start marker that follows
// a calibration, it sleeps 50 ms, so that the server's calibration (run
// at the same time) is over. METER_SHIM=yield (the server) sleeps 20 ms at
// the end of the transfer instead, so that its own calibration does not
// keep the client's end marker waiting on the one vCPU. Without METER_SHIM
// (qperf) only the pages are locked and the policy set.
//
// In every process too: SCHED_BATCH, so that a process woken (by a
// completion, a socket's data) does not preempt the one running; it runs
// when that one sleeps or its slice ends. With wakeup preemption, whether
// the client or the server ran on at each wakeup followed the scheduler's
// accounts of the two, which drifted into one of two patterns at a point
// that differed from boot to boot (softroce's 64 KiB SENDs: 3.37, 3.44 or
// 3.58 kernel instructions a byte, two to four context switches a
// message); without it, every boot runs the same one.
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <sched.h>
#include <string_view>
#include <sys/mman.h>
#include <sys/time.h>

namespace {

enum class Role { none, mark, yield };
enum class Stage { before, calibrating, sending, done };

struct State {
	Role role = Role::none;
	Stage stage = Stage::before;
	bool header = false;
	int before = 0; // calibrations before the transfer
	int calibrations = 0; // calibrations seen since the header
	std::FILE *cpuinfo = nullptr; // the calibration's /proc/cpuinfo
};
State state;

void marker()
{
	asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	const char *log = std::getenv("METER_SHIM_LOG");
	if (log == nullptr)
		return;
	if (std::FILE *f = std::fopen(log, "ae"); f != nullptr) {
		std::fputs("mark\n", f);
		std::fclose(f);
	}
}

void pause_ms(long ms)
{
	timespec left = { 0, ms * 1000000L };
	while (nanosleep(&left, &left) != 0 && errno == EINTR) {
	}
}

void transfer_starts()
{
	state.stage = Stage::sending;
	if (state.role != Role::mark)
		return;
	if (state.calibrations > 0)
		pause_ms(50);
	marker();
}

void transfer_ends()
{
	state.stage = Stage::done;
	if (state.role == Role::mark)
		marker();
	else if (state.role == Role::yield)
		pause_ms(20);
}

// After a line of output: the header starts the transfer, or the
// calibrations before it.
void printed(const char *text)
{
	if (state.header || std::strstr(text, "#bytes") == nullptr)
		return;
	std::fflush(stdout);
	state.header = true;
	if (state.before == 0)
		transfer_starts();
}

template <typename F> F next(const char *name)
{
	return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

__attribute__((constructor)) void init()
{
	const char *role = std::getenv("METER_SHIM");
	if (role != nullptr && std::strcmp(role, "mark") == 0)
		state.role = Role::mark;
	else if (role != nullptr && std::strcmp(role, "yield") == 0)
		state.role = Role::yield;
	const char *before = std::getenv("METER_SHIM_BEFORE");
	if (before != nullptr)
		state.before = std::atoi(before);
	else
		state.before = std::string_view(program_invocation_short_name)
					       .ends_with("_lat") ?
				       1 :
				       0;
	mlockall(MCL_CURRENT | MCL_FUTURE);
	const sched_param param{};
	if (sched_setscheduler(0, SCHED_BATCH, &param) != 0)
		std::perror("meter-shim: SCHED_BATCH");
}

} // namespace

extern "C" {

int puts(const char *s)
{
	static auto real = next<int (*)(const char *)>("puts");
	const int r = real(s);
	printed(s);
	return r;
}

// The header may come as printf("%s", header): look at what is printed.
int __printf_chk(int /*flag*/, const char *fmt, ...)
{
	std::array<char, 1024> line{};
	va_list ap;
	va_start(ap, fmt);
	int r = std::vsnprintf(line.data(), line.size(), fmt, ap);
	va_end(ap);
	if (r >= 0 && static_cast<std::size_t>(r) < line.size()) {
		std::fputs(line.data(), stdout);
		printed(line.data());
		return r;
	}
	va_start(ap, fmt);
	r = std::vprintf(fmt, ap);
	va_end(ap);
	printed(fmt);
	return r;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	static auto real = next<int (*)(struct timeval *, void *)>("gettimeofday");
	if (state.header) {
		if (state.stage == Stage::sending)
			transfer_ends();
		else if (state.stage == Stage::before)
			state.stage = Stage::calibrating;
	}
	return real(tv, tz);
}

std::FILE *fopen(const char *path, const char *mode)
{
	static auto real = next<std::FILE *(*)(const char *, const char *)>("fopen");
	std::FILE *f = real(path, mode);
	if (state.stage == Stage::calibrating &&
	    std::strcmp(path, "/proc/cpuinfo") == 0)
		state.cpuinfo = f;
	return f;
}

int fclose(std::FILE *f)
{
	static auto real = next<int (*)(std::FILE *)>("fclose");
	const bool calibrated = state.cpuinfo != nullptr && f == state.cpuinfo;
	const int r = real(f);
	if (calibrated) {
		state.cpuinfo = nullptr;
		state.stage = Stage::before;
		if (++state.calibrations == state.before)
			transfer_starts();
	}
	return r;
}
}
