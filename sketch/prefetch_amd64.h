// PREFETCH prefetches the first AX bytes at DI, a line at a time: a cold
// sketch then arrives with all its misses in flight at once. Clobbers BX.
#define PREFETCH(loop, check) \
	XORQ BX, BX \
	JMP check \
loop: \
	PREFETCHT0 (DI)(BX*1) \
	ADDQ $64, BX \
check: \
	CMPQ BX, AX \
	JLO loop
