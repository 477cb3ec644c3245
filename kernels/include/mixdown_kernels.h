/*
 * Mixdown's C kernels: the hot loops of the render engine.
 *
 * Conventions (after miniaudio's conversion routines):
 * - plain functions, destination first, `restrict` buffers that never overlap;
 * - lengths are in frames of one channel (a planar channel buffer), never bytes;
 * - every kernel has a `_scalar` reference that is always compiled, built with
 *   auto-vectorisation off, and used by the tests as the ground truth;
 * - SIMD paths (SSE2 and AVX2 on x86_64, NEON on arm64) are chosen in one place,
 *   `mx_kernels_active()`, and never depend on the alignment of any pointer;
 * - every SIMD path is bit-identical to the scalar reference (tolerance 0): the
 *   arithmetic is the same sequence of IEEE operations, with contraction to FMA off,
 *   so that a frame gets the same value whether it falls in a vector body or a tail.
 *
 * Gain ramps. A ramp is described by its start gain g0 and per-frame step, both in
 * double, and by the offset of dst[0] inside the ramp. Frame i of the call gets
 *     gain(i) = (float)(g0 + (double)(offset + i) * step)
 * so a frame's gain depends only on its position in the ramp, not on how the ramp was
 * cut into blocks: a render is the same whatever its block size.
 */
#ifndef MIXDOWN_KERNELS_H
#define MIXDOWN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define MX_RESTRICT
#else
#define MX_RESTRICT restrict
#endif

/* The instruction sets a kernel table can be built for. */
typedef enum mx_isa {
    MX_ISA_SCALAR = 0,
    MX_ISA_SSE2 = 1,
    MX_ISA_AVX2 = 2,
    MX_ISA_NEON = 3,
    /* A CPU with AVX-512 runs the AVX2 table but for resample_lerp, which takes 16-lane
     * vectors (one accumulator per output and channel is exactly the 16 lanes of the
     * summation order, so it stays bit-identical) and four outputs sharing a row at a
     * time: 0.87-0.89x the AVX2 kernel's time on the drift job's positions (mono
     * 0.83-0.85x). The other kernels are memory- or load-bound, and this machine's Zen 4
     * splits a 512-bit load or FMA into two 256-bit ones. */
    MX_ISA_AVX512 = 4,
    MX_ISA_COUNT = 5
} mx_isa;

/* The resampler's position of an output and its step per output (see resample_positions). */
typedef struct { int64_t frame, row; uint64_t excess; } mx_resample_position;
typedef struct { int64_t frames, rows, row_count; uint64_t excess, numerator; } mx_resample_step;

