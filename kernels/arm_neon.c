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

/* Sixteen lanes in four registers, folded in mx_lane_fold's order. */
static inline float fold_neon(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
    float s[16];
    vst1q_f32(s, a);
    vst1q_f32(s + 4, b);
    vst1q_f32(s + 8, c);
    vst1q_f32(s + 12, d);
    return mx_lane_fold(s);
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
    return fold_neon(a, b, c, d);
}

static void resample_neon(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                          const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) dst[i] = dot_neon(bank + (size_t)phase[i] * t, src + base[i], t);
}

/* Lanes k..k+3 of an output's coefficients, row + f slope (one fused multiply-add). */
static inline float32x4_t lerp_coef_neon(const float *row, size_t t, size_t k, float f) {
    return vfmaq_n_f32(vld1q_f32(row + k), vld1q_f32(row + t + k), f);
}

/* One output at a time; with two channels its coefficients serve both. */
static void resample_lerp_neon(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                               const float *restrict src1, const int32_t *restrict base,
                               const int32_t *restrict phase, const float *restrict frac, size_t count,
                               const float *restrict table, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) {
        const float *row = table + (size_t)phase[i] * 2 * t, *x = src0 + base[i];
        const float f = frac[i];
        float32x4_t a = vdupq_n_f32(0.0f), b = a, c = a, d = a;
        if (src1) {
            const float *y = src1 + base[i];
            float32x4_t e = vdupq_n_f32(0.0f), g = e, h = e, j = e;
            for (size_t k = 0; k < t; k += 16) {
                const float32x4_t ca = lerp_coef_neon(row, t, k, f), cb = lerp_coef_neon(row, t, k + 4, f);
                const float32x4_t cc = lerp_coef_neon(row, t, k + 8, f), cd = lerp_coef_neon(row, t, k + 12, f);
                a = vfmaq_f32(a, ca, vld1q_f32(x + k));
                b = vfmaq_f32(b, cb, vld1q_f32(x + k + 4));
                c = vfmaq_f32(c, cc, vld1q_f32(x + k + 8));
                d = vfmaq_f32(d, cd, vld1q_f32(x + k + 12));
                e = vfmaq_f32(e, ca, vld1q_f32(y + k));
                g = vfmaq_f32(g, cb, vld1q_f32(y + k + 4));
                h = vfmaq_f32(h, cc, vld1q_f32(y + k + 8));
                j = vfmaq_f32(j, cd, vld1q_f32(y + k + 12));
            }
            dst1[i] = fold_neon(e, g, h, j);
        } else {
            for (size_t k = 0; k < t; k += 16) {
                a = vfmaq_f32(a, lerp_coef_neon(row, t, k, f), vld1q_f32(x + k));
                b = vfmaq_f32(b, lerp_coef_neon(row, t, k + 4, f), vld1q_f32(x + k + 4));
                c = vfmaq_f32(c, lerp_coef_neon(row, t, k + 8, f), vld1q_f32(x + k + 8));
                d = vfmaq_f32(d, lerp_coef_neon(row, t, k + 12, f), vld1q_f32(x + k + 12));
            }
        }
        dst0[i] = fold_neon(a, b, c, d);
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

/* K-weighting, two channels side by side in the lanes of a float64x2_t (lane 0: channel c). */
static void kweight_pair_neon(double *restrict energy, double *restrict state, const float *restrict x0,
                              const float *restrict x1, size_t frames, const double *restrict c) {
    double *sa = state, *sb = state + 4;
    double t[2];
    t[0] = sa[0]; t[1] = sb[0]; float64x2_t s0 = vld1q_f64(t);
    t[0] = sa[1]; t[1] = sb[1]; float64x2_t s1 = vld1q_f64(t);
    t[0] = sa[2]; t[1] = sb[2]; float64x2_t s2 = vld1q_f64(t);
    t[0] = sa[3]; t[1] = sb[3]; float64x2_t s3 = vld1q_f64(t);
    float64x2_t e = vld1q_f64(energy);
    const float64x2_t c0 = vdupq_n_f64(c[0]), c1 = vdupq_n_f64(c[1]), c2 = vdupq_n_f64(c[2]), c3 = vdupq_n_f64(c[3]),
                      c4 = vdupq_n_f64(c[4]), c5 = vdupq_n_f64(c[5]), c6 = vdupq_n_f64(c[6]), c7 = vdupq_n_f64(c[7]),
                      c8 = vdupq_n_f64(c[8]), c9 = vdupq_n_f64(c[9]);
    for (size_t i = 0; i < frames; i++) {
        t[0] = (double)x0[i]; t[1] = (double)x1[i];
        const float64x2_t x = vld1q_f64(t);
        const float64x2_t y = vaddq_f64(vmulq_f64(c0, x), s0);
        s0 = vsubq_f64(vaddq_f64(vmulq_f64(c1, x), s1), vmulq_f64(c3, y));
        s1 = vsubq_f64(vmulq_f64(c2, x), vmulq_f64(c4, y));
        const float64x2_t z = vaddq_f64(vmulq_f64(c5, y), s2);
        s2 = vsubq_f64(vaddq_f64(vmulq_f64(c6, y), s3), vmulq_f64(c8, z));
        s3 = vsubq_f64(vmulq_f64(c7, y), vmulq_f64(c9, z));
        e = vaddq_f64(e, vmulq_f64(z, z));
    }
    vst1q_f64(t, s0); sa[0] = t[0]; sb[0] = t[1];
    vst1q_f64(t, s1); sa[1] = t[0]; sb[1] = t[1];
    vst1q_f64(t, s2); sa[2] = t[0]; sb[2] = t[1];
    vst1q_f64(t, s3); sa[3] = t[0]; sb[3] = t[1];
    vst1q_f64(energy, e);
    mx_kweight_flush(sa);
    mx_kweight_flush(sb);
}

static void kweight_neon(double *restrict energy, double *restrict state, const float *const *restrict src,
                         size_t channels, size_t frames, const double *restrict coef) {
    size_t c = 0;
    for (; c + 2 <= channels; c += 2)
        kweight_pair_neon(energy + c, state + 4 * c, src[c], src[c + 1], frames, coef);
    if (c < channels) mx_kweight_scalar(energy + c, state + 4 * c, src + c, 1, frames, coef);
}

/* The larger of each lane of m and |v|, passing over NaN: a select on v > m, as
 * mx_peak_one (vmaxq_f32 would propagate a NaN). */
static inline float32x4_t peak_lanes_neon(float32x4_t m, float32x4_t v) {
    const float32x4_t a = vabsq_f32(v);
    return vbslq_f32(vcgtq_f32(a, m), a, m);
}
static inline float peak_fold_neon(float32x4_t m, float r) {
    float t[4];
    vst1q_f32(t, m);
    for (int l = 0; l < 4; l++) r = mx_peak_one(r, t[l]);
    return r;
}

static float peak_neon(const float *restrict x, size_t n) {
    size_t i = 0;
    float32x4_t m = vdupq_n_f32(0.0f);
    for (; i + 4 <= n; i += 4) m = peak_lanes_neon(m, vld1q_f32(x + i));
    float r = peak_fold_neon(m, 0.0f);
    for (; i < n; i++) r = mx_peak_one(r, x[i]);
    return r;
}

/* Four windows per step. Inlined with a constant `pairs`, so that the accumulators stay
 * in registers. */
static inline __attribute__((always_inline)) float peak_interp_neon_n(const float *restrict x, size_t frames,
                                                                      const float *restrict bank, size_t taps,
                                                                      const size_t pairs) {
    const size_t h = taps / 2;
    size_t i = 0;
    float32x4_t m = vdupq_n_f32(0.0f);
    for (; i + 4 <= frames; i += 4) {
        float32x4_t u[4], v[4];
        for (size_t p = 0; p < pairs; p++) u[p] = v[p] = vdupq_n_f32(0.0f);
        for (size_t k = 0; k < h; k++) {
            const float32x4_t lo = vld1q_f32(x + i + k), hi = vld1q_f32(x + i + taps - 1 - k);
            const float32x4_t s = vaddq_f32(lo, hi), d = vsubq_f32(lo, hi);
            for (size_t p = 0; p < pairs; p++) {
                u[p] = vaddq_f32(u[p], vmulq_n_f32(s, bank[p * taps + k]));
                v[p] = vaddq_f32(v[p], vmulq_n_f32(d, bank[p * taps + h + k]));
            }
        }
        for (size_t p = 0; p < pairs; p++)
            m = peak_lanes_neon(peak_lanes_neon(m, vaddq_f32(u[p], v[p])), vsubq_f32(u[p], v[p]));
    }
    float r = peak_fold_neon(m, 0.0f);
    for (; i < frames; i++)
        for (size_t p = 0; p < pairs; p++) r = mx_interp_pair_peak(r, bank + p * taps, x + i, taps);
    return r;
}

static float peak_interp_neon(const float *restrict x, size_t frames, const float *restrict bank,
                              size_t pairs, size_t taps) {
    switch (pairs) {
    case 1: return peak_interp_neon_n(x, frames, bank, taps, 1);
    case 2: return peak_interp_neon_n(x, frames, bank, taps, 2);
    case 3: return peak_interp_neon_n(x, frames, bank, taps, 3);
    default: return peak_interp_neon_n(x, frames, bank, taps, 4);
    }
}

const mx_kernels mx_kernels_neon = {
    mix_ramp_neon, mix_gain_neon, apply_ramp_neon, apply_gain_neon,
    interleave_neon, deinterleave_neon, f32_to_s16_neon, f32_to_s24_neon, xcorr_neon, s16_deinterleave_neon,
    resample_neon, resample_lerp_neon,
    kweight_neon, peak_neon, peak_interp_neon,
    mx_resample_positions_scalar, mx_cfft_pass4_v4, mx_rfft_unpack_auto, mx_rfft_pack_auto,
    mx_pvoc_analyse_base, mx_pvoc_synthesise_base,
};
#endif
