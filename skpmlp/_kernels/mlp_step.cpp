// One native pass per model and minibatch step: forward, loss gradient,
// backward, L2 term and optimizer update of a small MLP, for every model of a
// population, over a whole epoch of its fold's batches.
//
// It knows nothing of populations, folds or scikit-learn: buffers and
// offsets in, buffers out. The torch engine (skpmlp/_engine) is the
// reference it is tested against in float64.
//
// Layout (T is float or double; L = VBYTES / sizeof(T) lanes of one vector,
// VBYTES the compile target's vector width, see vector_target.h):
//
//   Samples lie along the vector lanes. A batch of B rows is padded to
//   B_pad (a multiple of L) with zero-weight columns, and every activation
//   tensor is (units, B_pad), row-major. Every layer is then
//       Z^T (n_out, B_pad) = W^T (n_out, n_in) . A^T (n_in, B_pad) + b
//   where the weights are only ever read as broadcast scalars: lanes are
//   always full whatever the widths (5 classes waste nothing), and the
//   parameters can stay in the caller's flat buffer with its own strides.
//
//   Xb      (n_steps, K, F, B_pad)      every fold's batch, transposed
//   Yb      (n_steps, K, B_pad)         class index as T      (loss 0)
//           (n_steps, K, C, B_pad)      targets               (loss 1, 2)
//   Wb      (n_steps, K, B_pad)         row weights, summing to 1 per batch
//   counts, weight_sums  (n_steps, K)   real rows; sum of sample weights
//       (a batch's real rows lie first: a step computes only the columns
//       that hold them, rounded up to whole vectors, see batch_lanes)
//   stepping             (n_steps, K)   whether a fold has a batch
//   step0                (K)            optimizer steps taken before
//       (by the fold; a model that joined later took step0 - H_STEP_OFFSET)
//   params, grads, state1, state2, state3  flat buffers, same layout; model m's
//       layer l weight (k, j) sits at w_off[l] + k * ld[l] + j, its bias j
//       at b_off[l] + j. state1 is Adam's first moment or SGD's momentum
//       buffer, state2 Adam's second moment, state3 AMSGrad's running
//       maximum of it (amsgrad codes only; may be null otherwise).
//   meta    (n_models, META) int64      see the M_* indices below
//   hyper   (n_models, HYPER) double    see the H_* indices below
//   loss_sums (n_slots)                 += each step's batch loss x counts
//   epoch                               the run's epoch of the call's steps
//       (0-based; what a dropout mask hashes with the step, see below)
//
// Modes: 0 trains a whole epoch (every step of the plan), or several epochs
// with their losses and the stopping rule (skp_run_epochs_*, see Epochs); 1 writes the
// gradients of step 0 (no L2 term) into `grads` (nothing for a model whose fold
// sits the step out); 2 applies L2 and the optimizer update of step 0 from
// `grads` (1 then 2 equals one step of 0); 3 is 1 with double's
// transcendentals in vector lanes (VMathF64, a few ulp from the C library),
// for L-BFGS's full-batch evaluations (lbfgs.cpp).
//
// The arithmetic follows torch: softmax cross-entropy / half squared error
// (mean over outputs) / binary log-loss (sum over outputs), each model's
// weighted batch mean; coupled L2 `alpha / weight_sum * W` as scikit-learn's
// MLP; torch.optim.Adam and SGD (momentum, Nesterov) as their fused kernels.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "vector_target.h"
#include "work_queue.h"

// GCC turns the zeroing of a tile's accumulator array into a memset
// (loop distribution), which then keeps the array in memory: a `rep stos`
// of up to a kilobyte at every tile's start (7 % of a weight-gradient
// tile's time). Without that pattern the accumulators start in registers
// (the zeroing loops are also unrolled, for compilers that ignore this),
// and the build takes 43-46 s instead of 60 (docs/user_guide/performance.rst,
// "One hidden layer in one pass"). -DSKP_KEEP_LOOP_PATTERNS keeps it.
#if defined(__GNUC__) && !defined(__clang__) && !defined(SKP_KEEP_LOOP_PATTERNS)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif
//
// For the same reason every fixed-count loop over a tile's register arrays
// (accumulators, broadcast coefficients, LaneSums' tree) carries `#pragma
// GCC unroll`: a loop GCC leaves rolled indexes its array, so the array
// lives on the stack, and each accumulator was stored and loaded again at
// both ends of every tile; in LaneSums' tree, every fold went through
// memory. Unrolled, the library's vector stack accesses fell from 24,007
// to 2,261 instructions, and a narrow population's step from 1.74-1.76 to
// 1.57-1.59 ms (AMD Zen 4, AVX-512, one thread; iris's search 15 % less
// kernel time).

// Which entry points this compile defines: 0 all of them (one object), 1
// the float ones and the library's own (self-test, target, layout), 2 the
// double ones. The float and the double instantiations of the kernel's
// templates are about half of its compile each (31 and 29 of 61 s at -O3,
// Intel Xeon), so skpmlp/_kernels/_build.py compiles parts 1 and 2 side by
// side and links them: a first use's build in half the time on two cores.
#ifndef SKP_PART
#define SKP_PART 0
#endif

