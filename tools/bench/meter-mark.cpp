// meter-mark: one marker for the lab's exact meter (tools/meter/meter.cpp):
// executes `xchg %bx,%bx` (66 87 db), which no compiler emits; the meter,
// watching for it, writes what it counted since the last marker and starts
// again. Static and tiny: its own start costs the phases it ends little.
// Outside the meter, the instruction swaps a register with itself.
int main()
{
	asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	return 0;
}
