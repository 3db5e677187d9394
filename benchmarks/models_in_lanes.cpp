// Models in vector lanes: one small softmax MLP per lane, trained with Adam,
// checked against a scalar double reference, and timed. benchmarks/models_in_lanes.py
// builds and runs it (see its docstring); by hand, from the repository root:
//
//   g++ -O3 -std=c++17 -pthread -fno-math-errno -march=native -o models_in_lanes
//       -DSKP_KERNEL_SOURCE="\"$PWD/skpmlp/_kernels/mlp_step.cpp\"" benchmarks/models_in_lanes.cpp
//
// The kernel (mlp_step.cpp) puts a batch's rows in the lanes and trains one
// model at a time. Here every vector holds VT<float>::L models instead (4
// for SSE, 8 for AVX2, 16 for AVX-512): all lanes read the same batch rows,
// broadcast, and each lane has its own weights, learning rate and L2 alpha,
// so every instruction serves L models and no lane is ever idle, however
// narrow the layer. A step is three passes:
//   1. forward and backward of the batch's rows, R rows at a time (R rows
//      share each weight load), into buffers of hidden activations (Hs) and
//      of the deltas (D), layer after layer;
//   2. the weight gradients, as sums over the batch into register tiles;
//   3. Adam.
// Networks of one hidden layer (4-16-3, 4-64-3, 4-128-3) and of two (4-64-32-3:
// its 64 x 32 weights are 64 KB of lane-interleaved floats at AVX2, beyond
// L1, so each weight load there serves R = 8 rows).
// The vector type and the math (exp, tanh, division, the activations' enum)
// are the kernel's own, by #include of its source, so the comparison is of
// the data layout alone.
#include SKP_KERNEL_SOURCE

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

