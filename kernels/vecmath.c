/* Elementary functions by the array, for the phase vocoder: atan2, log, and sin with cos.
 * Each is one element's arithmetic (mx_*_one), run by two loops: the vectorised path
 * (the compiler's vectors, for whatever ISA the kernel is built for) and its scalar
 * reference with vectorisation turned off. Both do the same operations in the same order,
 * element for element, so they agree bit for bit (tested at lengths 0-67 and misaligned
 * offsets). Contracts in mixdown_kernels.h ("Elementary functions").
 *
 * Polynomials (fitted here, minimax on their ranges) in plain float arithmetic with no
 * branches, so each loop vectorises; libm's atan2f, logf, sinf and cosf were a quarter of
 * the stretch's instructions, one call per bin. Largest errors, against double precision:
 * atan2 4e-8 rad plus rounding, log 1e-7, sin and cos 5e-8 (the phase vocoder needs
 * phases to about 1e-5 rad). */
#include "vecmath.h"

MX_VECMATH_ARRAYS(, )
MX_VECMATH_ARRAYS(_scalar, MX_NO_VECTORIZE)
