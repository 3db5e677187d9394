// The vector width, register budget and register tiles of the compile
// target, and the width-generic vector operations the kernels are written
// with. Nothing in the kernels names a lane count or a register count: it
// comes from here, so one source serves every target.
//
//   target (compiler macros)        vector bytes  registers  float lanes
//   AVX-512 (__AVX512F__)           64            32         16
//   AVX2 + FMA, AVX (__AVX__)       32            16         8
//   aarch64 NEON (__aarch64__)      16            32         4
//   SSE2 .. SSE4.2, anything else   16            16         4
//
// The tiles (rows x vectors of accumulators held in registers by the two
// inner loops of mlp_step.cpp) are chosen per register budget, by
// measurement (benchmarks/tiles.py on the step benchmark's 240 models, one
// thread, AMD Zen 4; docs/user_guide/performance.rst):
//
//   * matmul (tile_mm): MM_ROWS x MM_VECS accumulators, MM_VECS loads of
//     the input and one broadcast coefficient live at once;
//   * weight gradient (tile_outer): OUTER_ROWS x OUTER_COLS accumulators and
//     OUTER_ROWS + OUTER_COLS loads live at once.
//
//   registers  matmul  outer  measured against
//   32         8 x 3   5 x 4  4x4 / 4x4: 7.42 -> 6.25 ms a step (AVX-512)
//   16, FMA    6 x 2   3 x 3  4x3 / 3x3: 6.72 -> 6.37 ms (AVX2)
//   16, no FMA 3 x 3   3 x 3  4x2 / 3x3: 16.1 -> 15.4 ms (SSE4.2)
//
// A matmul whose inner dimension is at most 4 (a narrow layer's inputs in
// the forward, its outputs in the backward) takes tile_narrow instead:
// its rows' coefficients in registers, every vector of lanes streamed.
// Narrow population (benchmarks/tiles.py --population narrow, SKP_NARROW_MAX=0
// against the default, two runs each): AVX-512 2.65 / 2.53 -> 2.15 / 2.13 ms,
// AVX2 2.37 / 2.84 -> 2.23 / 2.27 ms, SSE4.2 6.05 / 6.32 -> 5.57 / 5.62 ms.
//
// 8 x 3 and 6 x 2 are the shapes of the mature float32 GEMM micro-kernels
// for these budgets (BLIS armv8a 8 x 12 floats, BLIS haswell 6 x 16).
// -DSKP_TILE_SHAPE=6,2,3,3 (matmul rows, vectors, outer rows, columns)
// overrides them, to time other shapes with the same source.

#ifndef SKPMLP_VECTOR_TARGET_H
#define SKPMLP_VECTOR_TARGET_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace skp {

#if defined(__AVX512F__)
#define SKP_ISA "avx512"
#define SKP_WIDEST_BYTES 64
constexpr int VREGS = 32;
#define SKP_TILES 8, 3, 5, 4
#elif defined(__AVX__)
#if defined(__AVX2__) && defined(__FMA__)
#define SKP_ISA "avx2-fma"
#else
#define SKP_ISA "avx"
#endif
#define SKP_WIDEST_BYTES 32
constexpr int VREGS = 16;
#define SKP_TILES 6, 2, 3, 3
#elif defined(__aarch64__)
#define SKP_ISA "neon"
#define SKP_WIDEST_BYTES 16
constexpr int VREGS = 32;
#define SKP_TILES 8, 3, 5, 4  // as AVX-512's: the same 32 registers (not timed: emulated only)
#elif defined(__SSE4_2__)
#define SKP_ISA "sse4.2"
#define SKP_WIDEST_BYTES 16
constexpr int VREGS = 16;
#define SKP_TILES 3, 3, 3, 3
#elif defined(__SSE2__)
#define SKP_ISA "sse2"
#define SKP_WIDEST_BYTES 16
constexpr int VREGS = 16;
#define SKP_TILES 3, 3, 3, 3
#else
#define SKP_ISA "generic"
#define SKP_WIDEST_BYTES 16
constexpr int VREGS = 16;
#define SKP_TILES 3, 3, 3, 3
#endif

// A narrower vector than the target's widest, for timing (e.g. 32-byte
// vectors on AVX-512, which keep its 32 registers): -DSKP_VECTOR_BYTES=32.
#ifdef SKP_VECTOR_BYTES
#define SKP_VBYTES SKP_VECTOR_BYTES
#else
#define SKP_VBYTES SKP_WIDEST_BYTES
#endif

