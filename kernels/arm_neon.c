/* NEON paths (baseline on arm64). Not exercised on x86_64 hosts; the kernel tests run
 * them against the scalar reference on arm64. */
#include "internal.h"
#if defined(MX_HAVE_NEON)
#include <arm_neon.h>

static inline float32x4_t ramp_gains_neon(float64x2_t g0v, float64x2_t stepv, float64x2_t i0, float64x2_t i1) {
    float32x2_t lo = vcvt_f32_f64(vaddq_f64(g0v, vmulq_f64(i0, stepv)));
    float32x2_t hi = vcvt_f32_f64(vaddq_f64(g0v, vmulq_f64(i1, stepv)));
    return vcombine_f32(lo, hi);
}

static void mix_ramp_neon(float *restrict dst, const float *restrict src, size_t frames,
                          double g0, double step, int64_t offset) {
    size_t i = 0;
    const float64x2_t g0v = vdupq_n_f64(g0), stepv = vdupq_n_f64(step), four = vdupq_n_f64(4.0);
    const double o = (double)offset;
    double a0[2] = {o, o + 1}, a1[2] = {o + 2, o + 3};
    float64x2_t idx0 = vld1q_f64(a0), idx1 = vld1q_f64(a1);
    for (; i + 4 <= frames; i += 4) {
        float32x4_t g = ramp_gains_neon(g0v, stepv, idx0, idx1);
        vst1q_f32(dst + i, vaddq_f32(vld1q_f32(dst + i), vmulq_f32(vld1q_f32(src + i), g)));
        idx0 = vaddq_f64(idx0, four);
        idx1 = vaddq_f64(idx1, four);
    }
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void mix_gain_neon(float *restrict dst, const float *restrict src, size_t frames, float gain) {
    size_t i = 0;
    const float32x4_t g = vdupq_n_f32(gain);
    for (; i + 4 <= frames; i += 4)
        vst1q_f32(dst + i, vaddq_f32(vld1q_f32(dst + i), vmulq_f32(vld1q_f32(src + i), g)));
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * gain;
}

static void apply_ramp_neon(float *restrict buf, size_t frames, double g0, double step, int64_t offset) {
    size_t i = 0;
    const float64x2_t g0v = vdupq_n_f64(g0), stepv = vdupq_n_f64(step), four = vdupq_n_f64(4.0);
    const double o = (double)offset;
    double a0[2] = {o, o + 1}, a1[2] = {o + 2, o + 3};
    float64x2_t idx0 = vld1q_f64(a0), idx1 = vld1q_f64(a1);
    for (; i + 4 <= frames; i += 4) {
        float32x4_t g = ramp_gains_neon(g0v, stepv, idx0, idx1);
        vst1q_f32(buf + i, vmulq_f32(vld1q_f32(buf + i), g));
        idx0 = vaddq_f64(idx0, four);
        idx1 = vaddq_f64(idx1, four);
    }
    for (; i < frames; i++)
        buf[i] = buf[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void apply_gain_neon(float *restrict buf, size_t frames, float gain) {
    size_t i = 0;
    const float32x4_t g = vdupq_n_f32(gain);
    for (; i + 4 <= frames; i += 4)
        vst1q_f32(buf + i, vmulq_f32(vld1q_f32(buf + i), g));
    for (; i < frames; i++)
        buf[i] = buf[i] * gain;
}

static void interleave_neon(float *restrict dst, const float *const *restrict src,
                            size_t channels, size_t frames) {
    if (channels != 2) { mx_interleave_scalar(dst, src, channels, frames); return; }
    const float *l = src[0], *r = src[1];
    size_t f = 0;
    for (; f + 4 <= frames; f += 4) {
        float32x4x2_t v = { { vld1q_f32(l + f), vld1q_f32(r + f) } };
        vst2q_f32(dst + 2 * f, v);
    }
    for (; f < frames; f++) { dst[2 * f] = l[f]; dst[2 * f + 1] = r[f]; }
}

static void deinterleave_neon(float *const *restrict dst, const float *restrict src,
                              size_t channels, size_t frames) {
    if (channels != 2) { mx_deinterleave_scalar(dst, src, channels, frames); return; }
    float *l = dst[0], *r = dst[1];
    size_t f = 0;
    for (; f + 4 <= frames; f += 4) {
        float32x4x2_t v = vld2q_f32(src + 2 * f);
        vst1q_f32(l + f, v.val[0]);
        vst1q_f32(r + f, v.val[1]);
    }
    for (; f < frames; f++) { l[f] = src[2 * f]; r[f] = src[2 * f + 1]; }
}

static inline int32x4_t scale_clip_round_neon(float32x4_t x, float scale, float lo, float hi) {
    float32x4_t v = vmulq_n_f32(x, scale);
    v = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), vceqq_f32(v, v)));
    v = vmaxq_f32(vminq_f32(v, vdupq_n_f32(hi)), vdupq_n_f32(lo));
    return vcvtnq_s32_f32(v);
}

static void f32_to_s16_neon(int16_t *restrict dst, const float *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int32x4_t a = scale_clip_round_neon(vld1q_f32(src + i), 32768.0f, -32768.0f, 32767.0f);
        int32x4_t b = scale_clip_round_neon(vld1q_f32(src + i + 4), 32768.0f, -32768.0f, 32767.0f);
        vst1q_s16(dst + i, vcombine_s16(vqmovn_s32(a), vqmovn_s32(b)));
    }
    for (; i < n; i++) dst[i] = mx_s16_one(src[i]);
}

static void f32_to_s24_neon(int32_t *restrict dst, const float *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_s32(dst + i, vshlq_n_s32(scale_clip_round_neon(vld1q_f32(src + i), 8388608.0f, -8388608.0f, 8388607.0f), 8));
    for (; i < n; i++) dst[i] = mx_s24_one(src[i]);
}

const mx_kernels mx_kernels_neon = {
    mix_ramp_neon, mix_gain_neon, apply_ramp_neon, apply_gain_neon,
    interleave_neon, deinterleave_neon, f32_to_s16_neon, f32_to_s24_neon,
};
#endif