/* One implementation of every kernel. */
struct mx_pvoc;   /* the spectral stretch's frame engine (below) */
typedef struct mx_kernels {
    /* dst[i] += src[i] * gain(i), gain(i) = (float)(g0 + (offset + i) * step). */
    void (*mix_ramp)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames,
                     double g0, double step, int64_t offset);
    /* dst[i] += src[i] * gain. */
    void (*mix_gain)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames, float gain);
    /* buf[i] *= gain(i), same ramp rule as mix_ramp. */
    void (*apply_ramp)(float *MX_RESTRICT buf, size_t frames, double g0, double step, int64_t offset);
    /* buf[i] *= gain. */
    void (*apply_gain)(float *MX_RESTRICT buf, size_t frames, float gain);
    /* dst[f * channels + c] = src[c][f]: planar to interleaved. */
    void (*interleave)(float *MX_RESTRICT dst, const float *const *MX_RESTRICT src,
                       size_t channels, size_t frames);
    /* dst[c][f] = src[f * channels + c]: interleaved to planar. */
    void (*deinterleave)(float *const *MX_RESTRICT dst, const float *MX_RESTRICT src,
                         size_t channels, size_t frames);
    /* Float to 16-bit: x * 32768, rounded to nearest (ties to even), clipped to
     * [-32768, 32767]; NaN becomes 0. No dither. */
    void (*f32_to_s16)(int16_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
    /* Float to 24-bit: x * 8388608, rounded to nearest (ties to even), clipped to
     * [-8388608, 8388607], NaN becomes 0; stored left-justified in an int32 (value << 8),
     * which is what libsndfile's int API expects for a 24-bit file. */
    void (*f32_to_s24)(int32_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
    /* Cross-correlation: dst[l] = sum over i < len of a[i] * x[l + i], for l < lags, summed
     * in order of i with separate multiply and add: bit-identical on every path, so
     * the lag a search picks never depends on the CPU. */
    void (*xcorr)(float *MX_RESTRICT dst, const float *MX_RESTRICT a, const float *MX_RESTRICT x,
                  size_t len, size_t lags);
    /* Decoding 16-bit PCM: dst[c][f] = src[f * channels + c] / 32768 (libsndfile's
     * normalisation; exact in float, so every path is bit-identical). */
    void (*s16_deinterleave)(float *const *MX_RESTRICT dst, const int16_t *MX_RESTRICT src,
                             size_t channels, size_t frames);
    /* Polyphase FIR resampler, exact phases. For each output i in 0..<count:
     *   dst[i] = sum over k < taps of row[k] * x[k],  row = bank + phase[i] * taps, x = src + base[i]
     * `taps` is a multiple of 16. The sum runs in sixteen lanes: lane l adds taps l, l + 16,
     * l + 32, ... in order; then h_l = s_l + s_(l+8) for l < 8, and the result is
     * ((h0 + h1) + (h2 + h3)) + ((h4 + h5) + (h6 + h7)).
     * Every path follows that order; the FMA paths (AVX2, NEON) fuse each multiply-add and
     * are bit-identical to mx_resample_fma_scalar, the others (scalar, SSE2) to
     * mx_resample_scalar. The two families agree within 1e-6 of full scale, and an output
     * never depends on the group or tail it fell in, so renders are block-size independent.
     * Any input step works: base[] and phase[] are free per output. */
    void (*resample)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, const int32_t *MX_RESTRICT base,
                     const int32_t *MX_RESTRICT phase, size_t count, const float *MX_RESTRICT bank, int taps);
    /* Between two rows of a dense table, one channel or two. Row r of `table` holds
     * 2 * taps floats: phase r's coefficients, then their slope (phase r + 1's minus phase
     * r's; `mx_resample_lerp_table` makes it). Output i's coefficients are
     *     c[k] = row[k] + frac[i] * slope[k]       (row = table + phase[i] * 2 * taps)
     * one fused multiply-add on the FMA paths, a multiply then an add on the others, and
     *     dst0[i] = sum over k of c[k] * src0[base[i] + k]
     * in the lane order above (fused on the FMA paths). With src1 and dst1 non-NULL, dst1[i]
     * is the same sum over src1 with the same c: a stereo pair computes its coefficients
     * once (a quarter fewer loads and multiply-adds than two rows' sums per channel). A
     * channel's values do not depend on whether it had a partner, nor on the group or tail
     * an output fell in. Each channel's arithmetic is the same on every path of a family:
     * AVX2 and NEON equal mx_resample_lerp_fma_scalar bit for bit, SSE2 mx_resample_lerp_scalar. */
    void (*resample_lerp)(float *MX_RESTRICT dst0, float *MX_RESTRICT dst1, const float *MX_RESTRICT src0,
                          const float *MX_RESTRICT src1, const int32_t *MX_RESTRICT base,
                          const int32_t *MX_RESTRICT phase, const float *MX_RESTRICT frac, size_t count,
                          const float *MX_RESTRICT table, int taps);
    /* K-weighting (ITU-R BS.1770), the loudness meter's filter. Each of `channels` planar
     * channels of `frames` frames runs through two biquads in double, a high shelf then a
     * high pass, each in transposed direct form II:
     *     y = b0 x + s0;   s0 = (b1 x + s1) - a1 y;   s1 = b2 x - a2 y
     * coef = {shelf b0, b1, b2, a1, a2, high pass b0, b1, b2, a1, a2}; state holds four
     * doubles per channel (shelf s0, s1, high pass s0, s1), carried from call to call.
     * energy[c] += the squared outputs of channel c, added in frame order. At the end of a
     * call a state below 1e-30 in magnitude becomes 0, so that silence never decays into
     * subnormals (which cost a hundred cycles each). Vector paths run channels side by side
     * in lanes with the same operations, so every path is bit-identical. */
    void (*kweight)(double *MX_RESTRICT energy, double *MX_RESTRICT state, const float *const *MX_RESTRICT src,
                    size_t channels, size_t frames, const double *MX_RESTRICT coef);
    /* The largest |x[i]| for i < n (0 for n = 0); NaNs are passed over. */
    float (*peak)(const float *MX_RESTRICT x, size_t n);
    /* The peak of an oversampled signal, for the true-peak meter, in mirrored pairs of
     * phases: a phase's mirror image (its taps reversed) is the phase as far on the other
     * side of the window's centre, so both come from one pass over half the taps. With
     * h = taps / 2, pair p's row holds e = bank + p * taps and o = e + h (the even and odd
     * parts of one phase: e[k] = (w[k] + w[taps-1-k]) / 2, o[k] = (w[k] - w[taps-1-k]) / 2).
     * For i < frames and p < pairs:
     *     u = sum over k < h of e[k] * (x[i + k] + x[i + taps-1-k])
     *     v = sum over k < h of o[k] * (x[i + k] - x[i + taps-1-k])
     * each added in order of k, multiply and add unfused; the pair's points are u + v (the
     * phase) and u - v (its mirror). Returns the largest |point|, NaNs passed over. A phase
     * that is its own mirror (the middle one) is a pair with o = 0. x holds frames + taps - 1
     * floats; taps even; 1 <= pairs <= 4. Vector paths compute neighbouring i in lanes with
     * the same operations: bit-identical. Half the multiply-adds of a pass per phase. */
    float (*peak_interp)(const float *MX_RESTRICT x, size_t frames, const float *MX_RESTRICT bank,
                         size_t pairs, size_t taps);
    /* The resampler's positions (Resampler.swift says what they mean). An output at input
     * frame n plus a remainder r of the ratio's numerator reads rows q and q + 1 with
     * r * row_count = q * numerator + e. For i < count:
     *     base[i] = n - offset,  phase[i] = q,  frac[i] = (float)((double)e * (1.0 / numerator))
     * (frac may be NULL: exact rows), then the position steps by one output:
     *     n += frames; q += rows; e += excess;
     *     if e >= numerator: e -= numerator, q += 1;   if q >= row_count: q -= row_count, n += 1
     * with 0 <= excess < numerator <= INT64_MAX and 0 <= rows < row_count. `position` is
     * read at the start and holds the next output's position at the end. Integer stepping
     * is exact, and the fraction one multiply and one rounding: every path is bit-identical. */
    void (*resample_positions)(int32_t *MX_RESTRICT base, int32_t *MX_RESTRICT phase, float *MX_RESTRICT frac,
                               size_t count, mx_resample_position *MX_RESTRICT position, int64_t offset,
                               const mx_resample_step *MX_RESTRICT step);
    /* One pass of the spectral stretch's complex FFT (mx_rfft): a radix-4 Stockham pass,
     * e^(-2 pi i / 4L) with L = 4 n1. For p < n1 and q < s, butterfly (p, q) reads
     *     a_j = x[q + s (p + j n1)], j < 4
     * and writes y[q + s (4 p + j)] = (the j-th radix-4 output) times w_j[p], where
     * w_j[p] = tw[(2j - 2) n1 + p] + i tw[(2j - 1) n1 + p] for j = 1, 2, 3 (no twiddle for
     * j = 0). s is 1 or a multiple of 4. Every product and sum is rounded on its own
     * (unfused), in the same order on every path: every path is bit-identical. */
    void (*cfft_pass4)(float *MX_RESTRICT yr, float *MX_RESTRICT yi, const float *MX_RESTRICT xr,
                       const float *MX_RESTRICT xi, const float *MX_RESTRICT tw, size_t n1, size_t s);
    /* The real FFT's step from the half-size complex transform Z (h values) to the bins of
     * a real frame of 2h: X[k] = E[k] + w^k O[k] for k <= h, E = (Z[k] + conj Z[h-k]) / 2,
     * O = (Z[k] - conj Z[h-k]) / 2i, w^k = pr[k] + i pi[k] (rfft_unpack); and back, the
     * conjugated input of the inverse transform (rfft_pack). Element-wise, unfused: every
     * path is bit-identical. */
    void (*rfft_unpack)(float *MX_RESTRICT re, float *MX_RESTRICT im, const float *MX_RESTRICT zr,
                        const float *MX_RESTRICT zi, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);
    void (*rfft_pack)(float *MX_RESTRICT zr, float *MX_RESTRICT zi, const float *MX_RESTRICT re,
                      const float *MX_RESTRICT im, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);
    /* The spectral stretch's frame engine, whole: a frame's analysis (mx_pvoc_analyse_mapped)
     * and synthesis (mx_pvoc_synthesise_low, `low` NULL for mx_pvoc_synthesise). One C
     * source compiled for each path (the baseline's vectors, or AVX2's eight lanes without
     * FMA): every path is bit-identical. An engine runs the table it was made with
     * (mx_pvoc_create_with). */
    void (*pvoc_analyse)(struct mx_pvoc *MX_RESTRICT engine, const float *const *in, double position, double exact,
                         double onset);
    void (*pvoc_synthesise)(struct mx_pvoc *MX_RESTRICT engine, float *const *out, float *const *low, int reset);
} mx_kernels;

