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

static void s16_deinterleave_neon(float *const *restrict dst, const int16_t *restrict src,
                                  size_t channels, size_t frames) {
    if (channels > 2) { mx_s16_deinterleave_scalar(dst, src, channels, frames); return; }
    const float scale = 1.0f / 32768.0f;
    size_t f = 0;
    if (channels == 1) {
        float *d = dst[0];
        for (; f + 4 <= frames; f += 4)
            vst1q_f32(d + f, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vld1_s16(src + f))), scale));
        for (; f < frames; f++) d[f] = (float)src[f] * scale;
        return;
    }
    float *l = dst[0], *r = dst[1];
    for (; f + 4 <= frames; f += 4) {
        int16x4x2_t v = vld2_s16(src + 2 * f);   /* the load splits the channels */
        vst1q_f32(l + f, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(v.val[0])), scale));
        vst1q_f32(r + f, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(v.val[1])), scale));
    }
    for (; f < frames; f++) {
        l[f] = (float)src[2 * f] * scale;
        r[f] = (float)src[2 * f + 1] * scale;
    }
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

/* One row against one window: sixteen lanes in four registers (four FMA chains), folded
 * in mx_lane_fold's order. */
static inline float dot_neon(const float *row, const float *x, size_t taps) {
    float32x4_t a = vdupq_n_f32(0.0f), b = a, c = a, d = a;
    for (size_t k = 0; k < taps; k += 16) {
        a = vfmaq_f32(a, vld1q_f32(row + k), vld1q_f32(x + k));
        b = vfmaq_f32(b, vld1q_f32(row + k + 4), vld1q_f32(x + k + 4));
        c = vfmaq_f32(c, vld1q_f32(row + k + 8), vld1q_f32(x + k + 8));
        d = vfmaq_f32(d, vld1q_f32(row + k + 12), vld1q_f32(x + k + 12));
    }
    float s[16];
    vst1q_f32(s, a);
    vst1q_f32(s + 4, b);
    vst1q_f32(s + 8, c);
    vst1q_f32(s + 12, d);
    return mx_lane_fold(s);
}

static void resample_neon(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                          const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) dst[i] = dot_neon(bank + (size_t)phase[i] * t, src + base[i], t);
}

static void resample_lerp_neon(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                               const int32_t *restrict phase, const float *restrict frac, size_t count,
                               const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) {
        const float *row = bank + (size_t)phase[i] * t;
        dst[i] = mx_lerp_fused(dot_neon(row, src + base[i], t), dot_neon(row + t, src + base[i], t), frac[i]);
    }
}

static void xcorr_neon(float *restrict dst, const float *restrict a, const float *restrict x, size_t len, size_t lags) {
    size_t l = 0;
    for (; l + 4 <= lags; l += 4) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (size_t i = 0; i < len; i++) acc = vaddq_f32(acc, vmulq_n_f32(vld1q_f32(x + l + i), a[i]));
        vst1q_f32(dst + l, acc);
    }
    for (; l < lags; l++) dst[l] = mx_xcorr_one(a, x + l, len);
}

const mx_kernels mx_kernels_neon = {
    mix_ramp_neon, mix_gain_neon, apply_ramp_neon, apply_gain_neon,
    interleave_neon, deinterleave_neon, f32_to_s16_neon, f32_to_s24_neon, xcorr_neon, s16_deinterleave_neon,
    resample_neon, resample_lerp_neon,
};
#endif