namespace tiles {
#ifndef SKP_TILE_SHAPE
#define SKP_TILE_SHAPE SKP_TILES
#endif
constexpr int SHAPE[4] = {SKP_TILE_SHAPE};
constexpr int MM_ROWS = SHAPE[0], MM_VECS = SHAPE[1], OUTER_ROWS = SHAPE[2], OUTER_COLS = SHAPE[3];
static_assert(MM_ROWS >= 1 && MM_VECS >= 1 && OUTER_ROWS >= 1 && OUTER_COLS >= 1, "empty tile");
}  // namespace tiles

// SKP_VBYTES (a macro, for #if) and VBYTES: the vector bytes in use
constexpr int VBYTES = SKP_VBYTES;
static_assert(VBYTES <= SKP_WIDEST_BYTES && VBYTES >= 16, "vector wider than the target's");

// GCC / clang vector extensions: arithmetic, comparisons and selects on
// whole vectors, lowered to the target's instructions (or split into
// several machine vectors where the target's are narrower).
template <class T, int BYTES> struct Vec {
    typedef T type __attribute__((vector_size(BYTES)));
};
template <class T> struct VT {
    typedef typename Vec<T, VBYTES>::type V;
    static constexpr int L = VBYTES / int(sizeof(T));  // lanes
};

#define SKP_FORCE_INLINE inline __attribute__((always_inline))

template <class T> inline typename VT<T>::V vload(const T* p) {
    typename VT<T>::V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}
template <class T> inline void vstore(T* p, typename VT<T>::V v) { std::memcpy(p, &v, sizeof(v)); }
// A vector loaded once and used by several multiply-adds, kept in a
// register for them: GCC folds the load into each multiply-add as its
// memory operand, loading the vector again for every one. A weight
// gradient tile (tile_outer, 5 x 4) made 24 loads for 20 multiply-adds
// where 9 do, and ran at half the FMA rate (AMD Zen 5, AVX-512: 45-53
// GFLOP/s in float64, 91-105 in float32; kept, 87-113 and 141-205), as did
// a matmul tile of few rows (an output layer of 3 or 4 units: 45-47 ->
// 84-103 in float64, 95-97 -> 200-225 in float32). The empty asm claims to
// change the vector, which no folded load could. Only with 32 registers:
// with 16 (AVX2, SSE) the kept vectors crowd out accumulators (the gradient
// tile at 0.65x on AVX2, float32, 4 inputs). -DSKP_FOLD_LOADS: the folded
// loads, for timing (benchmarks/tiles.py --variants "" SKP_FOLD_LOADS).
template <class T> inline typename VT<T>::V vload_kept(const T* p) {
    typename VT<T>::V v = vload<T>(p);
#if defined(__AVX512F__) && !defined(SKP_FOLD_LOADS)
    __asm__("" : "+v"(v));
#endif
    return v;
}
// Every lane x: x - 0, which is x for every x, so the compiler drops the
// subtraction and emits a bare broadcast (from memory: one load, no
// shuffle). 0 + x is not x for x = -0, so that form kept a scalar add
// before each broadcast, and broadcast from a register, which x86 runs on
// the shuffle port that AVX-512's second FMA unit shares: every
// coefficient of a matmul tile paid both (a step 1.02-1.19x faster
// without, at every width; docs/user_guide/performance.rst).
template <class T> inline typename VT<T>::V vsplat(T x) { return x - typename VT<T>::V{}; }

// vmax(a, b) = a > b ? a : b and vmin(a, b) = a < b ? a : b, lane by lane.
// x86's max and min are defined as exactly these selects (b wherever the
// comparison is false: a NaN lane, equal values, +0 against -0), so there
// they are one instruction with the same bits, where GCC lowers the select
// written out to a compare and a blend: the four clamps of the float32
// tanh were a fifth of its time on AVX2 (0.48 -> 0.37 ns a value,
// benchmarks/vector_math.py). Other targets keep the select (NEON's fmax
// and fmin differ on NaN and on signed zeros).
#define SKP_X86_SELECT(OP, BITS, PREFIX)                                      \
    if constexpr (sizeof(V) * 8 == BITS) {                                     \
        if constexpr (std::is_same<T, float>::value)                           \
            return (V)PREFIX##_##OP##_ps((__m##BITS)a, (__m##BITS)b);          \
        else                                                                   \
            return (V)PREFIX##_##OP##_pd((__m##BITS##d)a, (__m##BITS##d)b);    \
    }
