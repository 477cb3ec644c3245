/* Elementary functions by the array, one element's arithmetic (mx_*_one) and the loops
 * over it (MX_VECMATH_ARRAYS): vecmath.c compiles them for the baseline and as the scalar
 * reference, x86_avx2_pvoc.c for AVX2 (without FMA: the same roundings). */
#ifndef MIXDOWN_VECMATH_H
#define MIXDOWN_VECMATH_H
#include "internal.h"
#include <math.h>
#include <string.h>

/* atan2(y, x) in [-pi, pi]; 0 for (0, 0). */
static inline float mx_atan2_one(float y, float x) {
    const float half_pi = (float)(mx_pi / 2), pi = (float)mx_pi;
    float ax = fabsf(x), ay = fabsf(y);
    float lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
    float a = lo / (hi > 0 ? hi : 1.0f);
    float s = a * a;
    float r = a * (0.9999993356591407f + s * (-0.3332986094799887f + s * (0.19946566676831531f
             + s * (-0.13908632239527768f + s * (0.09642200174303547f + s * (-0.05591232765526423f
             + s * (0.021862939512026704f + s * -0.0040545582262404645f)))))));
    r = ay > ax ? half_pi - r : r;
    r = x < 0 ? pi - r : r;
    return y < 0 ? -r : r;
}

/* log(x) for a normal positive x. */
static inline float mx_log_one(float x) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    /* x = 2^e m, m in [sqrt(1/2), sqrt(2)): log x = e log 2 + log m, log m = 2 atanh t. */
    int32_t offset = (int32_t)(bits - 0x3f3504f3u);   /* 0x3f3504f3 = sqrt(1/2) */
    int32_t e = offset >> 23;                        /* arithmetic: floor */
    uint32_t mbits = bits - ((uint32_t)offset & 0xff800000u);
    float m;
    memcpy(&m, &mbits, 4);
    float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;
    float lm = t * (1.9999999937469362f + t2 * (0.6666694836652283f + t2 * (0.39965800420551156f + t2 * 0.30100228583779814f)));
    return (float)e * 0.69314718055994531f + lm;
}

/* sin(a) and cos(a) for a in [-pi, pi]. */
static inline void mx_sincos_one(float *s, float *c, float a) {
    const float half_pi = (float)(mx_pi / 2), pi = (float)mx_pi;
    /* Folded into [-pi/2, pi/2]: sin(pi - a) = sin a, cos(pi - a) = -cos a. */
    float folded = a > half_pi ? pi - a : a < -half_pi ? -pi - a : a;
    float sign = (a > half_pi || a < -half_pi) ? -1.0f : 1.0f;
    float z = folded * folded;
    *s = folded * (0.9999999766242322f + z * (-0.1666664765574518f + z * (0.008332900166369098f
         + z * (-0.0001980091810775187f + z * 2.5905282764428133e-06f))));
    *c = sign * (0.9999999535516942f + z * (-0.4999990547699321f + z * (0.04166358770028271f
         + z * (-0.0013853726119271263f + z * 2.3154418553970016e-05f))));
}

/* mx_atan2_array, mx_log_array and mx_sincos_array with `suffix` on their names, each
 * loop led by LOOP_PRAGMA (MX_NO_VECTORIZE for the scalar reference). */
#define MX_VECMATH_ARRAYS(suffix, LOOP_PRAGMA)                                                                  \
    void mx_atan2_array##suffix(float *restrict dst, const float *restrict y, const float *restrict x, size_t count) { \
        LOOP_PRAGMA                                                                                            \
        for (size_t k = 0; k < count; k++) dst[k] = mx_atan2_one(y[k], x[k]);                                  \
    }                                                                                                          \
    void mx_log_array##suffix(float *restrict dst, const float *restrict x, size_t count) {                     \
        LOOP_PRAGMA                                                                                            \
        for (size_t k = 0; k < count; k++) dst[k] = mx_log_one(x[k]);                                           \
    }                                                                                                          \
    void mx_sincos_array##suffix(float *restrict s, float *restrict c, const float *restrict x, size_t count) { \
        LOOP_PRAGMA                                                                                            \
        for (size_t k = 0; k < count; k++) mx_sincos_one(&s[k], &c[k], x[k]);                                  \
    }

#endif