namespace {

constexpr int MAX_DEPTH = 8;  // hidden layers
enum Meta {
    M_SLOT = 0, M_DEPTH, M_ACT, M_FOLD, M_SOLVER, M_NESTEROV,
    M_SIZES = 6,                           // MAX_DEPTH + 2 layer sizes
    M_WOFF = M_SIZES + MAX_DEPTH + 2,      // MAX_DEPTH + 1 weight offsets
    M_BOFF = M_WOFF + MAX_DEPTH + 1,       // bias offsets
    M_LD = M_BOFF + MAX_DEPTH + 1,         // weight row strides
    M_DROP_KEY = M_LD + MAX_DEPTH + 1,     // dropout: the model's 32-bit key
    M_DROP_THRESHOLD,                      // and its rate's threshold (0: no dropout)
    META,
};
enum Hyper {
    H_LR = 0, H_ALPHA, H_BETA1, H_BETA2, H_EPS, H_MOMENTUM, H_STEP_OFFSET, H_SMOOTHING, H_DROP_SCALE, HYPER = 9
};
enum Loss { LOSS_SOFTMAX = 0, LOSS_SQUARED = 1, LOSS_LOGISTIC = 2 };
enum Act {
    A_IDENTITY = 0, A_LOGISTIC, A_TANH, A_RELU, A_ELU, A_SELU, A_GELU, A_LEAKY, A_HARDSHRINK, A_MISH,
};

using namespace skp;  // the target's vectors and tiles (vector_target.h)

// ----------------------------------------------------------------- math
// Every activation works on whole vectors of lanes. float: exp by
// Cody-Waite reduction and a degree-6 polynomial (about 2 ulp), tanh and
// GELU's erfc from it, and division as the CPU's reciprocal estimate
// refined by one Newton step (about 1 ulp; a vector division is 10-20x
// slower where AVX-512 has the estimate); double: the C library lane by
// lane and true division, so the float64 build agrees with torch to
// rounding.
#define SKP_INLINE SKP_FORCE_INLINE  // vector_target.h's always-inline
template <class T> struct VMath;

constexpr double SELU_ALPHA = 1.6732632423543772848170429916717;
constexpr double SELU_SCALE = 1.0507009873554804934193349852946;
constexpr double SQRT1_2 = 0.70710678118654752440;
constexpr double INV_SQRT_2PI = 0.39894228040143267794;

// GELU and its derivative from M's erf: y = x Phi(x), dy = Phi(x) + x phi(x)
// with Phi(x) = (1 + erf(x / sqrt 2)) / 2; exp(-x^2 / 2) is phi's. The
// double maths' form (erf the C library's); float has its own, below.
template <class T, class M> SKP_INLINE void gelu_by_erf(typename M::V x, typename M::V& y, typename M::V& dy) {
    typedef typename M::V V;
    const V pdf_exp = M::exp(T(-0.5) * x * x);
    const V cdf = T(0.5) * (M::splat(1) + M::erf(x * T(SQRT1_2)));
    y = x * cdf;  // equals 0.5 x (1 + erf) exactly: halving is exact
    dy = cdf + x * T(INV_SQRT_2PI) * pdf_exp;
}

// Whether the float vectors are AVX-512's (its 512-bit registers, or its
// 256-bit ones with AVX512VL): where the CPU's 14-bit reciprocal estimate
// makes a division a few multiply-adds (VMath<float>::recip, AdamRun).
#if defined(__AVX512F__) && (SKP_VBYTES == 64 || (SKP_VBYTES == 32 && defined(__AVX512VL__)))
#define SKP_AVX512_FLOATS 1
#else
#define SKP_AVX512_FLOATS 0
#endif

template <> struct VMath<float> {
    typedef VT<float>::V V;
    typedef int32_t vint __attribute__((vector_size(VBYTES)));
    static SKP_INLINE V splat(float x) { return vsplat<float>(x); }
    static SKP_INLINE V recip(V d) {
        // AVX-512's 14-bit estimate refined by one Newton step (about
        // 1 ulp); elsewhere true division (correctly rounded): AVX's and
        // SSE's 12-bit estimate with one Newton step (about 2 ulp) measured
        // no faster than division on AMD Zen 4 (benchmarks/tiles.py);
        // NEON's 8-bit one needs two steps and was not timed
#if SKP_AVX512_FLOATS && SKP_VBYTES == 64
        const V r = (V)_mm512_rcp14_ps((__m512)d);
        return r * (2.0f - d * r);
#elif SKP_AVX512_FLOATS
        const V r = (V)_mm256_rcp14_ps((__m256)d);
        return r * (2.0f - d * r);
#else
        return 1.0f / d;
#endif
    }
    static SKP_INLINE V div(V a, V b) { return a * recip(b); }
    static SKP_INLINE V exp(V x) { return exp_in_range(vmin(splat(88.0f), vmax(splat(-87.0f), x))); }
    // exp of x in [-87, 88]
    static SKP_INLINE V exp_in_range(V x) {
        // n = round(x / ln 2) by the 1.5 * 2^23 trick (round to nearest)
        const V shifter = splat(12582912.0f);
        const V n = (x * 1.44269504f + shifter) - shifter;
        const V r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
        V p = splat(1.0f / 720);
        p = p * r + 1.0f / 120;
        p = p * r + 1.0f / 24;
        p = p * r + 1.0f / 6;
        p = p * r + 0.5f;
        p = p * r + 1.0f;
        p = p * r + 1.0f;
        // p 2^n: AVX-512's scalef is one op for the conversion, add, shift
        // and multiply (exact either way: the same bits), GELU 0.503 ->
        // 0.481 and logistic 0.249 -> 0.241 ns a value (Zen 4)
#if SKP_AVX512_FLOATS && SKP_VBYTES == 64
        return (V)_mm512_scalef_ps((__m512)p, (__m512)n);
#elif SKP_AVX512_FLOATS
        return (V)_mm256_scalef_ps((__m256)p, (__m256)n);
#else
        const vint bits = (__builtin_convertvector(n, vint) + 127) << 23;  // 2^n
        return p * reinterpret_cast<const V&>(bits);
#endif
    }
    // natural log of positive normal x: Cephes' logf (exponent split,
    // mantissa in [sqrt(1/2), sqrt(2)), degree-9 polynomial; about 1 ulp)
    static SKP_INLINE V log(V x) {
        const vint bits = reinterpret_cast<const vint&>(x);
        vint e = ((bits >> 23) & 0xff) - 127;
        const vint mbits = (bits & 0x7fffff) | 0x3f800000;
        V m = reinterpret_cast<const V&>(mbits);  // [1, 2)
        const auto high = m > splat(1.41421356f);
        m = high ? m * 0.5f : m;
        e = high ? e + 1 : e;
        const V ef = __builtin_convertvector(e, V);
        const V f = m - 1.0f, z = f * f;
        V p = splat(7.0376836292e-2f);
        p = p * f - 1.1514610310e-1f;
        p = p * f + 1.1676998740e-1f;
        p = p * f - 1.2420140846e-1f;
        p = p * f + 1.4249322787e-1f;
        p = p * f - 1.6668057665e-1f;
        p = p * f + 2.0000714765e-1f;
        p = p * f - 2.4999993993e-1f;
        p = p * f + 3.3333331174e-1f;
        V y = p * f * z + ef * -2.12194440e-4f - 0.5f * z;
        return f + y + ef * 0.693359375f;
    }
    static SKP_INLINE V tanh(V x) {
        // x P(x^2) / Q(x^2) on [-9, 9] (tanh(9) rounds to 1), a rational
        // least-squares fit of relative error 2e-8 (6 ulp in float32
        // arithmetic): 15 vector ops against 28 of the exp-based form
        x = vmin(splat(9.0f), vmax(splat(-9.0f), x));
        const V s = x * x;
        V p = splat(1.3354053e-08f);
        p = p * s + 2.0608621e-05f;
        p = p * s + 3.4955596e-03f;
        p = p * s + 1.3381001e-01f;
        p = p * s + 1.0f;
        V q = splat(7.7763013e-07f);
        q = q * s + 3.2855885e-04f;
        q = q * s + 2.5876874e-02f;
        q = q * s + 4.6714318e-01f;
        q = q * s + 1.0f;
        const V t = div(x * p, q);
        return vmin(splat(1.0f), vmax(splat(-1.0f), t));
    }
    // GELU and its derivative: Phi(x) = 0.5 erfc(-x / sqrt 2), its tail
    // q = 0.5 erfc(|x| / sqrt 2) by Abramowitz & Stegun 7.1.26 (erfc(a) =
    // t P(t) exp(-a^2), t = 1 / (1 + 0.3275911 a), |error| < 1.5e-7) with
    // the 0.5 in P's coefficients, so Phi is q or 1 - q (no 1 + erf
    // cancelling for x < 0); exp(-x^2 / 2), the density's, serves both.
    // 22 multiplies and multiply-adds a vector against 24 of 0.5 x (1 +
    // erf(x / sqrt 2)) and the same worst errors against the C library
    // (4e-7 for GELU, 3e-7 for its derivative over [-10, 10]): 0.93 -> 0.82
    // ns a value (AVX2), 2.74 -> 2.45 (SSE4.2; benchmarks/vector_math.py)
    static SKP_INLINE void gelu(V x, V& y, V& dy) {
        const V u = x * float(SQRT1_2);
        const V e = exp_in_range(vmax(splat(-87.0f), -(u * u)));
        const V t = recip(1.0f + 0.3275911f * (u < 0 ? -u : u));
        V p = splat(0.5f * 1.061405429f);
        p = p * t - 0.5f * 1.453152027f;
        p = p * t + 0.5f * 1.421413741f;
        p = p * t - 0.5f * 0.284496736f;
        p = p * t + 0.5f * 0.254829592f;
        const V q = p * t * e;
        const V cdf = x < 0 ? q : 1.0f - q;
        y = x * cdf;
        dy = cdf + x * float(INV_SQRT_2PI) * e;  // Phi + x phi
    }
};

template <> struct VMath<double> {
    typedef VT<double>::V V;
    static SKP_INLINE V splat(double x) { return vsplat<double>(x); }
    static SKP_INLINE V recip(V d) { return 1.0 / d; }
    static SKP_INLINE V div(V a, V b) { return a / b; }
    template <class F> static V lanewise(V x, F f) {
        for (int i = 0; i < VT<double>::L; ++i) x[i] = f(x[i]);
        return x;
    }
    static V exp(V x) { return lanewise(x, [](double v) { return std::exp(v); }); }
    static V tanh(V x) { return lanewise(x, [](double v) { return std::tanh(v); }); }
    static V erf(V x) { return lanewise(x, [](double v) { return std::erf(v); }); }
    static SKP_INLINE void gelu(V x, V& y, V& dy) { gelu_by_erf<double, VMath<double>>(x, y, dy); }
};

// double in vector lanes (mode 3 only, for L-BFGS's full-batch
// evaluations): exp by Cody-Waite reduction and its degree-13 Taylor
// polynomial, tanh from an expm1 that is relatively exact near 0, both
// within a few ulp of the C library and 10-20x faster than it lane by lane.
// erf stays the C library's.
struct VMathF64 {
    typedef VT<double>::V V;
    typedef int64_t vlong __attribute__((vector_size(VBYTES)));
    static SKP_INLINE V splat(double x) { return vsplat<double>(x); }
    static SKP_INLINE V recip(V d) { return 1.0 / d; }
    static SKP_INLINE V div(V a, V b) { return a / b; }
    // sum of r^(n - low) / n! for n from low to high (the Taylor series of
    // exp and expm1) by Estrin's scheme: neighbouring terms paired, a_n +
    // a_(n+1) r, then the pairs with r^2, those pairs with r^4, ... Horner's
    // rule was one chain of 13 dependent multiply-adds a vector; here the
    // chain is 4 deep, the powers of r beside it: tanh and logistic 4-9 %
    // less time a value with FMA (AVX2), 25-35 % without it (SSE4.2, where
    // each step of the chain is a multiply and an add), the same worst
    // error against the C library (2.2e-16 over [-6, 6]).
    template <int high, int low> static SKP_INLINE V taylor(V r) {
        constexpr double inverse_factorial[] = {
            1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0,
            1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0,
            1.0 / 87178291200.0};
        constexpr int terms = high - low + 1;
        static_assert(terms >= 1 && high < int(sizeof(inverse_factorial) / sizeof(double)), "series");
        V c[terms];
        for (int j = 0; j < terms; ++j) c[j] = splat(inverse_factorial[low + j]);
        V power = r;  // r^(2^level)
        for (int n = terms; n > 1; n = (n + 1) / 2) {
            for (int j = 0; j < n / 2; ++j) c[j] = c[2 * j] + c[2 * j + 1] * power;
            if (n % 2) c[n / 2] = c[n - 1];
            if (n > 2) power = power * power;
        }
        return c[0];
    }
    // x = k ln 2 + r with |r| <= ln 2 / 2 (x well inside double's range):
    // k = round(x / ln 2) by the 1.5 * 2^52 trick, as an integer from the
    // bits (the shifted value and the shifter share an exponent, so their
    // bit patterns differ by k: no double -> int64 conversion instruction
    // is needed, AVX2 and SSE have none), r in two parts of ln 2
    static SKP_INLINE V reduce(V x, vlong& k) {
        const V shifter = splat(6755399441055744.0);
        const V shifted = x * 1.4426950408889634 + shifter;
        const V n = shifted - shifter;
        k = reinterpret_cast<const vlong&>(shifted) - reinterpret_cast<const vlong&>(shifter);
        return (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    }
    static SKP_INLINE V exp(V x) {
        // beyond the clamps: +inf above, 0 below the smallest normal number
        // (where the C library returns subnormals)
        const auto over = x > splat(709.782712893384), under = x < splat(-708.3964185322641);
        V c = over ? splat(709.0) : x;
        c = under ? splat(-708.0) : c;
        vlong k;
        const V r = reduce(c, k);
        const V p = taylor<13, 0>(r);  // e^r
        // 2^k in two normal halves: k runs from -1022 to 1024
        const vlong half = k >> 1;
        const vlong bits1 = (half + 1023) << 52, bits2 = (k - half + 1023) << 52;
        const V y_ = p * reinterpret_cast<const V&>(bits1) * reinterpret_cast<const V&>(bits2);
        V y = y_;
        y = over ? splat(HUGE_VAL) : y;
        return under ? V{} : y;
    }
    // e^y - 1 for y <= 0, relatively exact where it is small: y = k ln 2 + r
    // with |r| <= ln 2 / 2, e^y - 1 = 2^k (e^r - 1) + (2^k - 1), and e^r - 1
    // by its Taylor series through r^14 / 14!. One series for every lane:
    // a series for y > -0.5 and exp(y) - 1 below, selected, computed both
    // in every lane (float64 tanh was a fifth of an L-BFGS search's time).
    // Below -60 it is -1 (e^-60 is under half an ulp of 1).
    static SKP_INLINE V expm1_neg(V y) {
        y = vmax(splat(-60.0), y);
        vlong k;
        const V r = reduce(y, k);
        const V q = taylor<14, 2>(r);  // (e^r - 1 - r) / r^2
        const V em1 = r + (r * r) * q;
        const vlong bits = (k + 1023) << 52;  // 2^k, k from -87 to 0
        const V scale = reinterpret_cast<const V&>(bits);
        return scale * em1 + (scale - 1.0);
    }
    static SKP_INLINE V tanh(V x) {
        // tanh |x| = -u / (u + 2) with u = e^(-2|x|) - 1
        const V ax = x < 0 ? -x : x;
        const V u = expm1_neg(-2.0 * ax);
        const V t = -u / (u + 2.0);
        return x < 0 ? -t : (x > 0 ? t : x);  // tanh(+-0) = +-0, NaN stays
    }
    static V erf(V x) { return VMath<double>::erf(x); }
    static SKP_INLINE void gelu(V x, V& y, V& dy) { gelu_by_erf<double, VMathF64>(x, y, dy); }
};

// The math of mode 3: vector lanes for double, the usual for float.
template <class T> struct VectorMath { typedef VMath<T> M; };
template <> struct VectorMath<double> { typedef VMathF64 M; };

// y = f(x) and dy = f'(x) for one vector of lanes.
template <class T, int act, class M>
SKP_INLINE void activation_pair(typename M::V x, typename M::V& y, typename M::V& dy) {
    typedef typename M::V V;
    const V zero{}, one = M::splat(1);
    switch (act) {  // a compile-time constant: no branch in the loop
    case A_IDENTITY: y = x, dy = one; break;
    case A_LOGISTIC: y = M::recip(one + M::exp(-x)), dy = y * (one - y); break;
    case A_TANH: y = M::tanh(x), dy = one - y * y; break;
    case A_RELU: y = vmax(x, zero), dy = x > zero ? one : zero; break;
    case A_ELU: y = x > zero ? x : M::exp(x) - one, dy = x > zero ? one : y + one; break;
    case A_SELU:
        y = T(SELU_SCALE) * (x > zero ? x : T(SELU_ALPHA) * (M::exp(x) - one));
        dy = x > zero ? M::splat(SELU_SCALE) : y + T(SELU_SCALE * SELU_ALPHA);
        break;
    case A_GELU: M::gelu(x, y, dy); break;
    case A_LEAKY: y = x > zero ? x : T(0.01) * x, dy = x > zero ? one : M::splat(0.01); break;
    case A_HARDSHRINK: {
        const auto keep = (x > M::splat(0.5)) | (x < M::splat(-0.5));
        y = keep ? x : zero, dy = keep ? one : zero;
        break;
    }
    case A_MISH: {
        // tanh(softplus(z)) = e (e + 2) / (e (e + 2) + 2), e = exp(z);
        // mish' = tsp + z sech^2(sp) sigmoid(z), sp = softplus(z)
        const V big = M::splat(20);
        const V e = M::exp(vmin(x, big));
        const V q = e * (e + T(2));
        const V tsp = M::div(q, q + T(2));
        y = x * (x >= big ? one : tsp);
        dy = x >= big ? one : tsp + x * (one - tsp * tsp) * M::div(e, one + e);
        break;
    }
    default: y = x, dy = one;
    }
}

// Whether f'(z) is a function of f(z) that the backward recomputes from the
// activation (as the forward computes it: tanh' = 1 - y^2, ...): every
// activation but GELU and Mish, whose forward then stores f'(z) too.
constexpr bool derivative_from_output(int act) { return act != A_GELU && act != A_MISH; }

// Whether the activation is a few instructions, applied in the matmul's
// registers; the others (exp, division) run over each block of rows after
// it, U vectors at a time: inside the tile their constants and temporaries
// would push the accumulators out of the registers.
constexpr bool cheap_activation(int act) {
    return act == A_IDENTITY || act == A_RELU || act == A_LEAKY || act == A_HARDSHRINK;
}

// a = f(z) over n values (n a multiple of the lanes), and z overwritten by
// f'(z) where the backward cannot recompute it from a.
template <class T, int act, class M = VMath<T>> void activate_as(T* z, T* a, long n) {
    typedef typename M::V V;
    // U vectors at a time: their long dependency chains (exp, division)
    // are independent, so the core overlaps them. float's functions are
    // short enough for four in flight (tanh 12 %, logistic 14-18 % less
    // time a value than two, AVX2 and SSE4.2); double's longer ones, two.
    constexpr int L = VT<T>::L, U = sizeof(T) == 4 ? 4 : 2;
    long i = 0;
    for (; i + U * L <= n; i += U * L) {
        V y[U], dy[U];
        for (int u = 0; u < U; ++u) activation_pair<T, act, M>(vload(z + i + u * L), y[u], dy[u]);
        for (int u = 0; u < U; ++u) {
            vstore(a + i + u * L, y[u]);
            if constexpr (!derivative_from_output(act)) vstore(z + i + u * L, dy[u]);
        }
    }
    for (; i < n; i += L) {
        V y, dy;
        activation_pair<T, act, M>(vload(z + i), y, dy);
        vstore(a + i, y);
        if constexpr (!derivative_from_output(act)) vstore(z + i, dy);
    }
}

// The activation is a template argument, so each loop is branch-free.
#define SKP_ACTIVATION_CASES(CALL)                                                            \
    switch (act) {                                                                             \
    case A_IDENTITY: CALL(A_IDENTITY); break;                                                  \
    case A_LOGISTIC: CALL(A_LOGISTIC); break;                                                  \
    case A_TANH: CALL(A_TANH); break;                                                          \
    case A_RELU: CALL(A_RELU); break;                                                          \
    case A_ELU: CALL(A_ELU); break;                                                            \
    case A_SELU: CALL(A_SELU); break;                                                          \
    case A_GELU: CALL(A_GELU); break;                                                          \
    case A_LEAKY: CALL(A_LEAKY); break;                                                        \
    case A_HARDSHRINK: CALL(A_HARDSHRINK); break;                                              \
    case A_MISH: CALL(A_MISH); break;                                                          \
    }

template <class T, class M = VMath<T>> void activate(int act, T* z, T* a, long n) {
#define SKP_CALL(CODE) activate_as<T, CODE, M>(z, a, n)
    SKP_ACTIVATION_CASES(SKP_CALL)
#undef SKP_CALL
}

// ------------------------------------------------------- register tiles
// out[r][v] = bias[r] + sum_t coef[r * rs + t * ts] * in[t][v] for MR rows
// and NVB vectors of lanes: MR x NVB accumulators stay in registers while
// the inner dimension t streams. Each finished accumulator goes to
// store(offset, acc), offset its place in the (rows, ld) output: the store
// is where a layer's epilogue runs on registers (a cheap activation in the
// forward, f'(z) in the backward), so that no pass stores the product and
// loads it back.
template <class T, int MR, int NVB, class Store>
inline void tile_mm(int n_t, const T* __restrict coef, long rs, long ts, const T* __restrict in, long out_off,
                    long ld, const T* bias, const Store& store) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    V acc[MR][NVB];
#pragma GCC unroll 64  // acc in registers: see the top of the file
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 64
        for (int u = 0; u < NVB; ++u) acc[r][u] = vsplat<T>(bias ? bias[r] : T(0));
    for (int t = 0; t < n_t; ++t) {
        V x[NVB];
        // kept: see vload_kept; the broadcast coefficients are not (a
        // broadcast from a register takes the shuffle port, see vsplat)
        for (int u = 0; u < NVB; ++u) x[u] = vload_kept(in + t * ld + u * L);
        for (int r = 0; r < MR; ++r) {
            const V c = vsplat<T>(coef[r * rs + t * ts]);
            for (int u = 0; u < NVB; ++u) acc[r][u] += c * x[u];
        }
    }
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 64
        for (int u = 0; u < NVB; ++u) store(out_off + r * ld + u * L, acc[r][u]);
}

template <class T, int MR, class Store>
inline void rows_mm(int n_t, const T* coef, long rs, long ts, const T* in, long out_off, long ld, int nv,
                    const T* bias, const Store& store) {
    constexpr int L = VT<T>::L;
    balanced_tiles<tiles::MM_VECS>(nv, [&](int v, auto n) {
        tile_mm<T, MR, decltype(n)::value>(n_t, coef, rs, ts, in + v * L, out_off + v * L, ld, bias, store);
    });
}

// The matmul where the inner dimension is a few values (NT: a narrow
// layer's inputs in the forward, its outputs in the backward). Each of the
// tile's MR x NT coefficients is broadcast into a register once, and the
// tile then streams every vector of lanes: where tile_mm broadcasts each
// coefficient again for every MM_VECS vectors, here the loads per output
// vector are the NT input vectors shared by the MR rows. The sum runs in
// tile_mm's order (the bias, then t = 0, 1, ...), so the outputs are
// bit for bit the same.
template <class T, int NT, int MR, class Store>
inline void tile_narrow(const T* __restrict coef, long rs, long ts, const T* __restrict in, long out_off, long ld,
                        int nv, const T* bias, const Store& store) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    V c[MR][NT], b[MR];
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r) {
        b[r] = vsplat<T>(bias ? bias[r] : T(0));
#pragma GCC unroll 64
        for (int t = 0; t < NT; ++t) c[r][t] = vsplat<T>(coef[r * rs + t * ts]);
    }
    for (int v = 0; v < nv; ++v) {
        V x[NT];
        for (int t = 0; t < NT; ++t) x[t] = vload(in + t * ld + v * L);
        // unrolled, or GCC keeps the loop (its body holds the store's
        // switch) and moves c and b to the stack, to load them again for
        // every vector: 1.04-1.08x a narrow population's step on AVX-512
        // (1.02x on AVX2)
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
            V acc = b[r];
            for (int t = 0; t < NT; ++t) acc += c[r][t] * x[t];
            store(out_off + r * ld + v * L, acc);
        }
    }
}

// Rows per narrow tile: the coefficients, the biases and the NT inputs in
// registers, with SKP_NARROW_SPARE left for the store's epilogue (at most
// the matmul's rows). 16 registers leave 2: with 6, a tile of 3 or 4
// inputs held one row, each row loading the inputs again, and the narrow
// population (4 features, 3 classes) took 2.94-3.12 ms a step against
// 2.74-2.79 ms with 2 (AVX2, one thread, benchmarks/tiles.py --population
// narrow --variants "" "SKP_NARROW_SPARE=2"); SSE4.2 within its noise
// (6.47-6.79 against 6.41 ms). 32 registers keep the 6 they were timed
// with (AVX-512: 4 and 5 rows for 4 and 3 inputs).
#ifndef SKP_NARROW_SPARE
#define SKP_NARROW_SPARE (VREGS >= 32 ? 6 : 2)
#endif
template <int NT> constexpr int narrow_rows() {
    const int rows = (VREGS - (SKP_NARROW_SPARE) - NT) / (NT + 1);
    return rows < 1 ? 1 : (rows > tiles::MM_ROWS ? tiles::MM_ROWS : rows);
}

// Inner dimensions up to this take tile_narrow (0: none).
#ifndef SKP_NARROW_MAX
#define SKP_NARROW_MAX 4
#endif
constexpr int NARROW_MAX = SKP_NARROW_MAX;

template <class T, int NT, class Store>
void matmul_narrow(int n_rows, const T* coef, long rs, long ts, const T* in, long ld, int nv, const T* bias,
                   const Store& store) {
    balanced_tiles<narrow_rows<NT>()>(n_rows, [&](int r, auto n) {
        tile_narrow<T, NT, decltype(n)::value>(coef + r * rs, rs, ts, in, r * ld, ld, nv, bias ? bias + r : nullptr,
                                               store);
    });
}

// (n_rows, ld) outputs = coef (n_rows x n_t, strides rs / ts) . in (n_t, ld) + bias,
// each output vector handed to store(offset, value).
template <class T, class Store>
void matmul_lanes(int n_rows, int n_t, const T* coef, long rs, long ts, const T* in, long ld, int nv,
                  const T* bias, const Store& store) {
    if (NARROW_MAX > 0 && n_t <= NARROW_MAX) {
        with_count<NARROW_MAX>(n_t, [&](auto nt) {
            matmul_narrow<T, decltype(nt)::value>(n_rows, coef, rs, ts, in, ld, nv, bias, store);
        });
        return;
    }
    balanced_tiles<tiles::MM_ROWS>(n_rows, [&](int r, auto n) {
        rows_mm<T, decltype(n)::value>(n_t, coef + r * rs, rs, ts, in, r * ld, ld, nv, bias ? bias + r : nullptr,
                                       store);
    });
}

// The epilogues (the stores of matmul_lanes).
// The product itself: out[offset] = value.
template <class T> struct StoreProduct {
    T* out;
    SKP_INLINE void operator()(long o, typename VT<T>::V v) const { vstore(out + o, v); }
};

// A hidden layer's forward: a = f(z), and f'(z) into dz where the backward
// cannot recompute it from a.
template <class T, int act, class M> struct StoreActivation {
    T* a;
    T* dz;
    SKP_INLINE void operator()(long o, typename VT<T>::V z) const {
        typename M::V y, dy;
        activation_pair<T, act, M>(z, y, dy);
        vstore(a + o, y);
        if constexpr (!derivative_from_output(act)) vstore(dz + o, dy);
    }
};