#if defined(__AVX512F__)
#define SKP_X86_SELECTS(OP) SKP_X86_SELECT(OP, 128, _mm) SKP_X86_SELECT(OP, 256, _mm256) SKP_X86_SELECT(OP, 512, _mm512)
#elif defined(__AVX__)
#define SKP_X86_SELECTS(OP) SKP_X86_SELECT(OP, 128, _mm) SKP_X86_SELECT(OP, 256, _mm256)
#elif defined(__SSE2__)
#define SKP_X86_SELECTS(OP) SKP_X86_SELECT(OP, 128, _mm)
#else
#define SKP_X86_SELECTS(OP)
#endif
template <class V> SKP_FORCE_INLINE V vmax(V a, V b) {
    typedef typename std::decay<decltype(a[0])>::type T;
    SKP_X86_SELECTS(max)
    return a > b ? a : b;
}
template <class V> SKP_FORCE_INLINE V vmin(V a, V b) {
    typedef typename std::decay<decltype(a[0])>::type T;
    SKP_X86_SELECTS(min)
    return a < b ? a : b;
}
#undef SKP_X86_SELECTS
#undef SKP_X86_SELECT

// Sum of the lanes by halving: the low half plus the high half until two
// lanes are left (log2(L) vector adds, in registers), the same order at
// every width.
template <class T, int BYTES> inline T reduce_halves(typename Vec<T, BYTES>::type v) {
    if constexpr (BYTES == 2 * int(sizeof(T))) {
        return v[0] + v[1];
    } else {
        typedef typename Vec<T, BYTES / 2>::type H;
        H low, high;
        std::memcpy(&low, &v, BYTES / 2);
        std::memcpy(&high, reinterpret_cast<const char*>(&v) + BYTES / 2, BYTES / 2);
        return reduce_halves<T, BYTES / 2>(low + high);
    }
}
template <class T> inline T vsum(typename VT<T>::V v) { return reduce_halves<T, VBYTES>(v); }

// The sums of the lanes of N vectors at once (out[i] = lanes of v[i]
// added): a tree of pairwise folds, each two shuffles and one add that
// halve two vectors' blocks of lanes and pack them into one vector, so L
// vectors cost L - 1 folds where reduce_halves costs log2(L) halvings
// each (the weight gradient has one sum per weight: this was a quarter of
// its time on narrow layers).
//
// Pairing vector i with vector i + K/2 at every level keeps the sums in
// order: after log2(K) levels lane block j holds the partial sums of vector
// j. Fewer vectors than lanes leave blocks of several lanes, summed in
// place by a butterfly; more are taken L at a time.
template <class T> struct LaneSums {
    typedef typename VT<T>::V V;
    typedef typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type I;
    typedef I Mask __attribute__((vector_size(VBYTES)));
    static constexpr int L = VT<T>::L;

    struct Lanes {
        I lane[L];
    };
    // blocks of S lanes in x and y -> blocks of S / 2: x's block j becomes
    // block 2j (its halves added), y's block 2j + 1. `high` picks the
    // second halves.
    static constexpr Lanes fold_lanes(int S, bool high) {
        Lanes m{};
        for (int j = 0; j < L / S; ++j)
            for (int i = 0; i < S / 2; ++i) {
                m.lane[2 * j * (S / 2) + i] = j * S + i + (high ? S / 2 : 0);
                m.lane[(2 * j + 1) * (S / 2) + i] = L + j * S + i + (high ? S / 2 : 0);
            }
        return m;
    }
    // lane i -> lane i xor (S / 2): the two halves of every block swapped
    static constexpr Lanes swap_lanes(int S) {
        Lanes m{};
        for (int i = 0; i < L; ++i) m.lane[i] = i ^ (S / 2);
        return m;
    }
    static SKP_FORCE_INLINE Mask mask(const Lanes& m) {
        Mask v;
        std::memcpy(&v, m.lane, sizeof(v));
        return v;
    }
    template <int S> static SKP_FORCE_INLINE V fold(V x, V y) {
        constexpr Lanes low = fold_lanes(S, false), high = fold_lanes(S, true);
        return __builtin_shuffle(x, y, mask(low)) + __builtin_shuffle(x, y, mask(high));
    }
    // v[0 .. K) (K a power of two, at most L), blocks of S = L / K' lanes
    // after each level; the result's block j holds vector j's partial sums
    template <int K, int S = L> static SKP_FORCE_INLINE V tree(V* v) {
        if constexpr (K == 1) {
            return v[0];
        } else {
            // unrolled (as every loop here): rolled, GCC kept v on the
            // stack and every fold went through memory
#pragma GCC unroll 64
            for (int i = 0; i < K / 2; ++i) v[i] = fold<S>(v[i], v[i + K / 2]);
            return tree<K / 2, S / 2>(v);
        }
    }
    template <int S> static SKP_FORCE_INLINE V butterfly(V x) {
        if constexpr (S == 1) {
            return x;
        } else {
            constexpr Lanes swap = swap_lanes(S);
            return butterfly<S / 2>(x + __builtin_shuffle(x, mask(swap)));
        }
    }
    static constexpr int pow2_at_least(int n) { return n <= 1 ? 1 : 2 * pow2_at_least((n + 1) / 2); }

    // out[i] = the sum of v[i]'s lanes, i < N
    template <int N> static SKP_FORCE_INLINE void sums(const V* v, T* out) {
        if constexpr (N > L) {
            sums<L>(v, out);
            sums<N - L>(v + L, out + L);
        } else {
            constexpr int K = pow2_at_least(N), S = L / K;
            V w[K];
#pragma GCC unroll 64
            for (int i = 0; i < K; ++i) w[i] = i < N ? v[i] : V{};
            const V x = butterfly<S>(tree<K>(w));
#pragma GCC unroll 64
            for (int i = 0; i < N; ++i) out[i] = x[i * S];
        }
    }
};