/* The table for `isa`, or NULL when that path is not built for this architecture or
 * this CPU cannot run it. MX_ISA_SCALAR is always available. */
const mx_kernels *mx_kernels_for_isa(mx_isa isa);

/* The best table this CPU runs, chosen once. The environment variable MIXDOWN_ISA
 * (scalar, sse2, avx2, avx512, neon) forces a path, for benchmarks and debugging; an
 * unavailable choice falls back to the best one. */
const mx_kernels *mx_kernels_active(void);
mx_isa mx_kernels_active_isa(void);
const char *mx_isa_name(mx_isa isa);

/* Scalar references, always compiled, vectorisation disabled. */
void mx_mix_ramp_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames,
                        double g0, double step, int64_t offset);
void mx_mix_gain_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames, float gain);
void mx_apply_ramp_scalar(float *MX_RESTRICT buf, size_t frames, double g0, double step, int64_t offset);
void mx_apply_gain_scalar(float *MX_RESTRICT buf, size_t frames, float gain);
void mx_interleave_scalar(float *MX_RESTRICT dst, const float *const *MX_RESTRICT src,
                          size_t channels, size_t frames);
void mx_deinterleave_scalar(float *const *MX_RESTRICT dst, const float *MX_RESTRICT src,
                            size_t channels, size_t frames);