// A cheap activation's value (ReLU, leaky ReLU, hardshrink, identity),
// chosen at run time (the branch is the same for a whole layer, so it is
// predicted)
template <class T> SKP_INLINE typename VT<T>::V cheap_activation_of(int act, typename VT<T>::V z) {
    typename VMath<T>::V y = z, dy;
    switch (act) {
    case A_RELU: activation_pair<T, A_RELU, VMath<T>>(z, y, dy); break;
    case A_LEAKY: activation_pair<T, A_LEAKY, VMath<T>>(z, y, dy); break;
    case A_HARDSHRINK: activation_pair<T, A_HARDSHRINK, VMath<T>>(z, y, dy); break;
    default: break;  // identity
    }
    return y;
}

// StoreActivation of the cheap activations, chosen per store (one
// instantiation of the matmul's tiles for all of them)
template <class T> struct StoreCheapActivation {
    T* a;
    int act;
    SKP_INLINE void operator()(long o, typename VT<T>::V z) const { vstore(a + o, cheap_activation_of<T>(act, z)); }
};

// f'(z) from y = f(z) where the output gives it, the same values
// activation_pair gives.
template <class T, int act> SKP_INLINE typename VT<T>::V derivative_of_output(typename VT<T>::V y) {
    typedef typename VT<T>::V V;
    const V zero{}, one = vsplat<T>(1);
    switch (act) {
    case A_LOGISTIC: return y * (one - y);
    case A_TANH: return one - y * y;
    case A_ELU: return y > zero ? one : y + one;
    case A_SELU: return y > zero ? vsplat<T>(T(SELU_SCALE)) : y + T(SELU_SCALE * SELU_ALPHA);
    case A_LEAKY: return y > zero ? one : vsplat<T>(T(0.01));
    default: return one;  // identity; ReLU and hardshrink select instead
    }
}

// f'(z) from y = f(z) and from dz, the same values activation_pair gives.
template <class T, int act>
SKP_INLINE typename VT<T>::V derivative_at(const T* a, const T* dz, long o) {
    if constexpr (!derivative_from_output(act)) {
        return vload(dz + o);
    } else {
        return derivative_of_output<T, act>(vload(a + o));
    }
}

// A hidden layer's delta at offset o: g (W . delta_next) * f'(z). ReLU and
// hardshrink select, as torch's backward does, so that a non-finite
// gradient stays masked where the unit is off (f(z) = 0 exactly there).
template <class T, int act>
SKP_INLINE typename VT<T>::V delta_at(typename VT<T>::V g, const T* a, const T* dz, long o) {
    typedef typename VT<T>::V V;
    const V zero{};
    if constexpr (act == A_IDENTITY) {
        return g;
    } else if constexpr (act == A_RELU) {
        return vload(a + o) > zero ? g : zero;
    } else if constexpr (act == A_HARDSHRINK) {
        return vload(a + o) != zero ? g : zero;
    } else {
        return g * derivative_at<T, act>(a, dz, o);
    }
}

// A hidden layer's backward: delta = (W . delta_next) * f'(z), stored.
template <class T, int act> struct StoreDelta {
    T* out;
    const T* a;
    const T* dz;
    SKP_INLINE void operator()(long o, typename VT<T>::V g) const { vstore(out + o, delta_at<T, act>(g, a, dz, o)); }
};

// delta_at with the activation chosen at run time (the branch is the same
// for a whole layer, so it is predicted)
template <class T>
SKP_INLINE typename VT<T>::V delta_of(int act, typename VT<T>::V g, const T* a, const T* dz, long o) {
#define SKP_CALL(CODE) return delta_at<T, CODE>(g, a, dz, o)
    SKP_ACTIVATION_CASES(SKP_CALL)
#undef SKP_CALL
    return g;
}

// StoreDelta with the activation chosen per store (one instantiation of
// the matmul's tiles for all activations; the branch is the same for a
// whole layer, so it is predicted)
template <class T> struct StoreDeltaOf {
    T* out;
    const T* a;
    const T* dz;
    int act;
    SKP_INLINE void operator()(long o, typename VT<T>::V g) const {
#define SKP_CALL(CODE) StoreDelta<T, CODE>{out, a, dz}(o, g)
        SKP_ACTIVATION_CASES(SKP_CALL)
#undef SKP_CALL
    }
};

// ------------------------------------------------------------- dropout
// Per-model inverted dropout, the masks of skpmlp/_engine/_dropout.py: a
// counter-based hash of (model key, epoch, step, hidden layer, row, unit)
// to 32 bits h, the unit kept where h >= threshold = ceil(p 2^32) and then
// scaled by 1 / (1 - p). The Python side computes it exactly in int64;
// uint32_t arithmetic wraps to the same bits.
// (SKP_MIX32 hashes x in place: a uint32_t, or a vector of them, each lane
// alike; a template would lose the vector type in GCC's deduction)
#define SKP_MIX32(x) (x ^= x >> 16, x *= 0x7FEB352Du, x ^= x >> 15, x *= 0x2C1B3C6Du, x ^= x >> 16)
SKP_INLINE uint32_t mix32(uint32_t x) {
    SKP_MIX32(x);
    return x;
}

// A model's key after absorbing the epoch and the step within it
// (_dropout.step_keys): every mask of that step hashes from it.
SKP_INLINE uint32_t dropout_step_key(uint32_t key, long epoch, long step) {
    return mix32(mix32(key ^ uint32_t(epoch)) ^ uint32_t(step));
}

// The state of a (layer, row) before the unit's round (_dropout.unit_hashes).
SKP_INLINE uint32_t dropout_row_state(uint32_t step_key, int layer, long row) {
    return mix32(mix32(step_key ^ uint32_t(layer)) ^ uint32_t(row));
}

// A dropout model's masking: a unit is kept (and scaled by `keep`) where
// its hash reaches t; a threshold of 2^32 keeps nothing (t 0, keep 0). A
// model's own: model_masking.
template <class T> struct DropoutMasking {
    uint32_t t;
    T keep;
    DropoutMasking(uint64_t threshold = 0, T scale = T(0))
        : t(threshold > 0xFFFFFFFFull ? 0 : uint32_t(threshold)), keep(threshold > 0xFFFFFFFFull ? T(0) : scale) {}
};

// The masks of a unit for L rows at once (row_state: the rows'
// dropout_row_state, a row a lane): keep where mix32(state ^ unit) reaches
// t, else 0, in T's lanes.
template <class T>
SKP_INLINE typename VT<T>::V dropout_mask_lanes(const uint32_t* row_state, uint32_t unit,
                                                const DropoutMasking<T>& masking) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    typedef uint32_t U __attribute__((vector_size(L * 4)));
    typedef typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type I;
    typedef I Mask __attribute__((vector_size(L * sizeof(T))));
    U x;
    std::memcpy(&x, row_state, sizeof(U));
    x ^= unit;
    SKP_MIX32(x);
    const Mask kept = __builtin_convertvector(x >= masking.t, Mask);
    return kept ? vsplat<T>(masking.keep) : V{};
}

// Whether a dropout step's backward of the activation selects (ReLU and
// hardshrink, as delta_at): then the forward stores one gate a unit and
// row, not its mask and f'(z) (dropout_gate).
constexpr bool dropout_selects(int act) { return act == A_RELU || act == A_HARDSHRINK; }

// The gate of a selecting activation's unit (dropout_selects) from y = f(z)
// and the unit's mask mk: mk where the unit is on (f'(z) = 1), -1 where it
// is off. dropout_delta's (gate >= 0 ? g * gate : 0) is then torch's
// backward of h = f(z) * mask bit for bit, a non-finite g included: g * mask
// where the unit is on (dropped or not), 0 where it is off.
template <class T> SKP_INLINE typename VT<T>::V dropout_gate(int act, typename VT<T>::V y, typename VT<T>::V mk) {
    typedef typename VT<T>::V V;
    const V zero{};
    const auto on = act == A_RELU ? y > zero : y != zero;
    return on ? mk : vsplat<T>(T(-1));
}

// A dropout step's hidden unit at offset o after y = f(z) of a cheap
// activation (chosen at run time) and its mask mk: the masked activation h
// = y * mk returned for the caller to store, and what the backward needs
// stored beside it: the gate of a selecting activation (into dz), else the
// mask and f'(z) (derivative_of_output's; identity's 1).
template <class T>
SKP_INLINE typename VT<T>::V drop_cheap_activation(int act, typename VT<T>::V y, typename VT<T>::V mk, T* dz,
                                                   T* mask, long o) {
    if (dropout_selects(act)) {
        vstore(dz + o, dropout_gate<T>(act, y, mk));
    } else {
        vstore(mask + o, mk);
        vstore(dz + o, act == A_LEAKY ? derivative_of_output<T, A_LEAKY>(y) : vsplat<T>(T(1)));
    }
    return y * mk;
}

// A dropout model's hidden delta at offset o: (g * mask) * f'(z), in torch
// autograd's order for h = f(z) * mask; for a selecting activation, its
// gate's select (dropout_gate).
template <class T>
SKP_INLINE typename VT<T>::V dropout_delta(int act, typename VT<T>::V g, const T* mask, const T* dz, long o) {
    typedef typename VT<T>::V V;
    const V zero{};
    if (dropout_selects(act)) {
        const V gate = vload(dz + o);
        return gate >= zero ? g * gate : zero;
    }
    return (g * vload(mask + o)) * vload(dz + o);
}

// A dropout step's hidden layer with a cheap activation, in the matmul's
// registers: h = f(z) * mask into a, and the gate or the mask and f'(z)
// (drop_cheap_activation). The store's offset o = unit * ld + lane gives
// the unit and the lanes' dropout_row_state by a multiplication by 1 / ld,
// not a division: o + L / 2 lies at least L / 2 from a multiple of ld,
// far beyond the product's rounding for any layer that fits in memory.
template <class T> struct StoreDroppedCheapActivation {
    T *a, *dz, *mask;
    const uint32_t* row_state;
    DropoutMasking<T> masking;
    int act;
    long ld;
    double inv_ld = 1.0 / double(ld);
    SKP_INLINE void operator()(long o, typename VT<T>::V z) const {
        const long unit = long((double(o) + 0.5 * VT<T>::L) * inv_ld), lane = o - unit * ld;
        const auto mk = dropout_mask_lanes<T>(row_state + lane, uint32_t(unit), masking);
        vstore(a + o, drop_cheap_activation<T>(act, cheap_activation_of<T>(act, z), mk, dz, mask, o));
    }
};

// Whether a cheap activation's dropout runs in the product's epilogue
// (StoreDroppedCheapActivation) rather than in a pass after it
// (drop_cheap_layer). The epilogue saves the pass's reload and re-store of
// the activations but puts the hash and the offset's division among the
// tile's accumulators: with 32 vector registers it was the faster (AVX-512:
// 5.06-5.13 against 5.14-5.36 ms a step), with 16 the slower (AVX2:
// 7.78-7.90 against 7.52-7.62; SSE4.2: 18.6-18.7 against 17.6-18.0;
// benchmarks/tiles.py --population csv --activations relu --dropout 0.15
// --variants "" "SKP_DROPOUT_EPILOGUE=0", two interleaved rounds).
#ifndef SKP_DROPOUT_EPILOGUE
#define SKP_DROPOUT_EPILOGUE (VREGS >= 32)
#endif
constexpr bool DROPOUT_IN_EPILOGUE = SKP_DROPOUT_EPILOGUE;

// A dropout step's hidden layer with a cheap activation after its product
// stored a = f(z) (n_out, bp): the masks drawn, a masked in place and what
// the backward needs stored (drop_cheap_activation), over the first
// `lanes` columns.
template <class T>
void drop_cheap_layer(int act, T* a, T* dz, T* mask, const uint32_t* row_state, int n_out, long bp, long lanes,
                      const DropoutMasking<T>& masking) {
    constexpr int L = VT<T>::L;
    for (int j = 0; j < n_out; ++j)
        for (long i = 0; i < lanes; i += L) {
            const long o = j * bp + i;
            const auto mk = dropout_mask_lanes<T>(row_state + i, uint32_t(j), masking);
            vstore(a + o, drop_cheap_activation<T>(act, vload(a + o), mk, dz, mask, o));
        }
}

// A dropout step's hidden units [unit0, unit0 + n) of a costly activation
// after the matmul stored their products z (n, bp): h = f(z) * mask into a,
// f'(z) into z and the mask into mask, in one pass over the block while it
// is in L1 (activate_as's U vectors at a time). Only the first `lanes`
// columns are used.
template <class T, int act, class M>
void activate_dropped_as(T* z, T* a, T* mask, int unit0, int n, long bp, long lanes, const uint32_t* row_state,
                         const DropoutMasking<T>& masking) {
    typedef typename M::V V;
    constexpr int L = VT<T>::L, U = sizeof(T) == 4 ? 4 : 2;
    for (int j = 0; j < n; ++j) {
        T *zj = z + j * bp, *aj = a + j * bp, *mj = mask + j * bp;
        const auto unit = uint32_t(unit0 + j);
        auto finish = [&](long i, V y, V dy) {
            const V mk = dropout_mask_lanes<T>(row_state + i, unit, masking);
            vstore(mj + i, mk);
            vstore(zj + i, dy);
            vstore(aj + i, y * mk);
        };
        long i = 0;
        for (; i + U * L <= lanes; i += U * L) {
            V y[U], dy[U];
            for (int u = 0; u < U; ++u) activation_pair<T, act, M>(vload(zj + i + u * L), y[u], dy[u]);
            for (int u = 0; u < U; ++u) finish(i + u * L, y[u], dy[u]);
        }
        for (; i < lanes; i += L) {
            V y, dy;
            activation_pair<T, act, M>(vload(zj + i), y, dy);
            finish(i, y, dy);
        }
    }
}

template <class T, class M = VMath<T>>
void activate_dropped(int act, T* z, T* a, T* mask, int unit0, int n, long bp, long lanes, const uint32_t* row_state,
                      const DropoutMasking<T>& masking) {
#define SKP_CALL(CODE) activate_dropped_as<T, CODE, M>(z, a, mask, unit0, n, bp, lanes, row_state, masking)
    SKP_ACTIVATION_CASES(SKP_CALL)
#undef SKP_CALL
}

// A dropout model's hidden layer's backward: delta = (W . delta_next) *
// mask * f'(z), in torch autograd's order for h = f(z) * mask ((g * mask)
// then f's backward); ReLU and hardshrink by their gate (dropout_delta).
template <class T> struct StoreDropoutDelta {
    T* out;
    const T* mask;
    const T* dz;  // f'(z), unmasked, or the gate (drop_cheap_activation, activate_dropped)
    int act;
    SKP_INLINE void operator()(long o, typename VT<T>::V g) const {
        vstore(out + o, dropout_delta<T>(act, g, mask, dz, o));
    }
};

// g[r][c] = sum over lanes of a[r] * d[c]: a (MR rows), d (NC rows) of nv
// vectors; the products stay per lane, and the tile's sums are taken
// together at the end (LaneSums). With BIAS, gb[c] = sum over lanes of d[c]
// too: the bias gradient rides on the loads of d (alone it was one serial
// chain of adds per unit).
template <class T, int MR, int NC, bool BIAS>
SKP_INLINE void tile_outer(int nv, const T* __restrict a, const T* __restrict d, long ld, T* __restrict g, long gld,
                       T* __restrict gb) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L, NB = BIAS ? NC : 0;
    V acc[MR * NC + NB];
#pragma GCC unroll 64  // no memset: see the top of the file
    for (int i = 0; i < MR * NC + NB; ++i) acc[i] = V{};
    for (int v = 0; v < nv; ++v) {
        V x[MR];
        for (int r = 0; r < MR; ++r) x[r] = vload_kept(a + r * ld + v * L);
        for (int c = 0; c < NC; ++c) {
            const V y = vload(d + c * ld + v * L);
            if constexpr (BIAS) acc[MR * NC + c] += y;
            for (int r = 0; r < MR; ++r) acc[r * NC + c] += x[r] * y;
        }
    }
    T sums[MR * NC + NB];
    LaneSums<T>::template sums<MR * NC + NB>(acc, sums);
    for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NC; ++c) g[r * gld + c] = sums[r * NC + c];
    if constexpr (BIAS)
        for (int c = 0; c < NC; ++c) gb[c] = sums[MR * NC + c];
}