// An L x L block transposed in registers: v[i] holds row i on entry and
// column i on return. log2(L) levels; at the level of half-width h, rows i
// and i + h (i & h == 0) trade their off-diagonal blocks of h lanes (a
// block matrix [[A, B], [C, D]] becomes [[A, C], [B, D]]), and the next
// level does the same inside every block: L log2(L) two-vector shuffles.
template <class T> struct BlockTranspose {
    typedef typename VT<T>::V V;
    typedef LaneSums<T> Sums;  // its lane tables and masks
    typedef typename Sums::Lanes Lanes;
    static constexpr int L = VT<T>::L;

    // row i's new lanes (`second` false) or row i + h's (true)
    static constexpr Lanes trade_lanes(int h, bool second) {
        Lanes m{};
        for (int k = 0; k < L; ++k)
            m.lane[k] = second ? ((k & h) ? L + k : k + h) : ((k & h) ? L + k - h : k);
        return m;
    }
    template <int H = L / 2> static SKP_FORCE_INLINE void run(V* v) {
        if constexpr (H >= 1) {
            constexpr Lanes first = trade_lanes(H, false), second = trade_lanes(H, true);
            for (int i = 0; i < L; ++i) {
                if (i & H) continue;
                const V x = v[i], y = v[i + H];
                v[i] = __builtin_shuffle(x, y, Sums::mask(first));
                v[i + H] = __builtin_shuffle(x, y, Sums::mask(second));
            }
            run<H / 2>(v);
        }
    }
};

// A run of n items cut into tiles of N, where a remainder under N / 2
// shares the last full tile (13 = 4 + 4 + 3 + 2 for N = 4, not
// 4 + 4 + 4 + 1): a tile of one row or one vector holds too few
// accumulators to hide the FMA latency. f(first, size) for each tile, size
// a compile-time constant.
template <int N, class F> inline void balanced_tiles(int n, F&& f);

// f(std::integral_constant<int, n>{}) for a run-time 1 <= n <= N: the
// remainder of a tiled loop, dispatched to a tile of its exact size.
template <int N, class F> inline void with_count(int n, F&& f) {
    if constexpr (N >= 1) {
        if (n == N) {
            f(std::integral_constant<int, N>{});
        } else {
            with_count<N - 1>(n, f);
        }
    }
}

template <int N, class F> inline void balanced_tiles(int n, F&& f) {
    int n_full = n / N;
    if (n % N != 0 && n % N < N / 2 && n_full > 0) --n_full;  // its last tile shares the remainder
    int first = 0;
    for (int t = 0; t < n_full; ++t, first += N) f(first, std::integral_constant<int, N>{});
    int left = n - first;
    if (left > N) {  // a full tile and a small remainder: two tiles of about half
        const int half = (left + 1) / 2;
        with_count<N>(half, [&](auto count) { f(first, count); });
        first += half, left -= half;
    }
    with_count<N>(left, [&](auto count) { f(first, count); });
}

}  // namespace skp

#endif