void mx_f32_to_s16_scalar(int16_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
void mx_f32_to_s24_scalar(int32_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
void mx_xcorr_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT a, const float *MX_RESTRICT x,
                     size_t len, size_t lags);
void mx_s16_deinterleave_scalar(float *const *MX_RESTRICT dst, const int16_t *MX_RESTRICT src,
                                size_t channels, size_t frames);
void mx_kweight_scalar(double *MX_RESTRICT energy, double *MX_RESTRICT state, const float *const *MX_RESTRICT src,
                       size_t channels, size_t frames, const double *MX_RESTRICT coef);
float mx_peak_scalar(const float *MX_RESTRICT x, size_t n);
float mx_peak_interp_scalar(const float *MX_RESTRICT x, size_t frames, const float *MX_RESTRICT bank,
                            size_t pairs, size_t taps);
/* The resampler's references: unfused (SSE2's twin) and fused (AVX2's and NEON's twin). */
void mx_resample_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, const int32_t *MX_RESTRICT base,
                        const int32_t *MX_RESTRICT phase, size_t count, const float *MX_RESTRICT bank, int taps);
void mx_resample_lerp_scalar(float *MX_RESTRICT dst0, float *MX_RESTRICT dst1, const float *MX_RESTRICT src0,
                             const float *MX_RESTRICT src1, const int32_t *MX_RESTRICT base,
                             const int32_t *MX_RESTRICT phase, const float *MX_RESTRICT frac, size_t count,
                             const float *MX_RESTRICT table, int taps);