template <class T, int MR, bool BIAS>
inline void outer_row_block(int n_c, int nv, const T* a, const T* d, long ld, T* g, long gld, T* gb) {
    balanced_tiles<tiles::OUTER_COLS>(n_c, [&](int c, auto n) {
        tile_outer<T, MR, decltype(n)::value, BIAS>(nv, a, d + c * ld, ld, g + c, gld, gb + c);
    });
}

// g (n_r, n_c; row stride gld) = a (n_r, ld) . d (n_c, ld)^T, and the bias
// gradient gb (n_c) = d . 1 (with the first block of rows)
template <class T>
void outer_lanes(int n_r, int n_c, int nv, const T* a, const T* d, long ld, T* g, long gld, T* gb) {
    balanced_tiles<tiles::OUTER_ROWS>(n_r, [&](int r, auto n) {
        if (r == 0) {
            outer_row_block<T, decltype(n)::value, true>(n_c, nv, a, d, ld, g, gld, gb);
        } else {
            outer_row_block<T, decltype(n)::value, false>(n_c, nv, a + r * ld, d, ld, g + r * gld, gld, gb);
        }
    });
}

// The bias gradient gb (n) = d . 1 of n units' deltas d (n, ld) over nv
// vectors of lanes: each unit's vectors added, then its lanes summed as
// outer_lanes sums them (LaneSums), so every path's bias gradient is its.
template <class T> void bias_gradient(int n, int nv, const T* d, long ld, T* gb) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    for (int c = 0; c < n; ++c) {
        V acc{};
        for (int v = 0; v < nv; ++v) acc += vload(d + c * ld + v * L);
        LaneSums<T>::template sums<1>(&acc, gb + c);
    }
}

// Whether a layer's weight gradient runs as outer_rows rather than
// outer_lanes: where both of its sides are wide, on vectors of 16 lanes or
// more. outer_lanes sums each weight's products across the lanes at the
// end, about three operations a weight (LaneSums), against the rows / L
// multiply-adds that made them (6 at 96 rows with AVX-512's 16 floats);
// outer_rows pays instead a transpose of the layer's deltas (n_out x rows
// values, L log2(L) shuffles a block of L x L) and, where n_out is not
// whole vectors, lanes that compute nothing. Measured on AVX-512, 240
// models, 4 inputs, batch 96: a (64, 32) model step 9-14 % less time, a
// (128, 64) one 18 %; with AVX2's and SSE4.2's 8 and 4 floats, no faster
// (docs/user_guide/performance.rst, "Narrow data").
#ifndef SKP_OUTER_ROWS_MIN
#define SKP_OUTER_ROWS_MIN 16
#endif
template <class T> inline bool outer_by_rows(int n_in, int n_out) {
    return VT<T>::L >= 16 && n_in >= SKP_OUTER_ROWS_MIN && n_out >= SKP_OUTER_ROWS_MIN;
}

// outer_lanes' gradients as a matmul over the batch's rows: g (n_in, n_out;
// row stride gld) = a (n_in, ld) . dT, dT (rows, n_out) the deltas d (n_out,
// ld) transposed into `scratch` with n_out padded to whole vectors (zeros),
// each of a's values broadcast (matmul_lanes): each weight a sum over the
// rows in order, with no sums across lanes. The products land in g where
// its rows are whole vectors, else in scratch past dT and are copied.
// gb (n_out) = d . 1 (bias_gradient).
template <class T>
void outer_rows(int n_in, int n_out, int nv, const T* a, const T* d, long ld, T* g, long gld, T* gb, T* scratch) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    const int rows = nv * L, n_vec = (n_out + L - 1) / L;
    const long tld = long(n_vec) * L;
    T* dT = scratch;
    for (int c0 = 0; c0 < n_out; c0 += L)  // L x L blocks, units past n_out zero
        for (int r0 = 0; r0 < rows; r0 += L) {
            V block[L];
            for (int i = 0; i < L; ++i) block[i] = c0 + i < n_out ? vload(d + (c0 + i) * ld + r0) : V{};
            BlockTranspose<T>::run(block);
            for (int j = 0; j < L; ++j) vstore(dT + (r0 + j) * tld + c0, block[j]);
        }
    const bool direct = tld == n_out && gld == n_out;
    T* out = direct ? g : dT + long(rows) * tld;
    matmul_lanes<T>(n_in, rows, a, ld, 1, dT, tld, n_vec, nullptr, StoreProduct<T>{out});
    if (!direct)
        for (int i = 0; i < n_in; ++i) std::copy(out + i * tld, out + i * tld + n_out, g + i * gld);
    bias_gradient<T>(n_out, nv, d, ld, gb);
}

// A dropout training step's hidden layer in the fused one-hidden-layer
// tiles: the rows' dropout_row_state (a row a lane), the masking, and where
// the forward leaves f'(z) and the mask, or the gate (drop_cheap_activation).
template <class T> struct FusedDropout {
    const uint32_t* row_state = nullptr;
    DropoutMasking<T> masking;
    T *dz = nullptr, *mask = nullptr;
};

// The forward of a network of one hidden layer with a cheap activation
// whose inputs (NF) and outputs (NC) are few, in one pass: NVB vectors of
// lanes at a time, the inputs in registers, each hidden unit's activation
// is stored for the backward and multiplied at once into the outputs'
// accumulators, where a second matmul loaded it again. Both sums run in
// tile_mm's order (the bias, then the inner index up): the activations and
// outputs are bit for bit the two matmuls'. DROP: a dropout step's, each
// activation masked by drop_cheap_activation (what the backward needs
// stored beside it) before it enters the outputs, bit for bit
// StoreDroppedCheapActivation's.
template <class T, int NF, int NC, int NVB, bool DROP>
inline void tile_forward_one_hidden(int H, const T* __restrict x, long ld, const T* __restrict w_in, long ld_in,
                                    const T* __restrict b_in, const T* __restrict w_out, long ld_out,
                                    const T* __restrict b_out, int act, T* __restrict a, T* __restrict out,
                                    const FusedDropout<T>& drop) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    V xs[NF][NVB], acc[NC][NVB];
#pragma GCC unroll 64
    for (int i = 0; i < NF; ++i)
#pragma GCC unroll 64
        for (int u = 0; u < NVB; ++u) xs[i][u] = vload(x + i * ld + u * L);
#pragma GCC unroll 64
    for (int c = 0; c < NC; ++c)
#pragma GCC unroll 64
        for (int u = 0; u < NVB; ++u) acc[c][u] = vsplat<T>(b_out[c]);
    for (int r = 0; r < H; ++r) {
        const V bias = vsplat<T>(b_in[r]);
        for (int u = 0; u < NVB; ++u) {
            V z = bias;
            for (int i = 0; i < NF; ++i) z += vsplat<T>(w_in[i * ld_in + r]) * xs[i][u];
            V y = cheap_activation_of<T>(act, z);
            const long o = r * ld + u * L;
            if constexpr (DROP) {
                const V mk = dropout_mask_lanes<T>(drop.row_state + u * L, uint32_t(r), drop.masking);
                y = drop_cheap_activation<T>(act, y, mk, drop.dz, drop.mask, o);
            }
            vstore(a + o, y);
            for (int c = 0; c < NC; ++c) acc[c][u] += vsplat<T>(w_out[r * ld_out + c]) * y;
        }
    }
#pragma GCC unroll 64
    for (int c = 0; c < NC; ++c)
#pragma GCC unroll 64
        for (int u = 0; u < NVB; ++u) vstore(out + c * ld + u * L, acc[c][u]);
}

// Vectors of lanes per tile_forward_one_hidden: two where the registers
// hold both vectors' inputs and accumulators (32 of them), else one.
constexpr int FORWARD_ONE_HIDDEN_VECS = VREGS >= 32 ? 2 : 1;

// The backward of a network of one hidden layer whose inputs (NF) and
// outputs (NC) are few, in one pass over the hidden units' lanes. For MR
// hidden units at a time the delta (W_out . delta_out) * f'(z) stays in
// registers, never stored, and goes straight into the gradients it feeds:
// the hidden layer's weights (x . delta) and bias, beside the output
// layer's weights (h . delta_out) on the same loads of h. Three passes
// (outer_lanes, matmul_lanes, outer_lanes) each loaded and stored the
// hidden units' lanes for a few multiply-adds a vector. Every product is
// the one those passes take, summed per lane in their order and across
// lanes by the same LaneSums: the gradients are bit for bit theirs.
//
// With a dropout model's mask (DROP), h is the masked activation and the
// delta dropout_delta's, as StoreDropoutDelta forms it.
template <class T, int NF, int NC, int MR, bool DROP>
inline void tile_one_hidden(int nv, const T* __restrict x, const T* __restrict h, const T* __restrict dz,
                            const T* __restrict mask, const T* __restrict d, long ld, const T* __restrict w_out,
                            long wld, int act, T* __restrict g_hidden, long ghld, T* __restrict gb_hidden,
                            T* __restrict g_out) {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L, PER_ROW = NF + NC + 1;
    V c[MR][NC], acc[MR * PER_ROW];
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 64
        for (int t = 0; t < NC; ++t) c[r][t] = vsplat<T>(w_out[r * wld + t]);
#pragma GCC unroll 64  // no memset: see the top of the file
    for (int i = 0; i < MR * PER_ROW; ++i) acc[i] = V{};
    for (int v = 0; v < nv; ++v) {
        V xs[NF], ds[NC];
        for (int i = 0; i < NF; ++i) xs[i] = vload(x + i * ld + v * L);
        for (int t = 0; t < NC; ++t) ds[t] = vload(d + t * ld + v * L);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
            const long o = r * ld + v * L;
            const V hr = vload(h + o);
            V* a = acc + r * PER_ROW;
            V g = vsplat<T>(T(0));  // tile_narrow's sum, from its zero bias
            for (int t = 0; t < NC; ++t) g += c[r][t] * ds[t];
            for (int t = 0; t < NC; ++t) a[NF + t] += hr * ds[t];
            const V delta = DROP ? dropout_delta<T>(act, g, mask, dz, o) : delta_of<T>(act, g, h, dz, o);
            for (int i = 0; i < NF; ++i) a[i] += xs[i] * delta;
            a[NF + NC] += delta;
        }
    }
    T sums[MR * PER_ROW];
    LaneSums<T>::template sums<MR * PER_ROW>(acc, sums);
#pragma GCC unroll 64
    for (int r = 0; r < MR; ++r) {
        const T* s = sums + r * PER_ROW;
        for (int i = 0; i < NF; ++i) g_hidden[i * ghld + r] = s[i];
        for (int t = 0; t < NC; ++t) g_out[r * NC + t] = s[NF + t];
        gb_hidden[r] = s[NF + NC];
    }
}

// Hidden units per tile_one_hidden: its accumulators (NF + NC + 1 a unit)
// and coefficients (NC a unit) in registers beside the NF + NC shared
// loads, with SKP_FUSED_SPARE left for the delta's derivative (at least
// one unit).
#ifndef SKP_FUSED_SPARE
#define SKP_FUSED_SPARE 3
#endif
template <int NF, int NC> constexpr int one_hidden_rows() {
    const int rows = (VREGS - (SKP_FUSED_SPARE) - NF - NC) / (NF + 2 * NC + 1);
    return rows < 1 ? 1 : (rows > 4 ? 4 : rows);
}

// Inputs and outputs up to these take the fused one-hidden-layer tiles
// (SKP_FUSED_MAX_INPUTS=0: never).
#ifndef SKP_FUSED_MAX_INPUTS
#define SKP_FUSED_MAX_INPUTS 8
#endif
constexpr int FUSED_MAX_INPUTS = SKP_FUSED_MAX_INPUTS, FUSED_MAX_OUTPUTS = 4;

// The whole backward of a one-hidden-layer network (see tile_one_hidden):
// x (F, ld) its inputs, h / dz (H, ld) its hidden layer's activation and
// stored f'(z), mask (H, ld) a dropout step's mask (else null), d (C, ld)
// the loss's gradient on its outputs, w_out its output weights (H, C; row
// stride wld); the dense gradients g (as Scratch::grads: W_hidden (F, H),
// b_hidden, W_out (H, C), b_out).
template <class T>
void backward_one_hidden(int F, int H, int C, int nv, const T* x, const T* h, const T* dz, const T* mask,
                         const T* d, long ld, const T* w_out, long wld, int act, T* g_hidden, T* gb_hidden,
                         T* g_out, T* gb_out) {
    bias_gradient<T>(C, nv, d, ld, gb_out);  // the output bias
    with_count<FUSED_MAX_INPUTS>(F, [&](auto nf) {
        with_count<FUSED_MAX_OUTPUTS>(C, [&](auto nc) {
            constexpr int NF = decltype(nf)::value, NC = decltype(nc)::value;
            balanced_tiles<one_hidden_rows<NF, NC>()>(H, [&](int r, auto n) {
                constexpr int MR = decltype(n)::value;
                if (mask) {
                    tile_one_hidden<T, NF, NC, MR, true>(nv, x, h + r * ld, dz + r * ld, mask + r * ld, d, ld,
                                                         w_out + r * wld, wld, act, g_hidden + r, H,
                                                         gb_hidden + r, g_out + r * NC);
                } else {
                    tile_one_hidden<T, NF, NC, MR, false>(nv, x, h + r * ld, dz + r * ld, nullptr, d, ld,
                                                          w_out + r * wld, wld, act, g_hidden + r, H,
                                                          gb_hidden + r, g_out + r * NC);
                }
            });
        });
    });
}

// ---------------------------------------------------------------- model
struct Layer {
    int n_in, n_out;
    long w_off, b_off, ld;
};

// A matrix of n_rows x n_cols values at row stride ld as runs of
// contiguous values: one run of them all where the rows are unpadded, else
// one run a row (runs x length, run r at r * ld).
struct RowRuns {
    int runs;
    long length;
};
inline RowRuns row_runs(int n_rows, int n_cols, long ld) {
    return ld == n_cols ? RowRuns{1, long(n_rows) * n_cols} : RowRuns{n_rows, n_cols};
}

// The update codes of the meta table's solver column: skpmlp/_kernels/_solvers.py's
// table (tests/kernels/test_kernel_build.py checks these match it).
enum Update { ADAM = 0, SGD = 1, ADAM_AMSGRAD = 2, ADAMW = 3, ADAMW_AMSGRAD = 4 };

struct Model {
    int slot, depth, act, fold, solver, nesterov;
    Layer layers[MAX_DEPTH + 1];
    double lr, alpha, beta1, beta2, eps, momentum, step_offset;
    double smoothing;  // label smoothing of the softmax and logistic losses (0: none)
    uint32_t drop_key;        // dropout: the model's key (_dropout.model_key)
    uint64_t drop_threshold;  // ceil(p 2^32): 0 without dropout
    double drop_scale;        // 1 / (1 - p)

    Model(const int64_t* m, const double* h) {
        slot = int(m[M_SLOT]), depth = int(m[M_DEPTH]), act = int(m[M_ACT]), fold = int(m[M_FOLD]);
        solver = int(m[M_SOLVER]), nesterov = int(m[M_NESTEROV]);
        for (int l = 0; l <= depth; ++l)
            layers[l] = {int(m[M_SIZES + l]), int(m[M_SIZES + l + 1]), m[M_WOFF + l], m[M_BOFF + l], m[M_LD + l]};
        lr = h[H_LR], alpha = h[H_ALPHA], beta1 = h[H_BETA1], beta2 = h[H_BETA2], eps = h[H_EPS];
        momentum = h[H_MOMENTUM], step_offset = h[H_STEP_OFFSET];
        smoothing = h[H_SMOOTHING];
        drop_key = uint32_t(m[M_DROP_KEY]), drop_threshold = uint64_t(m[M_DROP_THRESHOLD]);
        drop_scale = h[H_DROP_SCALE];
    }
    int n_outputs() const { return layers[depth].n_out; }
    bool drops() const { return drop_threshold != 0; }
};

// Adam's beta1^t and beta2^t remembered by (beta1, beta2, t): the bias
// corrections take both powers at every step of every model, and the
// models of a call mostly share their betas and their step counts, so a
// thread's models after its first find them here (the C library's pow,
// twice a step, was 3 % of a step of a 16-unit network at 96 rows).
// Direct-mapped by the integer t; a miss calls pow as before, so the
// values are its.
struct BetaPowers {
    static constexpr int N = 128;
    double beta1[N], beta2[N], exponent[N], power1[N], power2[N];
    BetaPowers() { std::fill(exponent, exponent + N, -1.0); }  // t >= 1: every slot misses
    void operator()(double b1, double b2, double t, double& p1, double& p2) {
        const int i = int(int64_t(t) & (N - 1));
        if (!(exponent[i] == t && beta1[i] == b1 && beta2[i] == b2)) {
            beta1[i] = b1, beta2[i] = b2, exponent[i] = t;
            power1[i] = std::pow(b1, t), power2[i] = std::pow(b2, t);
        }
        p1 = power1[i], p2 = power2[i];
    }
};