namespace lanes {

typedef VT<float>::V V;
typedef VMath<float> Math;
constexpr int L = VT<float>::L;  // models per vector
constexpr int F = 4, K = 3;      // inputs, classes
constexpr int B = 96, N_ROWS = 3840, STEPS = N_ROWS / B;
constexpr int EPOCHS = 6, RUNS = 20;
constexpr double MAX_ERROR = 1e-4;
// The buffers hold each unit's values for the batch's rows together (unit
// j's at j * BS + row): the weight gradients' tiles read them as contiguous
// runs. BS is B padded to an odd number of cache lines, else the 3 KB stride
// puts every unit in the same 4 of L1's 64 sets (the two-layer network's
// forward and backward: 217 ns a model-row unpadded, 141 padded).
constexpr int BS = B + 2;
// The two-layer network's tiles (below) as measured on AVX2 (Zen 4), ns a
// model-row of forward and backward + gradient; the first figures with the
// buffers row-major (a row's units together), the padded layout after:
//   rows R=2, units O=4 / inputs I=4: 300 in all; R=4, O=I=4 (16 accumulators
//   spill): 328; R=4, O=I=2: 153 + 103; R=3, O=I=4: 182 + 110; R=6, O=I=2:
//   142 + 105; R=8, O=I=1: 141 + 103 (gradient tiles 4 x 2; 3 x 4 measured
//   102, 2 x 4 125, 8 x 1 131); padded unit-major, R=8, O=I=1: 141-148 + 80-85
//   (tiles 4 x 2 or 3 x 4 alike), R=4, O=I=2: 164 + 84, R=6: 149 + 87.
constexpr int FWD_O = 1, BACK_I = 1;  // units, inputs of a hidden-to-hidden layer per register tile
constexpr int GRAD_I = 4, GRAD_O = 2;  // a hidden-to-hidden weight gradient's tile

SKP_FORCE_INLINE V splat(float x) { return Math::splat(x); }
// Adam's square root: GCC turns this loop into one sqrtps at every width
// (the kernel has no vector sqrt: its Adam is scalar code).
SKP_FORCE_INLINE V vsqrt(V x) {
    for (int l = 0; l < L; ++l) x[l] = std::sqrt(x[l]);
    return x;
}

// fn(std::integral_constant<int, I>()) for I = BEGIN .. END - 1: a loop over
// layers whose widths are compile-time constants
template <int BEGIN, int END, class Fn> SKP_FORCE_INLINE void static_for(Fn&& fn) {
    if constexpr (BEGIN < END) {
        fn(std::integral_constant<int, BEGIN>());
        static_for<BEGIN + 1, END>(fn);
    }
}

// sums over the first n layers of widths w: of their parameters, and of their
// units (outputs)
constexpr int params_before(const int* w, int n) {
    int s = 0;
    for (int l = 0; l < n; ++l) s += (w[l] + 1) * w[l + 1];
    return s;
}
constexpr int units_before(const int* w, int n) {
    int s = 0;
    for (int l = 0; l < n; ++l) s += w[l + 1];
    return s;
}

// A network: F inputs, hidden layers of widths H..., each with activation
// ACT, and K classes (softmax), forward and backward R rows at a time (R rows
// share each weight load). Layer l (0 .. NL - 1) maps width[l] inputs to
// width[l + 1] units. Offsets of the parameters (each a vector of L models'
// values): layer l's weights at W(l), input i and unit o at W(l) + i *
// width[l + 1] + o, its biases after them at b(l). Offsets of the buffers of
// a batch: layer l's outputs (Hs, hidden layers only) and the deltas of the
// mean loss at its sums (D), unit j's for row r at out(l) + j * BS + r.
template <int ACT_, int R_, int... H> struct Net {
    static constexpr int ACT = ACT_, R = R_, NL = sizeof...(H) + 1;
    static constexpr int width[NL + 1] = {F, H..., K};
    static constexpr int NP = params_before(width, NL), NH = BS * units_before(width, NL - 1),
                         ND = BS * units_before(width, NL);
    static constexpr int W(int l) { return params_before(width, l); }
    static constexpr int b(int l) { return W(l) + width[l] * width[l + 1]; }
    static constexpr int out(int l) { return BS * units_before(width, l); }
    static bool is_weight(int i) {
        for (int l = 0; l < NL; ++l)
            if (i >= W(l) && i < b(l)) return true;
        return false;
    }
};

template <class N> struct Lanes {
    V P[N::NP], G[N::NP], M1[N::NP], M2[N::NP];  // parameters, gradient, Adam's moments
    V Hs[N::NH], D[N::ND];
    V lr, alpha;
    int t = 0;
};

template <int ACT> SKP_FORCE_INLINE V activate(V a) {
    return ACT == A_RELU ? vmax(a, splat(0.0f)) : ACT == A_TANH ? Math::tanh(a) : a;
}
// the delta at a unit's sum from g, the one at its output h: the
// activation's derivative from its output, relu's h > 0, tanh's 1 - h^2
template <int ACT> SKP_FORCE_INLINE V derive(V h, V g) {
    return ACT == A_RELU ? (h > 0.0f ? g : splat(0.0f)) : g - g * (h * h);
}

// R rows of a layer's outputs from its inputs' (In), O units at a time in
// registers: Out = act(In W + b), unit o's at Out[o * so + r].
template <int R, int O, int NI, int NO, int ACT>
SKP_FORCE_INLINE void dense(const V* __restrict W, const V* __restrict bias, const V* __restrict In,
                            V* __restrict Out, int so) {
    static_assert(NO % O == 0, "units: a multiple of the tile");
    for (int o0 = 0; o0 < NO; o0 += O) {
        V acc[R][O];
        for (int r = 0; r < R; ++r)
            for (int o = 0; o < O; ++o) acc[r][o] = bias[o0 + o];
        for (int i = 0; i < NI; ++i)
            for (int r = 0; r < R; ++r) {
                const V h = In[i * BS + r];
                for (int o = 0; o < O; ++o) acc[r][o] += h * W[i * NO + o0 + o];
            }
        for (int r = 0; r < R; ++r)
            for (int o = 0; o < O; ++o) Out[(o0 + o) * so + r] = activate<ACT>(acc[r][o]);
    }
}

// R rows of the deltas at a layer's inputs' sums (Din) from those at its
// outputs' (Dout), I inputs at a time in registers: Din = act'(Hin) (Dout W^T).
template <int R, int I, int NI, int NO, int ACT>
SKP_FORCE_INLINE void back(const V* __restrict W, const V* __restrict Dout, const V* __restrict Hin,
                           V* __restrict Din) {
    static_assert(NI % I == 0, "inputs: a multiple of the tile");
    for (int i0 = 0; i0 < NI; i0 += I) {
        V acc[R][I] = {};
        for (int o = 0; o < NO; ++o)
            for (int r = 0; r < R; ++r) {
                const V d = Dout[o * BS + r];
                for (int i = 0; i < I; ++i) acc[r][i] += W[(i0 + i) * NO + o] * d;
            }
        for (int r = 0; r < R; ++r)
            for (int i = 0; i < I; ++i) Din[(i0 + i) * BS + r] = derive<ACT>(Hin[(i0 + i) * BS + r], acc[r][i]);
    }
}

// Forward and backward of R rows (from row r0 of the batch, X and y at that
// row): hidden outputs into Hs, the deltas of the mean loss (1/B folded in)
// into D.
template <class N>
SKP_FORCE_INLINE void rows(const V* __restrict P, const float* __restrict X, const int* __restrict y, int r0,
                           V* __restrict Hs, V* __restrict D) {
    constexpr int R = N::R, NL = N::NL, H0 = N::width[1];
    V x[R][F], z[K][R];
    for (int r = 0; r < R; ++r)
        for (int f = 0; f < F; ++f) x[r][f] = splat(X[r * F + f]);
    // the first layer from the broadcast inputs; with one hidden layer, the
    // output layer's sums along, as each unit's output comes
    if constexpr (NL == 2)
        for (int r = 0; r < R; ++r)
            for (int k = 0; k < K; ++k) z[k][r] = P[N::b(1) + k];
    V* __restrict h0 = Hs + N::out(0) + r0;
    for (int j = 0; j < H0; ++j) {
        for (int r = 0; r < R; ++r) {
            V a = P[N::b(0) + j];
            for (int f = 0; f < F; ++f) a += x[r][f] * P[N::W(0) + f * H0 + j];
            const V h = activate<N::ACT>(a);
            h0[j * BS + r] = h;
            if constexpr (NL == 2)
                for (int k = 0; k < K; ++k) z[k][r] += h * P[N::W(1) + j * K + k];
        }
    }
    // the later layers (more than one hidden layer) from the outputs of the one before
    static_for<1, (NL > 2 ? NL : 1)>([&](auto layer) {
        constexpr int l = decltype(layer)::value, NI = N::width[l], NO = N::width[l + 1];
        const V* in = Hs + N::out(l - 1) + r0;
        if constexpr (l < NL - 1)
            dense<R, FWD_O, NI, NO, N::ACT>(P + N::W(l), P + N::b(l), in, Hs + N::out(l) + r0, BS);
        else
            dense<R, K, NI, K, A_IDENTITY>(P + N::W(l), P + N::b(l), in, &z[0][0], R);
    });
    V* __restrict dz = D + N::out(NL - 1) + r0;
    for (int r = 0; r < R; ++r) {
        V top = z[0][r];
        for (int k = 1; k < K; ++k) top = vmax(top, z[k][r]);
        V e[K], sum = splat(0.0f);
        for (int k = 0; k < K; ++k) sum += e[k] = Math::exp(z[k][r] - top);
        const V scale = Math::div(splat(1.0f / B), sum);
        for (int k = 0; k < K; ++k) dz[k * BS + r] = e[k] * scale - (y[r] == k ? 1.0f / B : 0.0f);
    }
    // the deltas, from the last layer's inputs to the second's
    static_for<1, NL>([&](auto n) {
        constexpr int l = NL - decltype(n)::value, NI = N::width[l], NO = N::width[l + 1];
        back<R, l == NL - 1 ? 1 : BACK_I, NI, NO, N::ACT>(P + N::W(l), D + N::out(l) + r0, Hs + N::out(l - 1) + r0,
                                                         D + N::out(l - 1) + r0);
    });
}

// An I x O tile of a weight gradient: the sums over the batch of the products
// of layer inputs (A) and deltas (Dl), in registers for the whole batch (the
// tiles below have 8 to 12 accumulators: they fit the 16 registers of SSE
// and AVX2).
template <int I, int O>
SKP_FORCE_INLINE void tile(const V* __restrict A, const V* __restrict Dl, V* __restrict G, int sg) {
    V acc[I][O] = {};
    for (int b = 0; b < B; ++b)
        for (int i = 0; i < I; ++i)
            for (int o = 0; o < O; ++o) acc[i][o] += A[i * BS + b] * Dl[o * BS + b];
    for (int i = 0; i < I; ++i)
        for (int o = 0; o < O; ++o) G[i * sg + o] = acc[i][o];
}

// The gradient: sums over the batch of the buffers' products.
template <class N> void gradient(Lanes<N>& m, const float* __restrict X) {
    constexpr int NL = N::NL, H0 = N::width[1];
    static_assert(H0 % 2 == 0, "first hidden width: a multiple of 2");
    V* __restrict G = m.G;
    const V *__restrict Hs = m.Hs, *__restrict D = m.D;
    const V* __restrict D0 = D + N::out(0);
    for (int j = 0; j < H0; j += 2) {  // the first layer's weights and biases: (F inputs + bias) x 2 units
        V acc[F + 1][2] = {};
        for (int b = 0; b < B; ++b) {
            const V d0 = D0[j * BS + b], d1 = D0[(j + 1) * BS + b];
            for (int f = 0; f < F; ++f) {
                const V xf = splat(X[b * F + f]);
                acc[f][0] += xf * d0;
                acc[f][1] += xf * d1;
            }
            acc[F][0] += d0;
            acc[F][1] += d1;
        }
        for (int f = 0; f < F; ++f)
            for (int u = 0; u < 2; ++u) G[N::W(0) + f * H0 + j + u] = acc[f][u];
        for (int u = 0; u < 2; ++u) G[N::b(0) + j + u] = acc[F][u];
    }
    static_for<1, NL>([&](auto layer) {  // the later layers' from the outputs of the one before
        constexpr int l = decltype(layer)::value, NI = N::width[l], NO = N::width[l + 1];
        constexpr int I = l == NL - 1 ? 4 : GRAD_I, O = l == NL - 1 ? K : GRAD_O;  // 4 x K: 12 accumulators
        const V *A = Hs + N::out(l - 1), *Dl = D + N::out(l);
        static_assert(NI % I == 0 && NO % O == 0, "widths: multiples of the tile");
        for (int i = 0; i < NI; i += I)
            for (int o = 0; o < NO; o += O) tile<I, O>(A + i * BS, Dl + o * BS, G + N::W(l) + i * NO + o, NO);
        constexpr int OB = NO % 8 == 0 ? 8 : NO;  // the biases, OB at a time
        for (int o0 = 0; o0 < NO; o0 += OB) {
            V acc[OB] = {};
            for (int b = 0; b < B; ++b)
                for (int o = 0; o < OB; ++o) acc[o] += Dl[(o0 + o) * BS + b];
            for (int o = 0; o < OB; ++o) G[N::b(l) + o0 + o] = acc[o];
        }
    });
}

// scikit-learn's Adam: step lr * sqrt(1 - beta2^t) / (1 - beta1^t), and the
// L2 penalty alpha * W / B added to the weights' gradient.
template <class N> void adam(Lanes<N>& m) {
    m.t++;
    const V step = m.lr * float(std::sqrt(1 - std::pow(0.999, m.t)) / (1 - std::pow(0.9, m.t)));
    const V decay = m.alpha * (1.0f / B);
    auto update = [&](int i, V g) {
        m.M1[i] = m.M1[i] * 0.9f + g * 0.1f;
        m.M2[i] = m.M2[i] * 0.999f + g * g * 0.001f;
        m.P[i] -= step * Math::div(m.M1[i], vsqrt(m.M2[i]) + 1e-8f);
    };
    // the runs of weights and of biases apart, so that no loop tests which is which
    for (int l = 0; l < N::NL; ++l) {
        for (int i = N::W(l); i < N::b(l); ++i) update(i, m.G[i] + decay * m.P[i]);
        for (int i = N::b(l); i < N::W(l + 1); ++i) update(i, m.G[i]);
    }
}

template <class N> void step(Lanes<N>& m, const float* X, const int* y) {
    for (int r = 0; r < B; r += N::R) rows<N>(m.P, X + r * F, y + r, r, m.Hs, m.D);
    gradient(m, X);
    adam(m);
}

// The same training in double, one model at a time, written as plainly as
// possible: what every lane must reproduce.
template <class N> void reference(std::vector<double>& P, double lr, double alpha, const float* X, const int* Y) {
    constexpr int NL = N::NL;
    const int* w = N::width;
    std::vector<double> G(N::NP), M1(N::NP), M2(N::NP);
    for (int s = 0; s < STEPS; ++s) {
        std::fill(G.begin(), G.end(), 0.0);
        for (int b = 0; b < B; ++b) {
            const float* x = X + (s * B + b) * F;
            const int y = Y[s * B + b];
            // a[l]: layer l's inputs (a[NL]: the output layer's sums); d[l]: the deltas at a[l]'s sums
            std::vector<double> a[NL + 1], d[NL + 1];
            a[0].assign(x, x + F);
            for (int l = 0; l < NL; ++l) {
                a[l + 1].resize(w[l + 1]);
                for (int o = 0; o < w[l + 1]; ++o) {
                    double z = P[N::b(l) + o];
                    for (int i = 0; i < w[l]; ++i) z += a[l][i] * P[N::W(l) + i * w[l + 1] + o];
                    a[l + 1][o] = l == NL - 1 ? z : N::ACT == A_RELU ? std::max(z, 0.0) : std::tanh(z);
                }
            }
            const double top = *std::max_element(a[NL].begin(), a[NL].end());
            double sum = 0;
            for (double& z : a[NL]) sum += z = std::exp(z - top);
            for (int k = 0; k < K; ++k) d[NL].push_back((a[NL][k] / sum - (y == k)) / B);
            for (int l = NL - 1; l >= 0; --l) {
                for (int o = 0; o < w[l + 1]; ++o) {
                    for (int i = 0; i < w[l]; ++i) G[N::W(l) + i * w[l + 1] + o] += a[l][i] * d[l + 1][o];
                    G[N::b(l) + o] += d[l + 1][o];
                }
                if (l == 0) break;
                for (int i = 0; i < w[l]; ++i) {
                    double g = 0;
                    for (int o = 0; o < w[l + 1]; ++o) g += P[N::W(l) + i * w[l + 1] + o] * d[l + 1][o];
                    const double h = a[l][i];
                    d[l].push_back(N::ACT == A_RELU ? (h > 0 ? g : 0.0) : g * (1 - h * h));
                }
            }
        }
        const int t = s + 1;
        const double step = lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
        for (int i = 0; i < N::NP; ++i) {
            const double g = G[i] + (N::is_weight(i) ? alpha / B * P[i] : 0.0);
            M1[i] = 0.9 * M1[i] + 0.1 * g;
            M2[i] = 0.999 * M2[i] + 0.001 * g * g;
            P[i] -= step * M1[i] / (std::sqrt(M2[i]) + 1e-8);
        }
    }
}

// This thread's CPU time: what the Python side times the kernel with, and
// what other processes on a shared machine disturb least.
double thread_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Trains one network: one epoch against the reference (the largest
// difference of any parameter of any lane), then RUNS timed runs of EPOCHS
// epochs. Prints the network, the best ns per model-row and the difference;
// returns whether the difference is within MAX_ERROR.
template <class N> bool run(const char* name, const std::vector<float>& X, const std::vector<int>& Y) {
    // The 8 models of the kernel's side, repeated over wider vectors:
    // learning rates 1e-3 .. 8e-3, alphas 1e-4 .. 1e-1.
    float lr[L], alpha[L];
    for (int l = 0; l < L; ++l) lr[l] = 1e-3f * (1 + l % 8), alpha[l] = 1e-4f * std::pow(10.0f, float(l % 4));
    // Glorot-uniform initial weights and biases, as scikit-learn's. (The
    // seed's + (NL - 2): 4-64-32-3's first seed, 1234 + 96 + A_RELU, puts
    // one lane, lr 5e-3, on a knife edge, a weight whose gradient is all
    // rounding at the first step and a relu that flips at the sixth: float and
    // double part by 1.5e-2 after 40 steps, where the next 7 seeds agree to
    // 5e-6 in every lane.)
    std::mt19937 rng(1234 + units_before(N::width, N::NL - 1) + N::ACT + (N::NL - 2));
    std::uniform_real_distribution<float> unit(-1, 1);
    std::vector<float> P0(N::NP * L);
    for (int l = 0; l < N::NL; ++l)
        for (int i = N::W(l); i < N::W(l + 1); ++i)
            for (int m = 0; m < L; ++m)
                P0[i * L + m] = std::sqrt(6.0f / (N::width[l] + N::width[l + 1])) * unit(rng);

    std::unique_ptr<Lanes<N>> m;
    auto reset = [&] {
        m = std::make_unique<Lanes<N>>();  // zeroed: gradient, moments, t
        for (int i = 0; i < N::NP; ++i)
            for (int l = 0; l < L; ++l) m->P[i][l] = P0[i * L + l];
        for (int l = 0; l < L; ++l) m->lr[l] = lr[l], m->alpha[l] = alpha[l];
    };
    auto epoch = [&] {
        for (int s = 0; s < STEPS; ++s) step<N>(*m, X.data() + s * B * F, Y.data() + s * B);
    };

    reset();
    epoch();
    double error = 0;
    for (int l = 0; l < L; ++l) {
        std::vector<double> P(N::NP);
        for (int i = 0; i < N::NP; ++i) P[i] = P0[i * L + l];
        reference<N>(P, lr[l], alpha[l], X.data(), Y.data());
        for (int i = 0; i < N::NP; ++i) {
            const double d = std::abs(double(m->P[i][l]) - P[i]);
            if (!(d <= error)) error = d;  // a NaN too, where std::max would drop it
        }
    }

    reset();
    double best = 1e30;
    for (int run = 0; run < RUNS; ++run) {
        const double start = thread_seconds();
        for (int e = 0; e < EPOCHS; ++e) epoch();
        best = std::min(best, thread_seconds() - start);
    }
    std::printf("%s %.3f %.3g\n", name, best * 1e9 / (double(EPOCHS) * N_ROWS * L), error);
    return error < MAX_ERROR;
}

}  // namespace lanes

int main() {
    using namespace lanes;
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> feature(-2, 2);
    std::vector<float> X(N_ROWS * F);
    std::vector<int> Y(N_ROWS);
    for (float& x : X) x = feature(rng);
    for (int& y : Y) y = int(rng() % K);

    std::printf("lanes %d %s\n", L, SKP_ISA);
    bool ok = run<Net<A_RELU, 2, 16>>("4-16-3_relu", X, Y);
    ok &= run<Net<A_RELU, 2, 64>>("4-64-3_relu", X, Y);
    ok &= run<Net<A_TANH, 2, 16>>("4-16-3_tanh", X, Y);
    ok &= run<Net<A_RELU, 2, 128>>("4-128-3_relu", X, Y);
    ok &= run<Net<A_RELU, 8, 64, 32>>("4-64-32-3_relu", X, Y);
    if (!ok) std::fprintf(stderr, "a lane differs from the reference by more than %g\n", MAX_ERROR);
    return ok ? 0 : 1;
}
