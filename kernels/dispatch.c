/* The one place that chooses a SIMD path. */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

static int isa_supported(mx_isa isa) {
    switch (isa) {
    case MX_ISA_SCALAR: return 1;
#if defined(MX_HAVE_X86)
    case MX_ISA_SSE2: return 1; /* baseline on x86_64 */
    case MX_ISA_AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case MX_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f");
#endif
#if defined(MX_HAVE_NEON)
    case MX_ISA_NEON: return 1; /* baseline on arm64 */
#endif
    default: return 0;
    }
}

const mx_kernels *mx_kernels_for_isa(mx_isa isa) {
    if (!isa_supported(isa)) return NULL;
    switch (isa) {
    case MX_ISA_SCALAR: return &mx_kernels_scalar;
#if defined(MX_HAVE_X86)
    case MX_ISA_SSE2: return &mx_kernels_sse2;
    case MX_ISA_AVX2: return &mx_kernels_avx2;
    case MX_ISA_AVX512: return &mx_kernels_avx512; /* see mx_isa */
#endif
#if defined(MX_HAVE_NEON)
    case MX_ISA_NEON: return &mx_kernels_neon;
#endif
    default: return NULL;
    }
}

const char *mx_isa_name(mx_isa isa) {
    switch (isa) {
    case MX_ISA_SCALAR: return "scalar";
    case MX_ISA_SSE2: return "sse2";
    case MX_ISA_AVX2: return "avx2";
    case MX_ISA_NEON: return "neon";
    case MX_ISA_AVX512: return "avx512";
    default: return "unknown";
    }
}

static mx_isa choose_isa(void) {
    const char *forced = getenv("MIXDOWN_ISA");
    if (forced) {
        for (int i = 0; i < MX_ISA_COUNT; i++)
            if (strcmp(forced, mx_isa_name((mx_isa)i)) == 0 && isa_supported((mx_isa)i))
                return (mx_isa)i;
    }
    for (int i = MX_ISA_COUNT - 1; i > 0; i--)
        if (isa_supported((mx_isa)i)) return (mx_isa)i;
    return MX_ISA_SCALAR;
}

/* Racing first calls compute the same answer, so a relaxed cache is enough. */
static int active_isa = -1;

mx_isa mx_kernels_active_isa(void) {
    int isa = __atomic_load_n(&active_isa, __ATOMIC_RELAXED);
    if (isa < 0) {
        isa = (int)choose_isa();
        __atomic_store_n(&active_isa, isa, __ATOMIC_RELAXED);
    }
    return (mx_isa)isa;
}

const mx_kernels *mx_kernels_active(void) {
    return mx_kernels_for_isa(mx_kernels_active_isa());
}