// Per-thread working memory: one 64-byte aligned arena, grown on demand and
// reused by the thread's next models (a fresh allocation per model would
// map and fault in new pages every epoch for the wider ones).
template <class T> struct Scratch {
    BetaPowers powers;  // Adam's beta1^t and beta2^t (AdamStep)
    std::vector<T*> z, a;  // per hidden layer: pre-activation, activation (units, B_pad)
    std::vector<T*> mask;  // dropout models: per hidden layer, the step's mask (units, B_pad)
    std::vector<uint32_t> row_state;  // dropout models: a layer's dropout_row_state per row
    T *logits = nullptr, *delta = nullptr, *delta_prev = nullptr;
    T* grads = nullptr;  // dense gradient of every layer: W (n_in, n_out) then b
    T* transposed = nullptr;  // outer_rows' deltas (B_pad, widest in whole vectors), then its products
    std::vector<long> g_off;
    long n_grads = 0;
    ~Scratch() { std::free(arena); }

    void prepare(const Model& m, long bp) {
        z.assign(m.depth, nullptr), a.assign(m.depth, nullptr);
        mask.assign(m.drops() ? m.depth : 0, nullptr);
        if (m.drops()) row_state.resize(bp);
        int widest = 1;
        long n_grad = 0;
        g_off.assign(2 * (m.depth + 1), 0);
        for (int l = 0; l <= m.depth; ++l) {
            const Layer& L = m.layers[l];
            widest = std::max({widest, L.n_in, L.n_out});
            g_off[2 * l] = n_grad, n_grad += long(L.n_in) * L.n_out;
            g_off[2 * l + 1] = n_grad, n_grad += L.n_out;
        }
        n_grads = n_grad;
        // the buffers' sizes, each rounded up to whole cache lines
        std::vector<long> sizes;
        for (int l = 0; l < m.depth; ++l) sizes.insert(sizes.end(), 2, m.layers[l].n_out * bp);  // z, a
        sizes.push_back(long(m.n_outputs()) * bp);
        sizes.push_back(long(widest) * bp), sizes.push_back(long(widest) * bp);
        sizes.push_back(n_grad);
        const long whole = (widest + VT<T>::L - 1) / VT<T>::L * VT<T>::L;
        sizes.push_back((bp + widest) * whole);  // transposed
        for (size_t l = 0; l < mask.size(); ++l) sizes.push_back(m.layers[l].n_out * bp);
        long total = 0;
        for (long& n : sizes) total += (n = round_up(n));
        reserve(total);
        T* next = arena;
        auto take = [&](long n) { T* p = next; next += n; return p; };
        int i = 0;
        for (int l = 0; l < m.depth; ++l) z[l] = take(sizes[i++]), a[l] = take(sizes[i++]);
        logits = take(sizes[i++]);
        delta = take(sizes[i++]), delta_prev = take(sizes[i++]);
        grads = take(sizes[i++]);
        transposed = take(sizes[i++]);
        for (T*& p : mask) p = take(sizes[i++]);
    }

  private:
    T* arena = nullptr;
    long capacity = 0;  // values of T
    static long round_up(long n) { return (n * long(sizeof(T)) + 63) / 64 * 64 / long(sizeof(T)); }
    void reserve(long n) {
        if (n <= capacity) return;
        std::free(arena);
        arena = static_cast<T*>(std::aligned_alloc(64, n * sizeof(T)));
        capacity = n;
    }
};

// Several epochs in one call of mode 0 (skp_run_epochs_*): the steps of
// epoch e are [ends[e], ends[e + 1]) of the batches. After each epoch a
// model computes its epoch loss as the torch engine does (the mean batch
// loss over the fold's rows, plus alpha / 2 * |W|^2 * batches / rows with
// the end-of-epoch weights, each operation rounded to T) and feeds it to
// scikit-learn's stopping rule (tol, n_iter_no_change, a non-finite loss
// stops at once): a model the rule stops trains no further epoch, so the
// call ends where separate one-epoch calls would have. The host replays the
// rule on the losses and must reach the same epochs (epochs_done).
struct Epochs {
    int64_t n_epochs, first_epoch, n_slots;
    const int64_t* ends;         // (n_epochs + 1) step offsets
    const double* fold_sizes;    // (K) training rows of each fold
    const double* fold_batches;  // (K) batches of each fold's epoch
    const double* loss_alpha;    // (n_slots) alpha of the loss's L2 term (0 for decoupled decay)
    const double* best;          // (n_slots) the rule's lowest loss so far
    const int64_t* count;        // (n_slots) the rule's epochs without improvement
    double tol;
    int64_t patience;
    double* losses;       // (n_epochs, n_slots) out: each epoch's loss (a T value)
    int64_t* epochs_done; // (n_slots) out: epochs each model trained
    // Where the run monitors evaluation rows (eval_X null otherwise), each
    // model evaluates its own fold's rows only, after every epoch it
    // trains: eval_X holds each fold's blocks (K, eval_blocks, F,
    // eval_block), each block as skp_forward_*'s, fold k's eval_fold_rows[k]
    // rows first. With score == SCORE_NONE
    // the model writes its outputs into eval_out (n_epochs, n_slots,
    // eval_rows, C) of T, at rows [eval_fold_first[k], + eval_fold_rows[k])
    // of its slot and zero elsewhere, for the host to score; otherwise it
    // scores them itself, as the host's function of the outputs does
    // (engine's _losses.MONITOR_SCORES, in T, NaN where an output of a
    // weighted row is not finite), into scores (n_epochs, n_slots): eval_y
    // (K, eval_blocks * eval_block, 1 or C) and eval_w (K, eval_blocks *
    // eval_block) of T are each fold's targets and row weights, eval_total
    // (K, C) of T R^2's total sum of squares of each fold's targets.
    const void* eval_X;
    int64_t eval_blocks, eval_block, eval_rows;
    const int64_t* eval_fold_first;
    const int64_t* eval_fold_rows;
    void* eval_out;
    int64_t score;
    const void* eval_y;
    const void* eval_w;
    const void* eval_total;
    double* scores;
    // Early stopping (n_groups > 0; scores needed): the rule watches each
    // model's mean score over its fold replicas (its group) instead of each
    // replica's loss, and keeps the weights of its best epoch, as the
    // host's ReplicaStatus (early_stopping) and keep_best. Group g's meta
    // rows are group_rows[group_first[g] .. group_first[g + 1]), in fold
    // order; group_best and group_count (n_groups) are its rule's state
    // (best and count above are not read). An improving epoch copies each
    // member's weights and biases into best_params (the params' layout) and
    // writes the epoch (1-based in the call) into best_epochs (n_slots, out).
    int64_t n_groups;
    const int64_t* group_first;
    const int64_t* group_rows;
    const double* group_best;
    const int64_t* group_count;
    void* best_params;
    int64_t* best_epochs;
    // With scores, val_losses (n_epochs, n_slots; null: none) receives each
    // model's validation loss on the same rows (the training loss without
    // label smoothing or the L2 term, the host's validation_loss_function,
    // in T; NaN where an output of a weighted row is not finite). With
    // best_loss (n_slots; restore_best_weights), each model keeps its own
    // weights in best_params at every epoch whose validation loss is below
    // its lowest so far (the host's BestEpochs; a model whose training
    // loss is not finite keeps nothing), instead of at its group's
    // improving scores.
    double* val_losses;
    const double* best_loss;
};

// What Epochs::score computes: nothing (the host scores eval_out),
// accuracy of the argmax (softmax), R^2 averaged over the outputs
// (squared error), the subset accuracy of positive logits (logistic).
enum { SCORE_NONE = 0, SCORE_ACCURACY, SCORE_R2, SCORE_SUBSET };

template <class T> struct Problem {
    int n_steps, n_folds, bp, n_features, n_outputs, loss;
    const T *Xb, *Yb, *Wb;
    const double *counts, *weight_sums, *step0;
    const uint8_t* stepping;
    T *params, *grads, *state1, *state2, *loss_sums;
    T* state3;  // AMSGrad's maximum of state2 (solver 2 only)
    long epoch;  // the run's epoch of these steps (dropout masks hash it)
    const Epochs* epochs = nullptr;  // mode 0: null for one epoch of every step, no loss
};

// The forward of one batch x (n_in, bp): each hidden layer's activation in
// s.a[l] (and its f'(z) in s.z[l] where the backward cannot recompute it
// from the activation), the outputs in s.logits (n_out, bp). Only the first
// `lanes` columns (a multiple of the vector lanes, at most bp) are computed:
// a batch's real rows lie first, and the zero-weight columns past them
// change nothing, so a short last batch costs its own rows, not bp. With
// `dropout` (a training step of a model that drops units: its
// dropout_step_key), each activation is multiplied by its mask in the
// layer's epilogue or activation pass, and s.z[l] holds f'(z) and s.mask[l]
// the mask, or s.z[l] the gate of ReLU and hardshrink
// (drop_cheap_activation, activate_dropped).
// Whether a model trains by forward_one_hidden and backward_one_hidden:
// one hidden layer, few inputs and outputs (the forward's fused pass also
// needs a cheap activation; dropout models' steps mask in both).
inline bool one_hidden_fused(const Model& m) {
    return m.depth == 1 && m.layers[0].n_in <= FUSED_MAX_INPUTS && m.layers[1].n_out <= FUSED_MAX_OUTPUTS;
}

// The forward of a one-hidden-layer network (see tile_forward_one_hidden):
// x (F, ld) its inputs, a (H, ld) its hidden activation, out (C, ld) its
// outputs, nv vectors of lanes.
template <class T, bool DROP>
void forward_one_hidden(const Model& m, const T* x, long ld, int nv, const T* params, T* a, T* out,
                        const FusedDropout<T>& drop) {
    const Layer &hidden = m.layers[0], &last = m.layers[1];
    constexpr int L = VT<T>::L;
    with_count<FUSED_MAX_INPUTS>(hidden.n_in, [&](auto nf) {
        with_count<FUSED_MAX_OUTPUTS>(last.n_out, [&](auto nc) {
            balanced_tiles<FORWARD_ONE_HIDDEN_VECS>(nv, [&](int v, auto n) {
                const FusedDropout<T> rows{DROP ? drop.row_state + v * L : nullptr, drop.masking,
                                           DROP ? drop.dz + v * L : nullptr, DROP ? drop.mask + v * L : nullptr};
                tile_forward_one_hidden<T, decltype(nf)::value, decltype(nc)::value, decltype(n)::value, DROP>(
                    hidden.n_out, x + v * L, ld, params + hidden.w_off, hidden.ld, params + hidden.b_off,
                    params + last.w_off, last.ld, params + last.b_off, m.act, a + v * L, out + v * L, rows);
            });
        });
    });
}

// Every row's dropout_row_state of hidden layer `layer` in the step of
// dropout_step_key step_key, into s.row_state (a row a lane).
template <class T> void dropout_row_states(Scratch<T>& s, uint32_t step_key, int layer, long lanes) {
    for (long r = 0; r < lanes; ++r) s.row_state[r] = dropout_row_state(step_key, layer, r);
}

// A dropout model's masking (its rate's threshold and scale).
template <class T> DropoutMasking<T> model_masking(const Model& m) {
    return DropoutMasking<T>(m.drop_threshold, T(m.drop_scale));
}

template <class T, class Math = VMath<T>>
void forward(const Model& m, const T* x, long bp, long lanes, const T* params, Scratch<T>& s,
             const uint32_t* dropout = nullptr) {
    const int nv = int(lanes / VT<T>::L);
    if (cheap_activation(m.act) && one_hidden_fused(m)) {
        if (dropout) {  // masked in the pass (as StoreDroppedCheapActivation masks)
            dropout_row_states(s, *dropout, 0, lanes);
            const FusedDropout<T> drop{s.row_state.data(), model_masking<T>(m), s.z[0], s.mask[0]};
            forward_one_hidden<T, true>(m, x, bp, nv, params, s.a[0], s.logits, drop);
        } else {
            forward_one_hidden<T, false>(m, x, bp, nv, params, s.a[0], s.logits, FusedDropout<T>{});
        }
        return;
    }
    const T* input = x;
    for (int l = 0; l <= m.depth; ++l) {
        const Layer& L = m.layers[l];
        const T* w = params + L.w_off;
        const T* b = params + L.b_off;
        if (l == m.depth) {
            matmul_lanes<T>(L.n_out, L.n_in, w, 1, L.ld, input, bp, nv, b, StoreProduct<T>{s.logits});
            break;
        }
        T *a = s.a[l], *z = s.z[l];
        const int act = m.act;
        if (dropout) dropout_row_states(s, *dropout, l, lanes);
        const DropoutMasking<T> masking = model_masking<T>(m);
        if (cheap_activation(act)) {  // in the matmul's registers
            if (dropout && DROPOUT_IN_EPILOGUE) {  // masked there too
                matmul_lanes<T>(L.n_out, L.n_in, w, 1, L.ld, input, bp, nv, b,
                                StoreDroppedCheapActivation<T>{a, z, s.mask[l], s.row_state.data(), masking, act, bp});
            } else {
                matmul_lanes<T>(L.n_out, L.n_in, w, 1, L.ld, input, bp, nv, b, StoreCheapActivation<T>{a, act});
                if (dropout) drop_cheap_layer<T>(act, a, z, s.mask[l], s.row_state.data(), L.n_out, bp, lanes, masking);
            }
        } else {  // over each block of rows after the matmul stored it, in L1
            balanced_tiles<tiles::MM_ROWS>(L.n_out, [&](int r, auto n) {
                matmul_lanes<T>(n, L.n_in, w + r, 1, L.ld, input, bp, nv, b + r, StoreProduct<T>{z + r * bp});
                if (dropout) {  // masked in the same pass
                    activate_dropped<T, Math>(act, z + r * bp, a + r * bp, s.mask[l] + r * bp, r, n, bp, lanes,
                                              s.row_state.data(), masking);
                } else if (lanes == bp) {  // the block's rows lie end to end: one pass over all of them
                    activate<T, Math>(act, z + r * bp, a + r * bp, n * bp);
                } else {  // a short batch: each row's used lanes (the rest were never stored)
                    for (int j = r; j < r + n; ++j) activate<T, Math>(act, z + j * bp, a + j * bp, lanes);
                }
            });
        }
        input = a;
    }
}

// The model's outputs (n_rows, C) row-major for the rows of X, laid out in
// n_blocks blocks (F, block) as the batches (samples along the lanes, zero
// padding past n_rows).
template <class T>
void forward_rows(const Model& m, const T* X, int n_blocks, int block, int n_rows, const T* params, T* out,
                  Scratch<T>& s) {
    const int C = m.n_outputs(), F = m.layers[0].n_in;
    s.prepare(m, block);
    for (int b = 0; b < n_blocks; ++b) {
        forward<T>(m, X + long(b) * F * block, block, block, params, s);
        const int rows = std::min(block, n_rows - b * block);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < C; ++c) out[(long(b) * block + r) * C + c] = s.logits[c * block + r];
    }
}

// The columns of a batch that hold its `count` real rows (which lie
// first), rounded up to whole vectors: all a step computes.
template <class T> long batch_lanes(double count, long bp) {
    constexpr long L = VT<T>::L;
    const long rounded = (std::max(long(count), 1L) + L - 1) / L * L;
    return std::min(rounded, bp);
}