void mx_resample_fma_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, const int32_t *MX_RESTRICT base,
                            const int32_t *MX_RESTRICT phase, size_t count, const float *MX_RESTRICT bank, int taps);
void mx_resample_lerp_fma_scalar(float *MX_RESTRICT dst0, float *MX_RESTRICT dst1, const float *MX_RESTRICT src0,
                                 const float *MX_RESTRICT src1, const int32_t *MX_RESTRICT base,
                                 const int32_t *MX_RESTRICT phase, const float *MX_RESTRICT frac, size_t count,
                                 const float *MX_RESTRICT table, int taps);
/* The table resample_lerp reads, from a bank of rows + 1 rows of taps floats each: row r
 * of the table is bank row r, then bank row r + 1 minus bank row r (float subtraction).
 * `table` holds rows * 2 * taps floats. */
void mx_resample_lerp_table(float *MX_RESTRICT table, const float *MX_RESTRICT bank, size_t rows, int taps);

void mx_resample_positions_scalar(int32_t *MX_RESTRICT base, int32_t *MX_RESTRICT phase, float *MX_RESTRICT frac,
                                  size_t count, mx_resample_position *MX_RESTRICT position, int64_t offset,
                                  const mx_resample_step *MX_RESTRICT step);
void mx_cfft_pass4_scalar(float *MX_RESTRICT yr, float *MX_RESTRICT yi, const float *MX_RESTRICT xr,
                          const float *MX_RESTRICT xi, const float *MX_RESTRICT tw, size_t n1, size_t s);
void mx_rfft_unpack_scalar(float *MX_RESTRICT re, float *MX_RESTRICT im, const float *MX_RESTRICT zr,
                           const float *MX_RESTRICT zi, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);
void mx_rfft_pack_scalar(float *MX_RESTRICT zr, float *MX_RESTRICT zi, const float *MX_RESTRICT re,
                         const float *MX_RESTRICT im, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);

/* The discrete Fourier transform of n complex values in place (re, im: n doubles each),
 * n a power of two: X[k] = sum x[j] e^(-2 pi i jk/n), or with `inverse` e^(+2 pi i jk/n)
 * and no 1/n scaling. Iterative radix-2, double precision, one plain implementation (no
 * SIMD path: it serves analysis, not rendering). The caller owns the twiddle table
 * (wr, wi: table/2 doubles each, filled by mx_fft_twiddles for `table`, a power of two
 * >= n), so that one table serves every transform up to its size. */
void mx_fft_twiddles(double *MX_RESTRICT wr, double *MX_RESTRICT wi, size_t table);
void mx_fft(double *MX_RESTRICT re, double *MX_RESTRICT im, size_t n, int inverse,
            const double *MX_RESTRICT wr, const double *MX_RESTRICT wi, size_t table);

/* A real FFT of n floats (n a power of two, 4 to 2^24): forward gives bins 0..n/2 of
 * X[k] = sum x[j] e^(-2 pi i jk/n) (re, im: n/2 + 1 each; im[0] = im[n/2] = 0); inverse
 * takes them back to n samples, scaled by 1/n (inverse(forward(x)) = x). A plan holds its
 * tables and scratch: one plan per thread. NULL for a bad size or no memory. */
typedef struct mx_rfft mx_rfft;
mx_rfft *mx_rfft_create(size_t n);
/* The same with the complex FFT's passes from `kernels` (mx_kernels_for_isa; every table
 * gives the same samples): for comparing paths. mx_rfft_create takes mx_kernels_active(). */
