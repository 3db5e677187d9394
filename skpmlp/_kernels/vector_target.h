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
// measurement (benchmarks/step.py --targets, docs/performance.rst):
//
//   * matmul (tile_mm): MM_ROWS x MM_VECS accumulators, MM_VECS loads of
//     the input and one broadcast coefficient live at once;
//   * weight gradient (tile_outer): OUTER_ROWS x OUTER_COLS accumulators and
//     OUTER_ROWS + OUTER_COLS loads live at once.
//
// Each can be overridden with -DSKP_MM_ROWS=... (and the three others) to
// time other shapes with the same source.

#ifndef SKPMLP_VECTOR_TARGET_H
#define SKPMLP_VECTOR_TARGET_H

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace skp {

#if defined(__AVX512F__)
#define SKP_ISA "avx512"
constexpr int VBYTES = 64, VREGS = 32;
#define SKP_TILES 4, 4, 4, 4
#elif defined(__AVX__)
#if defined(__AVX2__) && defined(__FMA__)
#define SKP_ISA "avx2-fma"
#else
#define SKP_ISA "avx"
#endif
constexpr int VBYTES = 32, VREGS = 16;
#define SKP_TILES 4, 3, 3, 3
#elif defined(__aarch64__)
#define SKP_ISA "neon"
constexpr int VBYTES = 16, VREGS = 32;
#define SKP_TILES 4, 4, 4, 4
#elif defined(__SSE4_2__)
#define SKP_ISA "sse4.2"
constexpr int VBYTES = 16, VREGS = 16;
#define SKP_TILES 4, 2, 3, 3
#elif defined(__SSE2__)
#define SKP_ISA "sse2"
constexpr int VBYTES = 16, VREGS = 16;
#define SKP_TILES 4, 2, 3, 3
#else
#define SKP_ISA "generic"
constexpr int VBYTES = 16, VREGS = 16;
#define SKP_TILES 4, 2, 3, 3
#endif

namespace tiles {
constexpr int DEFAULT[4] = {SKP_TILES};
#ifdef SKP_MM_ROWS
constexpr int MM_ROWS = SKP_MM_ROWS;
#else
constexpr int MM_ROWS = DEFAULT[0];
#endif
#ifdef SKP_MM_VECS
constexpr int MM_VECS = SKP_MM_VECS;
#else
constexpr int MM_VECS = DEFAULT[1];
#endif
#ifdef SKP_OUTER_ROWS
constexpr int OUTER_ROWS = SKP_OUTER_ROWS;
#else
constexpr int OUTER_ROWS = DEFAULT[2];
#endif
#ifdef SKP_OUTER_COLS
constexpr int OUTER_COLS = SKP_OUTER_COLS;
#else
constexpr int OUTER_COLS = DEFAULT[3];
#endif
static_assert(MM_ROWS >= 1 && MM_VECS >= 1 && OUTER_ROWS >= 1 && OUTER_COLS >= 1, "empty tile");
}  // namespace tiles

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

template <class T> inline typename VT<T>::V vload(const T* p) {
    typename VT<T>::V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}
template <class T> inline void vstore(T* p, typename VT<T>::V v) { std::memcpy(p, &v, sizeof(v)); }
template <class T> inline typename VT<T>::V vsplat(T x) { return typename VT<T>::V{} + x; }

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

}  // namespace skp

#endif