// Forward, loss and backward of one batch (its real rows: batch_lanes);
// the dense gradient lands in s.grads. Returns the model's weighted mean
// batch loss.
template <class T, class Math = VMath<T>>
double forward_backward(const Model& m, const Problem<T>& P, int step, long epoch, long epoch_step,
                        Scratch<T>& s) {
    const long bp = P.bp;
    const long batch = long(step) * P.n_folds + m.fold;
    const long used = batch_lanes<T>(P.counts[batch], bp);
    const int nv = int(used / VT<T>::L);
    const T* x = P.Xb + batch * P.n_features * bp;
    const T* w = P.Wb + batch * bp;
    const T* params = P.params;
    // dropout's masks hash the run's epoch and the step within it
    const uint32_t step_key = m.drops() ? dropout_step_key(m.drop_key, epoch, epoch_step) : 0;
    forward<T, Math>(m, x, bp, used, params, s, m.drops() ? &step_key : nullptr);

    // loss and its gradient on the logits, weighted per sample (lane)
    const int C = P.n_outputs;
    T* d = s.delta;
    double loss = 0;
    // label smoothing eps: softmax targets (1 - eps) onehot + eps / C, whose
    // loss is lse - (1 - eps) z_y - eps / C sum_c z_c (torch's
    // cross_entropy(label_smoothing=eps)); logistic targets y (1 - eps) + eps / 2
    const bool smooth = m.smoothing != 0;
    const T keep = T(1 - m.smoothing);
    if (P.loss == LOSS_SOFTMAX) {
        // softmax - onehot (the smoothed targets), a vector of samples at a time
        typedef Math M;
        typedef typename M::V V;
        constexpr int L = VT<T>::L;
        const T* label = P.Yb + batch * bp;
        const T spread = T(m.smoothing / C);
        V loss_lanes{};
        for (long i = 0; i < used; i += L) {
            V zmax = vload(s.logits + i);
            for (int c = 1; c < C; ++c) {
                const V z = vload(s.logits + c * bp + i);
                zmax = vmax(z, zmax);
            }
            V total{}, picked{}, zsum{};
            const V y = vload(label + i), wi = vload(w + i);
            for (int c = 0; c < C; ++c) {
                const V z = vload(s.logits + c * bp + i);
                const V e = M::exp(z - zmax);
                vstore(d + c * bp + i, e);
                total += e;
                picked = y == M::splat(T(c)) ? z : picked;
                if (smooth) zsum += z;
            }
            const V inv = M::recip(total);
            for (int c = 0; c < C; ++c) {
                V onehot = y == M::splat(T(c)) ? M::splat(1) : V{};
                if (smooth) onehot = onehot * keep + spread;
                vstore(d + c * bp + i, (vload(d + c * bp + i) * inv - onehot) * wi);
            }
            if (smooth) picked = picked * keep + zsum * spread;
            if constexpr (std::is_same<T, float>::value) {  // float: the log in lanes too
                const V term = wi * (M::log(total) + zmax - picked);
                loss_lanes += wi != V{} ? term : V{};
            } else {
                for (int k = 0; k < L; ++k)
                    if (wi[k] != 0) loss += double(wi[k]) * (std::log(double(total[k])) + zmax[k] - picked[k]);
            }
        }
        loss += vsum<T>(loss_lanes);
    } else {
        // squared error or binary log-loss, a vector of samples at a time;
        // float sums the loss in lanes, double per sample in double
        typedef Math M;
        typedef typename M::V V;
        constexpr int L = VT<T>::L;
        constexpr bool lanes = std::is_same<T, float>::value;
        const T* target = P.Yb + batch * C * bp;
        const V zero{}, one = M::splat(1);
        V loss_lanes{};
        for (int c = 0; c < C; ++c) {
            const T* z = s.logits + c * bp;
            const T* y = target + c * bp;
            T* dc = d + c * bp;
            for (long i = 0; i < used; i += L) {
                const V zi = vload(z + i), yi = vload(y + i), wi = vload(w + i);
                if (P.loss == LOSS_SQUARED) {  // half squared error, mean over outputs
                    const V r = zi - yi;
                    vstore(dc + i, r / T(C) * wi);
                    if constexpr (lanes) {
                        loss_lanes += T(0.5) * wi * r * r / T(C);
                    } else {
                        for (int k = 0; k < L; ++k) loss += 0.5 * double(wi[k]) * double(r[k]) * double(r[k]) / C;
                    }
                    continue;
                }
                // binary log-loss, summed over outputs: sigmoid - y, and
                // softplus(z) - y z, overflow-safe
                const V yt = smooth ? yi * keep + T(m.smoothing / 2) : yi;
                vstore(dc + i, (M::recip(one + M::exp(-zi)) - yt) * wi);
                if constexpr (lanes) {
                    // softplus(z) = max(z, 0) + log(1 + e^-|z|)
                    const V sp = vmax(zi, zero) + M::log(one + M::exp(vmin(zi, -zi)));
                    loss_lanes += wi != zero ? wi * (sp - yt * zi) : zero;
                } else {
                    for (int k = 0; k < L; ++k) {
                        const double zk = zi[k];
                        const double sp = zk > 0 ? zk + std::log1p(std::exp(-zk)) : std::log1p(std::exp(zk));
                        if (wi[k] != 0) loss += double(wi[k]) * (sp - double(yt[k]) * zk);
                    }
                }
            }
        }
        loss += vsum<T>(loss_lanes);
    }

    // backward: every weight and bias gradient is written once
    if (one_hidden_fused(m)) {
        const Layer &hidden = m.layers[0], &out = m.layers[1];
        T* g = s.grads;
        backward_one_hidden<T>(hidden.n_in, hidden.n_out, C, nv, x, s.a[0], s.z[0], m.drops() ? s.mask[0] : nullptr,
                               d, bp, params + out.w_off, out.ld, m.act, g + s.g_off[0], g + s.g_off[1],
                               g + s.g_off[2], g + s.g_off[3]);
        return loss;
    }
    for (int l = m.depth; l >= 0; --l) {
        const Layer& L = m.layers[l];
        const T* a_in = l > 0 ? s.a[l - 1] : x;
        T *gw = s.grads + s.g_off[2 * l], *gb = s.grads + s.g_off[2 * l + 1];
        if (outer_by_rows<T>(L.n_in, L.n_out)) {
            outer_rows<T>(L.n_in, L.n_out, nv, a_in, d, bp, gw, L.n_out, gb, s.transposed);
        } else {
            outer_lanes<T>(L.n_in, L.n_out, nv, a_in, d, bp, gw, L.n_out, gb);
        }
        if (l > 0) {
            // delta_prev (n_in, bp) = W (n_in, n_out) . delta (n_out, bp), times
            // f'(z) from the forward's activation (or the f'(z) it left)
            const T *a = s.a[l - 1], *dz = s.z[l - 1];
            T* dp = s.delta_prev;
            if (m.drops()) {  // the forward's f'(z) and mask, or gate
                matmul_lanes<T>(L.n_in, L.n_out, params + L.w_off, L.ld, 1, d, bp, nv, nullptr,
                                StoreDropoutDelta<T>{dp, s.mask[l - 1], dz, m.act});
            } else {
                matmul_lanes<T>(L.n_in, L.n_out, params + L.w_off, L.ld, 1, d, bp, nv, nullptr,
                                StoreDeltaOf<T>{dp, a, dz, m.act});
            }
            std::swap(s.delta, s.delta_prev);
            d = s.delta;
        }
    }
    return loss;
}

// Adam's bias corrections at the model's step t: one pair of powers a
// step for all of its tensors (as torch, in the parameters' precision).
template <class T> struct AdamStep {
    T step_size = 0, bias2_sqrt = 1;
    AdamStep(const Model& m, double t, BetaPowers& powers) {
        if (m.solver == SGD) return;
        double power1, power2;
        powers(double(T(m.beta1)), double(T(m.beta2)), t, power1, power2);
        const T bias1 = T(1) - T(power1);
        const T bias2 = T(1) - T(power2);
        step_size = T(m.lr) / bias1;
        bias2_sqrt = std::sqrt(bias2);
    }
};

// Adam's update of one run of n values, as torch's fused Adam / AdamW:
// weight decay wd coupled (added to the gradient) or AdamW's decoupled
// one (p *= 1 - lr * wd first), amsgrad's running maximum of the second
// moment (m3) where asked. The form every build but float on AVX-512
// runs: torch's arithmetic, two divisions and a square root a value,
// which the compiler vectorises.
template <class T, bool AMSGRAD, bool DECOUPLED> struct AdamRun {
    static void run(const Model& m, T* p, T* m1, T* m2, T* m3, const T* g, long n, T decay, const AdamStep<T>& adam) {
        const T b1 = T(m.beta1), b2 = T(m.beta2), lr = T(m.lr), eps = T(m.eps);
        const T step_size = adam.step_size, bias2_sqrt = adam.bias2_sqrt;
        for (long c = 0; c < n; ++c) {
            if (DECOUPLED) p[c] *= T(1) - lr * decay;  // as torch's fused AdamW
            const T grad = DECOUPLED ? g[c] : g[c] + decay * p[c];
            m1[c] += (grad - m1[c]) * (T(1) - b1);  // lerp, as torch
            m2[c] = b2 * m2[c] + (T(1) - b2) * grad * grad;
            T second = m2[c];
            if (AMSGRAD) second = m3[c] = std::max(m3[c], m2[c]);
            const T denom = std::sqrt(second) / bias2_sqrt + eps;
            p[c] -= step_size * m1[c] / denom;
        }
    }
};

#if SKP_AVX512_FLOATS
// float on AVX-512: no division. AVX-512 divides a vector of floats in
// about ten cycles and takes its square root in about as many, on one
// unit: torch's form of the update, two divisions and a root a value,
// waited on that unit for about 60 % of its time (`perf annotate`), and the
// update was 6-10 % of a narrow network's step. Here the bias correction
// multiplies the root (its reciprocal rounded once) and the quotient is
// the reciprocal estimate refined by one Newton step (VMath<float>::recip,
// about 1 ulp): the values differ from torch's in the last bits, as the
// float build's activations do. Every lane computes alone, a run's tail
// in a vector of its own, so a value's update does not depend on where it
// lies in its run (a model's layout differs alone and in a population).
template <bool AMSGRAD, bool DECOUPLED> struct AdamRun<float, AMSGRAD, DECOUPLED> {
    typedef VT<float>::V V;
    static constexpr int L = VT<float>::L;
#if SKP_VBYTES == 64
    typedef __mmask16 Mask;
    static SKP_INLINE V load(const float* x, Mask k) { return (V)_mm512_maskz_loadu_ps(k, x); }
    static SKP_INLINE void store(float* x, V v, Mask k) { _mm512_mask_storeu_ps(x, k, (__m512)v); }
    static SKP_INLINE V root(V x) { return (V)_mm512_sqrt_ps((__m512)x); }
#else
    typedef __mmask8 Mask;
    static SKP_INLINE V load(const float* x, Mask k) { return (V)_mm256_maskz_loadu_ps(k, x); }
    static SKP_INLINE void store(float* x, V v, Mask k) { _mm256_mask_storeu_ps(x, k, (__m256)v); }
    static SKP_INLINE V root(V x) { return (V)_mm256_sqrt_ps((__m256)x); }
#endif
    static void run(const Model& m, float* p, float* m1, float* m2, float* m3, const float* g, long n,
                    float decay, const AdamStep<float>& adam) {
        const float one_minus_b1 = 1.0f - float(m.beta1), b2 = float(m.beta2), one_minus_b2 = 1.0f - b2;
        const float shrink = 1.0f - float(m.lr) * decay, eps = float(m.eps);
        const float inv_bias2_sqrt = float(1.0 / double(adam.bias2_sqrt)), step_size = adam.step_size;
        // the lanes of mask k from c on (a run's tail: the lanes past it
        // load zeros, compute apart and are not stored)
        auto lanes = [&](long c, Mask k) {
            V pv = load(p + c, k), grad = load(g + c, k), a = load(m1 + c, k), b = load(m2 + c, k);
            if (DECOUPLED) pv = pv * shrink;
            if (!DECOUPLED) grad = grad + decay * pv;
            a = a + (grad - a) * one_minus_b1;
            b = b2 * b + one_minus_b2 * grad * grad;
            V second = b;
            if (AMSGRAD) second = vmax(load(m3 + c, k), b), store(m3 + c, second, k);
            pv = pv - (step_size * a) * VMath<float>::recip(root(second) * inv_bias2_sqrt + eps);
            store(p + c, pv, k), store(m1 + c, a, k), store(m2 + c, b, k);
        };
        long c = 0;
        for (; c + L <= n; c += L) lanes(c, Mask(~0u));
        if (c < n) lanes(c, Mask((1u << (n - c)) - 1));
    }
};
#endif

// torch's fused Adam / AdamW / SGD update of one tensor of n_rows x n_cols values
// (row stride ld in the flat buffers, dense in g), weight decay wd: coupled
// (added to the gradient), or AdamW's decoupled one (p *= 1 - lr * wd first).
template <class T>
void update_tensor(const Model& m, const Problem<T>& P, long off, long ld, int n_rows, int n_cols, const T* g,
                   double wd, const AdamStep<T>& adam) {
    const RowRuns runs = row_runs(n_rows, n_cols, ld);  // unpadded: one run the compiler vectorises
    n_rows = runs.runs;
    n_cols = int(runs.length);
    T* p = P.params + off;
    T* s1 = P.state1 + off;
    if (m.solver != SGD) {  // Adam or AdamW, with or without amsgrad
        T* s2 = P.state2 + off;
        const bool amsgrad = m.solver == ADAM_AMSGRAD || m.solver == ADAMW_AMSGRAD;
        const bool decoupled = m.solver == ADAMW || m.solver == ADAMW_AMSGRAD;
        T* s3 = amsgrad ? P.state3 + off : nullptr;
        const T decay = T(wd);
        for (int r = 0; r < n_rows; ++r) {
            T* m3 = amsgrad ? s3 + r * ld : nullptr;
            auto run = [&](auto amsgrad_, auto decoupled_) {
                AdamRun<T, decltype(amsgrad_)::value, decltype(decoupled_)::value>::run(
                    m, p + r * ld, s1 + r * ld, s2 + r * ld, m3, g + long(r) * n_cols, n_cols, decay, adam);
            };
            using Yes = std::true_type;
            using No = std::false_type;
            if (amsgrad)
                decoupled ? run(Yes{}, Yes{}) : run(Yes{}, No{});
            else
                decoupled ? run(No{}, Yes{}) : run(No{}, No{});
        }
    } else {
        const T mu = T(m.momentum), lr = T(m.lr), decay = T(wd);
        for (int r = 0; r < n_rows; ++r) {
            T* pr = p + r * ld;
            T* buf = s1 + r * ld;
            const T* gr = g + long(r) * n_cols;
            for (int c = 0; c < n_cols; ++c) {
                T grad = gr[c] + decay * pr[c];
                if (mu != 0) {
                    buf[c] = mu * buf[c] + grad;
                    grad = m.nesterov ? grad + mu * buf[c] : buf[c];
                }
                pr[c] -= lr * grad;
            }
        }
    }
}

template <class T>
void update_model(const Model& m, const Problem<T>& P, Scratch<T>& s, double weight_sum, double t) {
    const T* grads = s.grads;
    const std::vector<long>& g_off = s.g_off;
    // scikit-learn's L2 gradient alpha * W / (sum of the batch's weights), or
    // AdamW's decoupled decay alpha
    const bool decoupled = m.solver == ADAMW || m.solver == ADAMW_AMSGRAD;
    const double wd = m.alpha == 0 ? 0.0 : decoupled ? m.alpha : m.alpha / weight_sum;
    const AdamStep<T> adam(m, t, s.powers);
    for (int l = 0; l <= m.depth; ++l) {
        const Layer& L = m.layers[l];
        update_tensor<T>(m, P, L.w_off, L.ld, L.n_in, L.n_out, grads + g_off[2 * l], wd, adam);
        update_tensor<T>(m, P, L.b_off, 0, 1, L.n_out, grads + g_off[2 * l + 1], 0.0, adam);
    }
}

// The training steps [first, last) of the plan (mode 0), the run's epoch
// `epoch`: forward, backward and update of every step the model's fold
// takes. Returns the summed batch losses times their real rows; t counts
// the model's optimizer steps.
template <class T> double train_steps(const Model& m, const Problem<T>& P, Scratch<T>& s, long first, long last,
                                      long epoch, double& t) {
    double loss_sum = 0;
    for (long step = first; step < last; ++step) {
        const long sk = step * P.n_folds + m.fold;
        if (!P.stepping[sk]) continue;
        loss_sum += forward_backward<T>(m, P, int(step), epoch, step - first, s) * P.counts[sk];
        t += 1;
        update_model<T>(m, P, s, P.weight_sums[sk], t);
    }
    return loss_sum;
}

