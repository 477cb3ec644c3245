/* The spectral stretch's frame engine for the AVX2 and AVX-512 tables (pvoc_analyse,
 * pvoc_synthesise): pvoc_analysis.c, pvoc_synthesis.c, the elementary functions they call
 * by the array and the real FFT's transforms (their passes still the plan's table's),
 * compiled again with AVX2's eight lanes. Without FMA, every product and sum rounds as the
 * baseline's does, so both give the same samples; the same C in wider vectors took a
 * quarter fewer instructions on a stretch by 1.25 (docs/spectral.md, "The engine in
 * AVX2's lanes"). */
#define MX_PVOC_VARIANT(name) name##_avx2
#include "pvoc.h"
#include "vecmath.h"
#include "rfft.h"

#if defined(MX_HAVE_X86)
#include <immintrin.h>
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)

#define MX_PVOC_LEFT_PACK 1   /* pvoc_synthesis.c lists bins eight at a time */

MX_VECMATH_ARRAYS(_avx2, )
#define mx_atan2_array mx_atan2_array_avx2
#define mx_log_array mx_log_array_avx2
#define mx_sincos_array mx_sincos_array_avx2
#define mx_rfft_forward mx_rfft_forward_avx2
#define mx_rfft_inverse mx_rfft_inverse_avx2

#include "rfft_transform.c"
#include "pvoc_analysis.c"
#include "pvoc_synthesis.c"

#pragma clang attribute pop
#endif