mx_rfft *mx_rfft_create_with(size_t n, const mx_kernels *kernels);
void mx_rfft_destroy(mx_rfft *plan);
size_t mx_rfft_size(const mx_rfft *plan);
void mx_rfft_forward(const mx_rfft *plan, float *MX_RESTRICT re, float *MX_RESTRICT im, const float *MX_RESTRICT x);
void mx_rfft_inverse(const mx_rfft *plan, float *MX_RESTRICT x, const float *MX_RESTRICT re, const float *MX_RESTRICT im);
#if defined(__x86_64__) || defined(_M_X64)
/* mx_rfft_forward and mx_rfft_inverse compiled for AVX2 (rfft_transform.c, again in
 * x86_avx2_pvoc.c), which the frame engine's AVX2 copy calls; the passes still the plan's
 * table's. The same samples. Only on a CPU with AVX2. */
void mx_rfft_forward_avx2(const mx_rfft *plan, float *MX_RESTRICT re, float *MX_RESTRICT im, const float *MX_RESTRICT x);
void mx_rfft_inverse_avx2(const mx_rfft *plan, float *MX_RESTRICT x, const float *MX_RESTRICT re, const float *MX_RESTRICT im);
#endif

/* Elementary functions by the array (the phase vocoder's phases, log magnitudes and
 * rotations), polynomials in float with no branches (vecmath.c). Each writes count
 * values; dst and the inputs do not overlap; any alignment; count 0 writes nothing. The
 * _scalar forms are the references, the same arithmetic element for element with
 * vectorisation off: the two agree bit for bit.
 * - mx_atan2_array: dst[k] = atan2(y[k], x[k]) in [-pi, pi] (pi rounded to nearest), 0
 *   for (0, 0), a y of -0 taken as +0; within 4e-7 rad of double precision.
 * - mx_log_array: dst[k] = log(x[k]) for normal positive x[k]; within 2e-7 + 1.1e-7
 *   |log x[k]| of double precision (the float result's own rounding grows with it).
 *   Zero, negative, subnormal, infinite or NaN x: unspecified.
 * - mx_sincos_array: s[k] = sin(x[k]), c[k] = cos(x[k]) for x[k] in [-pi, pi]; within
 *   3e-7 (the fold about pi/2 carries float pi's own error). Outside that range:
 *   unspecified. */
void mx_atan2_array(float *MX_RESTRICT dst, const float *MX_RESTRICT y, const float *MX_RESTRICT x, size_t count);
void mx_atan2_array_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT y, const float *MX_RESTRICT x, size_t count);
void mx_log_array(float *MX_RESTRICT dst, const float *MX_RESTRICT x, size_t count);
void mx_log_array_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT x, size_t count);
void mx_sincos_array(float *MX_RESTRICT s, float *MX_RESTRICT c, const float *MX_RESTRICT x, size_t count);
void mx_sincos_array_scalar(float *MX_RESTRICT s, float *MX_RESTRICT c, const float *MX_RESTRICT x, size_t count);
#if defined(__x86_64__) || defined(_M_X64)
/* The same loops compiled for AVX2 (x86_avx2_pvoc.c), which the frame engine's AVX2 copy
 * calls: the same contracts and the _scalar forms' bits. Only on a CPU with AVX2
 * (mx_kernels_for_isa(MX_ISA_AVX2) not NULL). */
void mx_atan2_array_avx2(float *MX_RESTRICT dst, const float *MX_RESTRICT y, const float *MX_RESTRICT x, size_t count);
void mx_log_array_avx2(float *MX_RESTRICT dst, const float *MX_RESTRICT x, size_t count);
void mx_sincos_array_avx2(float *MX_RESTRICT s, float *MX_RESTRICT c, const float *MX_RESTRICT x, size_t count);
#endif

/* Onsets, one test for the frame engine (an onset ahead of a frame's centre is cut from
 * it) and for SpectralStretch (the hand-over to the short frame; docs/spectral.md,
 * "Onsets"): blocks of MX_ONSET_BLOCK frames, and a block is an onset when its energy is
 * over MX_ONSET_JUMP times the mean of the eight blocks before it (30 dB: a click or an
 * attack out of quiet) and over the floor of rounding (1e-12 a frame, -120 dB).
 * - mx_block_energy: dst[q] = the energy of the channels' sum over frames
 *   [q MX_ONSET_BLOCK, (q + 1) MX_ONSET_BLOCK) of src[0..channels), for q < blocks.
 * - mx_onset_block: whether a block of energy `block` is an onset after eight blocks whose
 *   energies sum to `before`. */