// Sum of the model's squared weights (biases excluded), as the L2 term, in
// double. Sixteen running sums (weight k of a run into sum k mod 16, added
// pairwise at the end), the same order at every vector width; an unpadded
// layer is one run of all its weights. One running sum was a chain of
// dependent adds, 6 % of an iris search's kernel time; four sums still
// were one chain of vector adds (a (64, 32) network's epoch of 90 rows
// spent 5 % of its time here).
template <class T> double squared_weights(const Model& m, const T* params) {
    constexpr int S = 16;
    double sums[S] = {};
    for (int l = 0; l <= m.depth; ++l) {
        const Layer& L = m.layers[l];
        const RowRuns runs = row_runs(L.n_in, L.n_out, L.ld);
        for (int r = 0; r < runs.runs; ++r) {
            const T* w = params + L.w_off + long(r) * L.ld;
            long c = 0;
            for (; c + S <= runs.length; c += S)
                for (int k = 0; k < S; ++k) sums[k] += double(w[c + k]) * double(w[c + k]);
            for (int k = 0; c < runs.length; ++c, ++k) sums[k] += double(w[c]) * double(w[c]);
        }
    }
    for (int half = S / 2; half >= 1; half /= 2)
        for (int k = 0; k < half; ++k) sums[k] += sums[k + half];
    return sums[0];
}

// The epoch's loss as the torch engine forms it: every operation rounded
// to T, in its order (loss_sums / rows + 0.5 * alpha * |W|^2 * batches / rows;
// no product feeds a sum, so no FMA contraction can change a rounding).
template <class T> T epoch_loss(double loss_sum, double squared, double alpha, double rows, double batches) {
    const T size = T(rows);
    const T l2 = T(T(T(T(0.5) * T(alpha)) * T(squared)) * T(batches)) / size;
    return T(loss_sum) / size + l2;
}

// scikit-learn's rule on one epoch's loss (StoppingRule in the engine):
// true where the model stops now.
inline bool rule_stops(double loss, double& best, int64_t& count, double tol, int64_t patience) {
    if (!std::isfinite(loss)) return true;  // diverged
    const bool no_gain = !(loss <= best - tol);
    if (loss < best) best = loss;
    count = no_gain ? count + 1 : 0;
    return count > patience;
}

// The weights and biases of model m (its real widths) from one flat
// buffer into another of the same layout.
template <class T> void copy_weights(const Model& m, const T* from, T* to) {
    for (int l = 0; l <= m.depth; ++l) {
        const Layer& L = m.layers[l];
        for (int r = 0; r < L.n_in; ++r)
            std::memcpy(to + L.w_off + r * L.ld, from + L.w_off + r * L.ld, sizeof(T) * L.n_out);
        std::memcpy(to + L.b_off, from + L.b_off, sizeof(T) * L.n_out);
    }
}

// The training loss of one evaluation row without label smoothing: its
// outputs z[c * stride], its targets y (a class index for the softmax's
// accuracy, C values otherwise), as the host's losses (softmax
// cross-entropy, half squared error averaged over the outputs, binary
// log-loss summed over them).
template <class T> T row_loss(int64_t score, const T* z, long stride, int C, const T* y) {
    if (score == SCORE_ACCURACY) {
        T zmax = z[0];
        for (int c = 1; c < C; ++c) zmax = std::max(zmax, z[c * stride]);
        T total = 0;
        for (int c = 0; c < C; ++c) total += std::exp(z[c * stride] - zmax);
        return std::log(total) + zmax - z[long(y[0]) * stride];
    }
    T sum = 0;
    for (int c = 0; c < C; ++c) {
        const T zc = z[c * stride];
        if (score == SCORE_R2) {
            sum += (zc - y[c]) * (zc - y[c]);
        } else {  // softplus(z) - y z, overflow-safe
            sum += std::max(zc, T(0)) - y[c] * zc + std::log1p(std::exp(-std::fabs(zc)));
        }
    }
    return score == SCORE_R2 ? T(0.5) * (sum / T(C)) : sum;
}

// Model m's evaluation after epoch e of the call (see Epochs): its
// outputs for its fold's rows written out, or scored.
template <class T> void evaluate_fold(const Model& m, const Epochs& E, int64_t e, const T* params, Scratch<T>& s) {
    const int C = m.n_outputs(), F = m.layers[0].n_in, block = int(E.eval_block);
    const long n_pad = E.eval_blocks * E.eval_block, rows = E.eval_fold_rows[m.fold];
    const T* X = static_cast<const T*>(E.eval_X) + m.fold * n_pad * F;
    if (E.score == SCORE_NONE) {
        T* out = static_cast<T*>(E.eval_out) + (e * E.n_slots + m.slot) * E.eval_rows * C;
        std::fill(out, out + E.eval_rows * C, T(0));
        forward_rows<T>(m, X, int(E.eval_blocks), block, int(rows), params, out + E.eval_fold_first[m.fold] * C, s);
        return;
    }
    const int y_width = E.score == SCORE_ACCURACY ? 1 : C;
    const T* y = static_cast<const T*>(E.eval_y) + m.fold * n_pad * y_width;
    const T* w = static_cast<const T*>(E.eval_w) + m.fold * n_pad;
    // the host's sums, in T: weighted hits and weights (accuracies), each
    // output's weighted squared residual (R^2)
    T hits = 0, weights = 0;
    // the validation loss's weighted sum and weights, in T
    const bool with_loss = E.val_losses != nullptr;
    T loss_sum = 0, loss_weights = 0;
    static thread_local std::vector<T> residual;
    residual.assign(E.score == SCORE_R2 ? C : 0, T(0));
    bool finite = true;
    s.prepare(m, block);
    for (long b = 0; b * block < rows; ++b) {
        forward<T>(m, X + b * F * block, block, block, params, s);
        const int n = int(std::min<long>(block, rows - b * block));
        const T* z = s.logits;
        for (int r = 0; r < n; ++r) {
            const long row = b * block + r;
            const T wr = w[row], *yr = y + row * y_width;
            if (wr != T(0))
                for (int c = 0; c < C; ++c) finite = finite && std::isfinite(z[c * block + r]);
            if (with_loss) {
                loss_sum += wr * row_loss<T>(E.score, z + r, block, C, yr);
                loss_weights += wr;
            }
            if (E.score == SCORE_R2) {
                for (int c = 0; c < C; ++c) {
                    const T d = z[c * block + r] - yr[c];
                    residual[c] += wr * (d * d);
                }
                continue;
            }
            bool hit = true;
            if (E.score == SCORE_ACCURACY) {  // the first of the largest, as argmax
                int top = 0;
                for (int c = 1; c < C; ++c)
                    if (z[c * block + r] > z[top * block + r]) top = c;
                hit = T(top) == yr[0];
            } else {
                for (int c = 0; c < C; ++c) hit = hit && ((z[c * block + r] > T(0)) == (yr[c] > T(0.5)));
            }
            hits += T(hit) * wr;
            weights += wr;
        }
    }
    T score;
    if (E.score == SCORE_R2) {
        const T* total = static_cast<const T*>(E.eval_total) + m.fold * C;
        T sum = 0;
        for (int c = 0; c < C; ++c)
            sum += total[c] > T(0) ? T(1) - residual[c] / total[c] : T(residual[c] == T(0));
        score = sum / T(C);
    } else {
        score = hits / weights;
    }
    E.scores[e * E.n_slots + m.slot] = finite ? double(score) : std::nan("");
    if (with_loss) E.val_losses[e * E.n_slots + m.slot] = finite ? double(loss_sum / loss_weights) : std::nan("");
}

// restore_best_weights (Epochs::best_loss): model m keeps its weights where
// epoch e's validation loss is below its lowest so far (`lowest`, updated;
// NaN never is), the host's BestEpochs on a model whose training loss is
// finite.
template <class T>
void keep_if_lowest(const Model& m, const Epochs& E, int64_t e, const T* params, double& lowest) {
    const double loss = E.val_losses[e * E.n_slots + m.slot];
    if (!(loss < lowest)) return;
    lowest = loss;
    copy_weights<T>(m, params, static_cast<T*>(E.best_params));
    E.best_epochs[m.slot] = e + 1;
}

// Mode 0 over several epochs (see Epochs).
template <class T> void run_epochs(const Model& m, const Problem<T>& P, Scratch<T>& s, double t) {
    const Epochs& E = *P.epochs;
    double best = E.best[m.slot];
    int64_t count = E.count[m.slot], done = 0;
    double lowest = E.best_loss != nullptr ? E.best_loss[m.slot] : 0;  // restore_best_weights
    double loss_sum = 0;
    for (int64_t e = 0; e < E.n_epochs; ++e) {
        loss_sum = train_steps<T>(m, P, s, E.ends[e], E.ends[e + 1], E.first_epoch + e, t);
        done = e + 1;
        const T loss = epoch_loss<T>(loss_sum, squared_weights<T>(m, P.params), E.loss_alpha[m.slot],
                                     E.fold_sizes[m.fold], E.fold_batches[m.fold]);
        E.losses[e * E.n_slots + m.slot] = double(loss);
        if (E.eval_X != nullptr) {
            evaluate_fold<T>(m, E, e, P.params, s);
            s.prepare(m, P.bp);  // the training batches' scratch again
        }
        if (E.best_loss != nullptr && std::isfinite(double(loss))) keep_if_lowest<T>(m, E, e, P.params, lowest);
        if (rule_stops(double(loss), best, count, E.tol, E.patience)) break;
    }
    E.epochs_done[m.slot] = done;
    P.loss_sums[m.slot] += T(loss_sum);  // the last epoch's, as one epoch's call leaves it
}

// Mode 0 over several epochs under early stopping (Epochs::n_groups > 0):
// group g, one model's fold replicas, on one thread, epoch by epoch. Each
// member that still trains runs the epoch, its loss and its score on its
// fold's evaluation rows; a member whose loss is not finite stops alone
// (diverged). The others' mean score, summed in fold order and divided by
// their count (the host's fold_mean), feeds the rule, maximised: where it
// improves, each of them keeps its weights (best_params; with best_loss,
// each keeps those of its own lowest validation loss instead); where it
// stops, they all stop.
template <class T>
void run_group(int g, const int64_t* meta, const double* hyper, const Problem<T>& P, Scratch<T>& s) {
    const Epochs& E = *P.epochs;
    std::vector<Model> members;
    std::vector<double> t, loss_sum, lowest;
    std::vector<char> training;
    for (int64_t i = E.group_first[g]; i < E.group_first[g + 1]; ++i) {
        const int64_t row = E.group_rows[i];
        members.emplace_back(meta + row * META, hyper + row * HYPER);
        t.push_back(P.step0[members.back().fold] - members.back().step_offset);
        loss_sum.push_back(0), training.push_back(1);
        lowest.push_back(E.best_loss != nullptr ? E.best_loss[members.back().slot] : 0);
        E.epochs_done[members.back().slot] = 0;
    }
    double best = E.group_best[g];
    int64_t count = E.group_count[g];
    T* best_params = static_cast<T*>(E.best_params);
    for (int64_t e = 0; e < E.n_epochs; ++e) {
        double score_sum = 0;
        int healthy = 0;
        for (size_t i = 0; i < members.size(); ++i) {
            if (!training[i]) continue;
            const Model& m = members[i];
            s.prepare(m, P.bp);
            loss_sum[i] = train_steps<T>(m, P, s, E.ends[e], E.ends[e + 1], E.first_epoch + e, t[i]);
            E.epochs_done[m.slot] = e + 1;
            const T loss = epoch_loss<T>(loss_sum[i], squared_weights<T>(m, P.params), E.loss_alpha[m.slot],
                                         E.fold_sizes[m.fold], E.fold_batches[m.fold]);
            E.losses[e * E.n_slots + m.slot] = double(loss);
            evaluate_fold<T>(m, E, e, P.params, s);
            if (!std::isfinite(double(loss))) {
                training[i] = 0;  // diverged
                continue;
            }
            score_sum += E.scores[e * E.n_slots + m.slot];
            ++healthy;
            if (E.best_loss != nullptr) keep_if_lowest<T>(m, E, e, P.params, lowest[i]);
        }
        if (healthy == 0) break;
        const double mean = score_sum / healthy;
        const bool no_gain = !(mean >= best + E.tol);  // NaN never gains
        const bool improved = mean > best;
        if (improved) best = mean;
        count = no_gain ? count + 1 : 0;
        for (size_t i = 0; i < members.size(); ++i) {
            if (!training[i]) continue;
            if (improved && E.best_loss == nullptr) {  // else each keeps its own (above)
                copy_weights<T>(members[i], P.params, best_params);
                E.best_epochs[members[i].slot] = e + 1;
            }
            if (count > E.patience) training[i] = 0;
        }
        if (count > E.patience) break;
    }
    for (size_t i = 0; i < members.size(); ++i)
        P.loss_sums[members[i].slot] += T(loss_sum[i]);  // the last epoch's, as one epoch's call leaves it
}

template <class T> void run_model(int mode, const Model& m, const Problem<T>& P, Scratch<T>& s) {
    s.prepare(m, P.bp);
    double t = P.step0[m.fold] - m.step_offset;  // the model's own optimizer steps
    if (mode == 0) {
        if (P.epochs != nullptr) {
            run_epochs<T>(m, P, s, t);
        } else {
            P.loss_sums[m.slot] += T(train_steps<T>(m, P, s, 0, P.n_steps, P.epoch, t));
        }
        return;
    }
    if (mode == 2) {  // update from the caller's gradient buffer
        // gather the flat gradients into the dense layout
        for (int l = 0; l <= m.depth; ++l) {
            const Layer& L = m.layers[l];
            for (int r = 0; r < L.n_in; ++r)
                for (int c = 0; c < L.n_out; ++c)
                    s.grads[s.g_off[2 * l] + long(r) * L.n_out + c] = P.grads[L.w_off + r * L.ld + c];
            for (int c = 0; c < L.n_out; ++c) s.grads[s.g_off[2 * l + 1] + c] = P.grads[L.b_off + c];
        }
        if (P.stepping[m.fold]) update_model<T>(m, P, s, P.weight_sums[m.fold], t + 1);
        return;
    }
    // modes 1 and 3: the gradients of step 0
    double loss_sum = 0;
    if (P.stepping[m.fold]) {
        const double loss = mode == 3 ? forward_backward<T, typename VectorMath<T>::M>(m, P, 0, P.epoch, 0, s)
                                      : forward_backward<T>(m, P, 0, P.epoch, 0, s);
        loss_sum = loss * P.counts[m.fold];
    }
    // scatter the dense gradient into the flat buffer (a fold that
    // sits the step out computed none: its slots are left as they are)
    if (P.stepping[m.fold]) {
        for (int l = 0; l <= m.depth; ++l) {
            const Layer& L = m.layers[l];
            for (int r = 0; r < L.n_in; ++r)
                for (int c = 0; c < L.n_out; ++c)
                    P.grads[L.w_off + r * L.ld + c] = s.grads[s.g_off[2 * l] + long(r) * L.n_out + c];
            for (int c = 0; c < L.n_out; ++c) P.grads[L.b_off + c] = s.grads[s.g_off[2 * l + 1] + c];
        }
    }
    P.loss_sums[m.slot] += T(loss_sum);
}

bool depths_valid(int n_models, const int64_t* meta) {
    for (int i = 0; i < n_models; ++i) {
        const int64_t depth = meta[long(i) * META + M_DEPTH];
        if (depth < 0 || depth > MAX_DEPTH) return false;
    }
    return true;
}

// An entry's error code for its models and batch width (rows along the
// vector lanes): 1 where a model's depth is out of range, 2 where the
// width is not whole vectors; 0 where they can run.
template <class T> int unrunnable(int n_models, const int64_t* meta, long width) {
    if (!depths_valid(n_models, meta)) return 1;
    return width % VT<T>::L != 0 ? 2 : 0;
}

// While it lives, the thread's float arithmetic flushes subnormal values to
// zero, inputs and results (x86's MXCSR FTZ and DAZ, aarch64's FPCR FZ); it
// restores the thread's mode when it goes. Each training thread holds one
// (run, for_each_item): a long float32 fit decays the weights of units that
// an L2 penalty silences, and their Adam moments, through the subnormal
// range (below 1.2e-38), where x86 takes a microcode assist of about a
// hundred cycles for each operation: a population's step ran 2.6x slower
// after 1,500 epochs than in its first (docs/user_guide/performance.rst,
// "Subnormal numbers"). Flushed, such a value is 0, which it differs from
// by less than any float32 tolerance. The forward of predictions
// (forward_models) keeps IEEE results, as double does everywhere, as torch:
// the float64 runs are the reference the invariants are tested in, and a
// double needs ten times the decay to reach its subnormals (below
// 2.2e-308). -DSKP_KEEP_SUBNORMALS keeps IEEE subnormals in float too
// (benchmarks/tiles.py --variants "" SKP_KEEP_SUBNORMALS times both).
template <class T> struct SubnormalsFlushed {};
#if !defined(SKP_KEEP_SUBNORMALS)
template <> struct SubnormalsFlushed<float> {
#if defined(__SSE2__)
    unsigned saved = _mm_getcsr();
    SubnormalsFlushed() { _mm_setcsr(saved | 0x8040); }  // FTZ (bit 15) and DAZ (bit 6)
    ~SubnormalsFlushed() { _mm_setcsr(saved); }
#elif defined(__aarch64__)
    uint64_t saved = read_fpcr();
    SubnormalsFlushed() { write_fpcr(saved | (uint64_t(1) << 24)); }  // FZ
    ~SubnormalsFlushed() { write_fpcr(saved); }
    static uint64_t read_fpcr() {
        uint64_t fpcr;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
        return fpcr;
    }
    static void write_fpcr(uint64_t fpcr) { __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr)); }
