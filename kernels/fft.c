/* A radix-2 FFT for analysis (drift estimation's signal search). */
#include "mixdown_kernels.h"
#include <math.h>

static const double mx_two_pi = 6.283185307179586476925286766559;

void mx_fft_twiddles(double *restrict wr, double *restrict wi, size_t n) {
    /* From cos/sin of each exact angle, not by recurrence: the error stays at rounding
     * level for n in the millions. */
    for (size_t k = 0; k < n / 2; k++) {
        wr[k] = cos(mx_two_pi * (double)k / (double)n);
        wi[k] = -sin(mx_two_pi * (double)k / (double)n);
    }
}

void mx_fft(double *restrict re, double *restrict im, size_t n, int inverse,
            const double *restrict wr, const double *restrict wi, size_t table) {
    if (n < 2) return;
    /* Bit-reversal permutation. */
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    const double sign = inverse ? -1.0 : 1.0;
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t half = len >> 1, step = table / len;
        for (size_t s = 0; s < n; s += len) {
            for (size_t k = 0; k < half; k++) {
                double c = wr[k * step], d = sign * wi[k * step];
                size_t a = s + k, b = a + half;
                double xr = re[b] * c - im[b] * d;
                double xi = re[b] * d + im[b] * c;
                re[b] = re[a] - xr; im[b] = im[a] - xi;
                re[a] += xr; im[a] += xi;
            }
        }
    }
}