#define MX_ONSET_BLOCK 32
#define MX_ONSET_JUMP 1000.0f
void mx_block_energy(float *MX_RESTRICT dst, const float *const *src, size_t channels, size_t blocks);
int mx_onset_block(float block, float before);

/* The spectral stretcher's frame engine (docs/spectral.md): frames of n input frames
 * (periodic Hann), synthesised at a fixed output hop, phases from the phase gradient
 * (PGHI), one phase field for all channels.
 * - mx_pvoc_analyse: the next frame's input, in[c] = n frames of channel c centred on input
 *   frame floor(position + 1/2); `position` is where the frame is centred, which may lie
 *   between frames (on an input decimated by D: a full-rate frame over D), the phases
 *   measured from there. Frames may advance by any amount.
 * - mx_pvoc_synthesise: adds frame s (the number synthesised before it), windowed, to
 *   out[c][0..n); frames up to s + 1 must be analysed (one frame of look-ahead). The caller
 *   overlap-adds at `hop` and divides by mx_pvoc_window_gain. `reset` takes the analysis
 *   phases as they are (a transient).
 * - The analysis of a frame from s + 2 to s + 38 may run on another thread while frame s
 *   is synthesised (a pipeline on two cores; the engine keeps 40 frames); no other two
 *   calls on one engine may overlap.
 * NULL for a bad size, hop (1..n/2) or channel count (1..64), or no memory. */
typedef struct mx_pvoc mx_pvoc;
mx_pvoc *mx_pvoc_create(size_t n, size_t hop, size_t channels);
/* The same with its analysis, synthesis and transforms from `kernels` (mx_kernels_for_isa;
 * every table gives the same samples): for comparing paths. mx_pvoc_create takes
 * mx_kernels_active(). */
mx_pvoc *mx_pvoc_create_with(size_t n, size_t hop, size_t channels, const mx_kernels *kernels);
void mx_pvoc_destroy(mx_pvoc *engine);
void mx_pvoc_analyse(mx_pvoc *MX_RESTRICT engine, const float *const *in, double position);
/* mx_pvoc_analyse with what a time map knows of the frame:
 * - `exact`: where the map puts the frame's centre, unrounded (input frames of the
 *   engine's rate; NaN: `position`). Its hop from the last frame's says whether the frame
 *   is stretched, and so whether an onset ahead of its centre is cut from it: rounded
 *   centres of a stretch by under 1.004 now and then advance by the output's hop.
 * - `onset`: the first onset at or after the frame's centre, input frames (of the engine's
 *   rate; fractional allowed) from the frame's first, n or more for none; NaN: the engine
 *   finds it in `in`. For an engine on a decimated input, whose onsets are found on the
 *   full rate (the decimating filter's pre-ringing starts a sound 1 ms early), with
 *   mx_onset_ahead_of. */
void mx_pvoc_analyse_mapped(mx_pvoc *MX_RESTRICT engine, const float *const *in, double position, double exact,
                            double onset);
/* The first onset at or after the centre of a frame of n frames of channels in[c]
 * (1 to 64): its offset from the frame's first frame, a multiple of MX_ONSET_BLOCK from
 * n/2 on, or n for none; mx_onset_block on the channels' sum by blocks of MX_ONSET_BLOCK,
 * the eight before each as its history (what mx_pvoc_analyse does when stretching).
 * scratch: n / MX_ONSET_BLOCK floats. */
size_t mx_onset_ahead_of(float *MX_RESTRICT scratch, const float *const *in, size_t channels, size_t n);
void mx_pvoc_synthesise(mx_pvoc *MX_RESTRICT engine, float *const *out, int reset);
/* mx_pvoc_synthesise for an engine above a crossover (mx_pvoc_set_band) that also adds the
 * band below it, at 1 minus its gains, to low[c][0..n) (overlap-added as `out`): out + low
 * is the whole band, from this engine's frame alone. Its phases there come from a leader
 * (mx_pvoc_follow) where given and from its own integration elsewhere; a run of such frames
 * should begin at a frame that follows. Used near onsets, where two engines' crossovers
 * would ring round a click unless both weighted it alike. */
