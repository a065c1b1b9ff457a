/*
 * cfichain: a tiny static aarch64 program whose call chain exercises the CFI rules the
 * unwinder follows (tests/unit/cfi_aarch64_test.c builds a stack for it by hand):
 *
 *   _start  the outermost frame: its return address is undefined (.cfi_undefined x30)
 *   outer   a frame record (x29, x30) with x29 pointing at it and locals below it, so its
 *           CFA is x29 + 32 (sp is 48 bytes lower)
 *   signed  pointer authentication: x30 is signed (paciasp) before it is saved, a 64-byte
 *           frame based on sp with x29, x30 and two callee-saved registers at its top
 *   nofp    saves x30 only, no frame record (code built -fomit-frame-pointer)
 *   leaf    no frame at all: the return address is still in x30, the CFA is sp
 *
 * The ret_* labels are the return addresses of the calls, sample_pc the leaf's pc in the
 * test's sample.  Built by make-cfichain.sh, which says how to rebuild and check it.
 */
	.text
	.globl	_start
	.type	_start, %function
_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	bl	outer
	.globl	ret_start
ret_start:
	mov	x0, #0
	mov	x8, #93			/* exit */
	svc	#0
	.cfi_endproc
	.size	_start, . - _start

	.globl	outer
	.type	outer, %function
outer:
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa_register 29
	sub	sp, sp, #48		/* locals below the frame record */
	bl	signed
	.globl	ret_outer
ret_outer:
	mov	sp, x29
	.cfi_def_cfa_register 31
	ldp	x29, x30, [sp], #32
	.cfi_restore 29
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	outer, . - outer

	.globl	signed
	.type	signed, %function
signed:
	.cfi_startproc
	hint	#25			/* paciasp */
	.cfi_negate_ra_state
	sub	sp, sp, #64
	.cfi_def_cfa_offset 64
	stp	x29, x30, [sp, #48]
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	stp	x19, x20, [sp, #32]
	.cfi_offset 19, -32
	.cfi_offset 20, -24
	bl	nofp
	.globl	ret_signed
ret_signed:
	ldp	x19, x20, [sp, #32]
	ldp	x29, x30, [sp, #48]
	add	sp, sp, #64
	.cfi_def_cfa_offset 0
	hint	#29			/* autiasp */
	ret
	.cfi_endproc
	.size	signed, . - signed

	.globl	nofp
	.type	nofp, %function
nofp:
	.cfi_startproc
	str	x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	bl	leaf
	.globl	ret_nofp
ret_nofp:
	ldr	x30, [sp], #16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	nofp, . - nofp

	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	add	x0, x0, #1
	.globl	sample_pc
sample_pc:
	add	x0, x0, #2
	ret
	.cfi_endproc
	.size	leaf, . - leaf