#endif
    SubnormalsFlushed(const SubnormalsFlushed&) = delete;
    SubnormalsFlushed& operator=(const SubnormalsFlushed&) = delete;
};
#endif

// fn(i, scratch) for every item i (a model, or an early-stopping group of
// models) on n_threads threads. Items are independent: threads take the
// next run of them as they finish one (WorkQueue; no barrier inside an
// epoch, so a stalled thread delays only the items it holds). Each thread
// holds a Guard (a thread mode such as SubnormalsFlushed) while it works,
// and restores its mode after its last item.
struct NoGuard {};
template <class T, class Guard = NoGuard, class F> void for_each_item(int n_items, int n_threads, F fn) {
    struct Thread {
        const Guard guard{};
        Scratch<T> scratch;
    };
    for_each_item_on_threads<Thread>(n_items, n_threads, [&](int i, Thread& thread) { fn(i, thread.scratch); });
}

template <class T>
int run(int mode, int n_models, const int64_t* meta, const double* hyper, const Problem<T>& P, int n_threads) {
    if (const int code = unrunnable<T>(n_models, meta, P.bp)) return code;
    if (P.epochs != nullptr && P.epochs->n_groups > 0) {
        for_each_item<T, SubnormalsFlushed<T>>(int(P.epochs->n_groups), n_threads, [&](int g, Scratch<T>& s) {
            run_group<T>(g, meta, hyper, P, s);
        });
        return 0;
    }
    for_each_item<T, SubnormalsFlushed<T>>(n_models, n_threads, [&](int i, Scratch<T>& s) {
        run_model<T>(mode, Model(meta + long(i) * META, hyper + long(i) * HYPER), P, s);
    });
    return 0;
}

// The outputs of every model for n_rows rows: X in blocks (n_blocks, F,
// block) as the step's batches (samples along the lanes, zero padding),
// out (n_slots, n_rows, n_outputs) row-major, model m's rows at its slot.
template <class T>
int forward_models(int n_models, const int64_t* meta, int n_blocks, int block, const T* X, int n_rows,
                   const T* params, T* out, int n_threads) {
    if (const int code = unrunnable<T>(n_models, meta, block)) return code;
    const double no_hyper[HYPER] = {};
    for_each_item<T>(n_models, n_threads, [&](int i, Scratch<T>& s) {
        const Model m(meta + long(i) * META, no_hyper);
        forward_rows<T>(m, X, n_blocks, block, n_rows, params, out + long(m.slot) * n_rows * m.n_outputs(), s);
    });
    return 0;
}

}  // namespace

#define SKP_FORWARD_ENTRY(NAME, T)                                                                      \
    extern "C" int NAME(int n_models, const int64_t* meta, int n_blocks, int block, const T* X, int n_rows, \
                        const T* params, T* out, int n_threads) {                                       \
        return forward_models<T>(n_models, meta, n_blocks, block, X, n_rows, params, out, n_threads);   \
    }

#if SKP_PART != 2
SKP_FORWARD_ENTRY(skp_forward_f32, float)
#endif
#if SKP_PART != 1
SKP_FORWARD_ENTRY(skp_forward_f64, double)
#endif

#define SKP_ENTRY(NAME, T)                                                                               \
    extern "C" int NAME(int mode, int n_models, const int64_t* meta, const double* hyper, int n_steps,  \
                        int n_folds, int bp, int n_features, int n_outputs, int loss, const T* Xb,        \
                        const T* Yb, const T* Wb, const double* counts, const double* weight_sums,        \
                        const uint8_t* stepping, const double* step0, T* params, T* grads, T* state1,     \
                        T* state2, T* state3, T* loss_sums, int n_threads, int epoch) {                   \
        Problem<T> P{n_steps, n_folds, bp, n_features, n_outputs, loss, Xb, Yb, Wb, counts,               \
                     weight_sums, step0, stepping, params, grads, state1, state2, loss_sums, state3,      \
                     epoch};                                                                              \
        return run<T>(mode, n_models, meta, hyper, P, n_threads);                                        \
    }

#if SKP_PART != 2
SKP_ENTRY(skp_run_f32, float)
#endif
#if SKP_PART != 1
SKP_ENTRY(skp_run_f64, double)
#endif

// One model's gradients (mode 3: no L2 term, double's transcendentals in
// vector lanes) at `params`, in a scratch the caller keeps from one call to
// the next. The fused L-BFGS (lbfgs.cpp) evaluates each model up to
// hundreds of times in a row on one thread; through skp_run, every
// evaluation made, touched and freed a scratch of its own (hundreds of KB:
// the activations of every training row), an allocation and its page
// faults each time.
#define SKP_GRADIENTS_ENTRY(NAME, NEW_SCRATCH, FREE_SCRATCH, T)                                          \
    extern "C" void* NEW_SCRATCH() { return new Scratch<T>(); }                                         \
    extern "C" void FREE_SCRATCH(void* scratch) { delete static_cast<Scratch<T>*>(scratch); }            \
    extern "C" int NAME(const int64_t* meta, const double* hyper, int n_folds, int bp, int n_features,    \
                        int n_outputs, int loss, const T* Xb, const T* Yb, const T* Wb,                  \
                        const double* counts, const double* weight_sums, const uint8_t* stepping,        \
                        const double* step0, T* params, T* grads, T* loss_sums, void* scratch) {         \
        if (const int code = unrunnable<T>(1, meta, bp)) return code;                                    \
        Problem<T> P{1, n_folds, bp, n_features, n_outputs, loss, Xb, Yb, Wb, counts, weight_sums,        \
                     step0, stepping, params, grads, nullptr, nullptr, loss_sums, nullptr, 0};           \
        const SubnormalsFlushed<T> flushed;                                                              \
        run_model<T>(3, Model(meta, hyper), P, *static_cast<Scratch<T>*>(scratch));                      \
        return 0;                                                                                        \
    }

#if SKP_PART != 2
SKP_GRADIENTS_ENTRY(skp_gradients_f32, skp_scratch_new_f32, skp_scratch_free_f32, float)
#endif
#if SKP_PART != 1
SKP_GRADIENTS_ENTRY(skp_gradients_f64, skp_scratch_new_f64, skp_scratch_free_f64, double)
#endif

namespace {
// Whether the validation losses and the best weights (if asked) have the
// scores and buffers they need, and the early-stopping groups (if any)
// cover the n_models rows of meta, each once.
bool keeping_valid(const Epochs& E, int n_models) {
    const bool scored = E.eval_X != nullptr && E.score != SCORE_NONE && E.scores != nullptr;
    if (E.val_losses != nullptr && !scored) return false;
    if (E.best_loss != nullptr &&
        (E.val_losses == nullptr || E.best_params == nullptr || E.best_epochs == nullptr))
        return false;
    if (E.n_groups <= 0) return true;
    if (E.group_first == nullptr || E.group_rows == nullptr || E.group_best == nullptr ||
        E.group_count == nullptr || E.best_params == nullptr || E.best_epochs == nullptr ||
        E.eval_X == nullptr || E.score == SCORE_NONE || E.scores == nullptr)
        return false;
    if (E.group_first[0] != 0 || E.group_first[E.n_groups] != n_models) return false;
    std::vector<char> seen(n_models, 0);
    for (int64_t g = 0; g < E.n_groups; ++g) {
        if (E.group_first[g + 1] <= E.group_first[g]) return false;
        for (int64_t i = E.group_first[g]; i < E.group_first[g + 1]; ++i) {
            const int64_t row = E.group_rows[i];
            if (row < 0 || row >= n_models || seen[row]) return false;
            seen[row] = 1;
        }
    }
    return true;
}
}  // namespace

// Mode 0 over several epochs, with each epoch's loss and the stopping rule
// in the call (see Epochs); the arguments are skp_run_*'s, then `epochs`.
#define SKP_EPOCHS_ENTRY(NAME, T)                                                                        \
    extern "C" int NAME(int n_models, const int64_t* meta, const double* hyper, int n_steps, int n_folds,  \
                        int bp, int n_features, int n_outputs, int loss, const T* Xb, const T* Yb,        \
                        const T* Wb, const double* counts, const double* weight_sums,                     \
                        const uint8_t* stepping, const double* step0, T* params, T* state1, T* state2,    \
                        T* state3, T* loss_sums, const Epochs* epochs, int n_threads) {                   \
        if (epochs == nullptr || epochs->n_epochs < 1 || epochs->ends[0] != 0 ||                           \
            epochs->ends[epochs->n_epochs] != n_steps)                                                    \
            return 3;                                                                                      \
        if (!keeping_valid(*epochs, n_models)) return 4;                                                    \
        Problem<T> P{n_steps, n_folds, bp, n_features, n_outputs, loss, Xb, Yb, Wb, counts,               \
                     weight_sums, step0, stepping, params, nullptr, state1, state2, loss_sums, state3,    \
                     long(epochs->first_epoch), epochs};                                                   \
        return run<T>(0, n_models, meta, hyper, P, n_threads);                                            \
    }

#if SKP_PART != 2
SKP_EPOCHS_ENTRY(skp_run_epochs_f32, float)
#endif
#if SKP_PART != 1
SKP_EPOCHS_ENTRY(skp_run_epochs_f64, double)
#endif

namespace {

// vmax and vmin give the selects' bits on the lanes where instructions
// could differ from them: NaN on either side, +0 against -0, equal values
template <class T> bool selects_agree() {
    typedef typename VT<T>::V V;
    constexpr int L = VT<T>::L;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const T firsts[] = {nan, T(1), T(0), T(-0.0), T(2), T(-3), T(5), nan};
    const T seconds[] = {T(1), nan, T(-0.0), T(0), T(2), T(4), T(-7), nan};
    for (int start = 0; start < 8; start += L) {
        V a{}, b{};
        for (int i = 0; i < L; ++i) a[i] = firsts[(start + i) % 8], b[i] = seconds[(start + i) % 8];
        const V max = vmax(a, b), min = vmin(a, b);
        for (int i = 0; i < L; ++i) {
            const T max_select = a[i] > b[i] ? a[i] : b[i], min_select = a[i] < b[i] ? a[i] : b[i];
            if (std::memcmp(&max[i], &max_select, sizeof(T)) != 0 || std::memcmp(&min[i], &min_select, sizeof(T)) != 0)
                return false;
        }
    }
    return true;
}

// The gradients of one tiny softmax network (3 inputs, 5 tanh units, 3
// classes; a batch of 2 L - 3 weighted rows, so one vector of lanes is
// partly padding) by the kernel and by plain scalar loops: 0 where they
// agree to the precision's rounding. Run once per load, it catches a
// library that executes but computes nonsense on this CPU.
template <class T> int self_test() {
    constexpr int F = 3, H = 5, C = 3, L = VT<T>::L, BP = 2 * L, B = 2 * L - 3;
    constexpr long W1 = 0, B1 = F * H, W2 = B1 + H, B2 = W2 + H * C, N = B2 + C;
    std::vector<T> params(N), grads(N, T(0)), x(F * BP, T(0)), y(BP, T(0)), w(BP, T(0)), loss(1, T(0));
    for (long i = 0; i < N; ++i) params[i] = T(0.37 * std::sin(1.0 + 2.1 * i));
    double weight_total = 0;
    for (int i = 0; i < B; ++i) {
        for (int f = 0; f < F; ++f) x[f * BP + i] = T(std::cos(0.7 * i + 1.3 * f));
        y[i] = T(i % C);
        w[i] = T(1.0 + 0.25 * (i % 4));
        weight_total += double(w[i]);
    }
    for (int i = 0; i < B; ++i) w[i] = T(double(w[i]) / weight_total);
    int64_t meta[META] = {};
    meta[M_DEPTH] = 1, meta[M_ACT] = A_TANH;
    meta[M_SIZES] = F, meta[M_SIZES + 1] = H, meta[M_SIZES + 2] = C;
    meta[M_WOFF] = W1, meta[M_WOFF + 1] = W2, meta[M_BOFF] = B1, meta[M_BOFF + 1] = B2;
    meta[M_LD] = H, meta[M_LD + 1] = C;
    double hyper[HYPER] = {}, counts = B, weight_sums = 1, step0 = 0;
    const uint8_t stepping = 1;
    Problem<T> P{1, 1, BP, F, C, LOSS_SOFTMAX, x.data(), y.data(), w.data(), &counts, &weight_sums,
                 &step0, &stepping, params.data(), grads.data(), nullptr, nullptr, loss.data()};
    if (run<T>(1, 1, meta, hyper, P, 1) != 0) return 1;

    // the same by scalar loops, in double
    std::vector<double> expected(N, 0.0);
    double expected_loss = 0;
    for (int i = 0; i < B; ++i) {
        double a[H], z2[C], d2[C], zmax = -1e300, total = 0;
        for (int j = 0; j < H; ++j) {
            double z = params[B1 + j];
            for (int f = 0; f < F; ++f) z += double(x[f * BP + i]) * params[W1 + f * H + j];
            a[j] = std::tanh(z);
        }
        for (int c = 0; c < C; ++c) {
            z2[c] = params[B2 + c];
            for (int j = 0; j < H; ++j) z2[c] += a[j] * params[W2 + j * C + c];
            zmax = std::max(zmax, z2[c]);
        }
        for (int c = 0; c < C; ++c) total += std::exp(z2[c] - zmax);
        const int label = int(y[i]);
        expected_loss += double(w[i]) * (std::log(total) + zmax - z2[label]) * B;
        for (int c = 0; c < C; ++c) {
            d2[c] = (std::exp(z2[c] - zmax) / total - (c == label)) * double(w[i]);
            expected[B2 + c] += d2[c];
            for (int j = 0; j < H; ++j) expected[W2 + j * C + c] += a[j] * d2[c];
        }
        for (int j = 0; j < H; ++j) {
            double d1 = 0;
            for (int c = 0; c < C; ++c) d1 += d2[c] * params[W2 + j * C + c];
            d1 *= 1 - a[j] * a[j];
            expected[B1 + j] += d1;
            for (int f = 0; f < F; ++f) expected[W1 + f * H + j] += double(x[f * BP + i]) * d1;
        }
    }
    const double tolerance = std::is_same<T, float>::value ? 1e-4 : 1e-12;
    for (long i = 0; i < N; ++i)
        if (!(std::fabs(grads[i] - expected[i]) <= tolerance * (1 + std::fabs(expected[i])))) return 2;
    if (!(std::fabs(loss[0] - expected_loss) <= tolerance * (1 + std::fabs(expected_loss)))) return 3;
    return selects_agree<T>() ? 0 : 4;
}

}  // namespace

// 0 when the kernel computes one small network's gradients as plain loops
// do, in float (10 + its code otherwise) and double (20 + its code); the
// double half lives with the double entries (SKP_PART).
#if SKP_PART != 1
extern "C" int skp_self_test_f64() { return self_test<double>(); }
#endif
#if SKP_PART != 2
extern "C" int skp_self_test_f64();
extern "C" int skp_self_test() {
    const int f32 = self_test<float>();
    if (f32 != 0) return 10 + f32;
    const int f64 = skp_self_test_f64();
    return f64 != 0 ? 20 + f64 : 0;
}

// What the library was built for: vector bytes, vector registers, the
// tiles, and the ISA's name (at most `n` bytes with its terminating zero).
extern "C" int skp_target(int* vector_bytes, int* registers, int* tile_shape, char* isa, int n) {
    *vector_bytes = VBYTES, *registers = VREGS;
    const int shape[4] = {tiles::MM_ROWS, tiles::MM_VECS, tiles::OUTER_ROWS, tiles::OUTER_COLS};
    std::memcpy(tile_shape, shape, sizeof(shape));
    std::strncpy(isa, SKP_ISA, n - 1);
    isa[n - 1] = 0;
    return 0;
}

extern "C" int skp_layout(int* max_depth, int* meta, int* hyper) {
    *max_depth = MAX_DEPTH, *meta = META, *hyper = HYPER;
    return 0;
}
#endif