void mx_pvoc_synthesise_low(mx_pvoc *MX_RESTRICT engine, float *const *out, float *const *low, int reset);
double mx_pvoc_window_gain(size_t n, size_t hop);
/* Makes the engine synthesise one side of a crossover only: below `split` (above = 0) or
 * above it (above = 1), in cycles per frame (a fraction of the rate, 0 to 0.5), a raised
 * cosine `width` wide across it. Two engines of any sizes split at the same place sum to
 * the whole band. Below, the phases are still made `reach` further up (not sounded), for
 * a follower (mx_pvoc_follow). Call before the first frame; -1 for a split, width or reach
 * out of range. */
int mx_pvoc_set_band(mx_pvoc *engine, int above, double split, double width, double reach);
/* The next frame synthesised takes phases[k] for its bins k below `below` (one per bin: a
 * leader engine's synthesis phases at the same output centre and frequencies, so two
 * engines split at a crossover sum in phase across it), and spreads from them before
 * anything else. A NaN phase (the leader's bin had none of its own) leaves that bin to
 * this engine. */
void mx_pvoc_follow(mx_pvoc *engine, const float *phases, size_t below);
/* Where the next frame synthesised adds, over its n output frames (out's), the part of the
 * overlap-add's window products (synthesis window times analysis window) that its input
 * left out: a frame cut at an onset ahead of its centre, or leaving out its input before
 * one behind it, holds nothing past (before) where the time map puts the cut, so the
 * frames that hold the sound there weigh less than the whole sum the gain divides by.
 * Output frame i of a cut frame adds w[i]^2 where i - n/2 lies past R times the cut's
 * offset from the centre. NULL (the default): nothing is added. The caller owns the
 * buffer and overlap-adds it as `out`. */
void mx_pvoc_set_deficit(mx_pvoc *engine, float *deficit);
/* Whether the caller renormalises by the deficit (mx_pvoc_set_deficit), which alone keeps an
 * onset's level where its frames were cut. Then a compressed frame (the time map's input hop
 * over the output's) is cut at an onset ahead of its centre too, as a stretched one always
 * is, and a reset lands by where its onset begins to sound rather than by its energy's
 * centre. Off by default. */
void mx_pvoc_set_renormalised(mx_pvoc *engine, int renormalised);
/* Where the frames renormalise: an onset's phase reset (a rise in the frame's magnitude,
 * not a reset the caller asks for) takes the analysis phases of every bin below `from`
 * (cycles per frame of the engine's rate, 0 to 1/2), and above it only of the bins whose
 * magnitude at least doubled since the frame before (MX_ONSET_BIN_RISE), through the
 * frames that hold the landing too; the others keep PGHI's. 1/2 (the default): every bin.
 * Call before the first frame; -1 for `from` outside [0, 1/2]. */
int mx_pvoc_set_onset_band(mx_pvoc *engine, double from);
/* The synthesis phases of the last frame synthesised as a frame half as long sees them:
 * dst[m], m < count, the phase of bins 2m - 3 to 2m + 3 summed at their magnitudes and
 * phases, weighted by a Hann kernel at half-bin steps. A bin too quiet to have a phase of
 * its own (given a random one) is left out; NaN where none has one. For a follower half
 * as long (mx_pvoc_follow); valid until the next synthesis. */
void mx_pvoc_phases_halved(const mx_pvoc *engine, float *MX_RESTRICT dst, size_t count);
/* For an engine whose input is a signal decimated by `factor` (a power of two up to
 * MX_ONSET_BLOCK): its onset blocks are MX_ONSET_BLOCK / factor frames (the same time as
 * the full rate's), and a phase reset's landing is rounded to 1 / factor of a frame (a
 * whole frame of the full rate). Call before the first frame; -1 for a bad factor. */
int mx_pvoc_set_decimation(mx_pvoc *engine, size_t factor);

#ifdef __cplusplus
}
#endif
#endif
