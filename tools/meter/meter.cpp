// SPDX-License-Identifier: GPL-2.0
// The lab's exact meter: a QEMU TCG plugin (plugin API version 1, QEMU 7.2)
// that counts the instructions a guest executes, kernel and user apart, and
// every kernel translation block's executions, with one inline add per
// block (nothing the guest measures is perturbed). Each time the guest
// executes the marker `xchg %bx,%bx` (66 87 db: no compiler emits it), it
// writes what was counted since the previous marker to OUT/mark-NNNN.tsv
// and starts counting again from zero:
//   kernel INSNS
//   user INSNS
//   VADDR NINSNS EXECS      (one line per kernel block executed)
// Loaded by tools/lab (LAB_METER): -plugin meter.so,out=DIR. Built by
// tools/lab setup against the header of Debian's qemu source package.
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

extern "C" {
#include <qemu-plugin.h>
}

namespace {

// x86-64's canonical upper half: the kernel's text and modules.
constexpr std::uint64_t kernel_base = 0xffff800000000000ULL;
constexpr std::array<unsigned char, 3> marker = { 0x66, 0x87, 0xdb };

struct Block {
	std::uint64_t vaddr;
	std::uint64_t ninsns;
	std::uint64_t execs; // the inline add's target
};

// Blocks are keyed by address and length: QEMU may translate one address
// again, shorter (an icount budget, a page boundary).
struct Key {
	std::uint64_t vaddr;
	std::uint64_t ninsns;
	bool operator==(const Key &) const = default;
};

struct KeyHash {
	std::size_t operator()(const Key &k) const noexcept
	{
		return std::hash<std::uint64_t>{}(k.vaddr ^ (k.ninsns << 52U));
	}
};

struct Meter {
	std::string out;
	std::unordered_map<Key, Block *, KeyHash> index;
	std::deque<Block> blocks; // stable addresses for the inline adds
	std::uint64_t user = 0; // user instructions (an inline add per block)
	unsigned int marks = 0;

	Block *block(std::uint64_t vaddr, std::uint64_t n)
	{
		auto [it, added] = index.try_emplace(Key{ vaddr, n }, nullptr);
		if (added)
			it->second = &blocks.emplace_back(Block{ vaddr, n, 0 });
		return it->second;
	}

	// Write what was counted since the last marker, then start again.
	void dump()
	{
		const std::string path = out + "/mark-" +
					 std::to_string(marks++) + ".tsv";
		std::FILE *f = std::fopen(path.c_str(), "we");
		std::uint64_t kernel = 0;
		for (const Block &b : blocks)
			kernel += b.ninsns * b.execs;
		if (f != nullptr) {
			std::fprintf(f, "kernel %" PRIu64 "\nuser %" PRIu64 "\n",
				     kernel, user);
			for (const Block &b : blocks)
				if (b.execs != 0)
					std::fprintf(f,
						     "%" PRIx64 " %" PRIu64
						     " %" PRIu64 "\n",
						     b.vaddr, b.ninsns, b.execs);
			std::fclose(f);
		}
		for (Block &b : blocks)
			b.execs = 0;
		user = 0;
	}
};

Meter meter;

void on_marker(unsigned int /*vcpu*/, void * /*udata*/)
{
	meter.dump();
}

bool is_marker(const qemu_plugin_insn *insn)
{
	if (qemu_plugin_insn_size(insn) != marker.size())
		return false;
	return std::memcmp(qemu_plugin_insn_data(insn), marker.data(),
			   marker.size()) == 0;
}

void on_translate(qemu_plugin_id_t /*id*/, qemu_plugin_tb *tb)
{
	const std::uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	const std::size_t n = qemu_plugin_tb_n_insns(tb);

	if (vaddr >= kernel_base) {
		qemu_plugin_register_vcpu_tb_exec_inline(
			tb, QEMU_PLUGIN_INLINE_ADD_U64,
			&meter.block(vaddr, n)->execs, 1);
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &meter.user, n);
	for (std::size_t i = 0; i < n; i++) {
		qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		if (is_marker(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
				nullptr);
	}
}

} // namespace

extern "C" {

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	if (!info->system_emulation || info->system.smp_vcpus != 1) {
		std::fprintf(stderr, "meter: needs system emulation, one vCPU\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		const std::string_view arg = argv[i];
		if (arg.starts_with("out="))
			meter.out = arg.substr(4);
	}
	if (meter.out.empty()) {
		std::fprintf(stderr, "meter: usage: meter.so,out=DIR\n");
		return -1;
	}
	meter.index.reserve(1U << 18U);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
}
