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
//      of the hidden and output deltas (D1, D2);
//   2. the weight gradients, as sums over the batch into register tiles;
//   3. Adam.
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
#include <vector>

namespace lanes {

typedef VT<float>::V V;
typedef VMath<float> Math;
constexpr int L = VT<float>::L;  // models per vector
constexpr int F = 4, K = 3;      // inputs, classes
constexpr int B = 96, N_ROWS = 3840, STEPS = N_ROWS / B;
constexpr int R = 2;             // rows per forward/backward block (the prototype's fastest)
constexpr int EPOCHS = 6, RUNS = 20;
constexpr double MAX_ERROR = 1e-4;

SKP_FORCE_INLINE V splat(float x) { return Math::splat(x); }
// Adam's square root: GCC turns this loop into one sqrtps at every width
// (the kernel has no vector sqrt: its Adam is scalar code).
SKP_FORCE_INLINE V vsqrt(V x) {
    for (int l = 0; l < L; ++l) x[l] = std::sqrt(x[l]);
    return x;
}

// Offsets of the parameters (each a vector of L models' values): W1 is
// F x H (input f, unit j at f * H + j), W2 is H x K (unit j, class k at
// j * K + k).
template <int H> struct Layout {
    static constexpr int W1 = 0, B1 = F * H, W2 = (F + 1) * H, B2 = (F + 1 + K) * H, NP = B2 + K;
    static bool is_weight(int i) { return i < B1 || (i >= W2 && i < B2); }
};

template <int H> struct Lanes {
    typedef Layout<H> Ly;
    V P[Ly::NP], G[Ly::NP], M1[Ly::NP], M2[Ly::NP];  // parameters, gradient, Adam's moments
    V Hs[B * H], D1[B * H], D2[B * K];
    V lr, alpha;
    int t = 0;
};

// Forward and backward of R rows: hidden activations into Hs, the deltas of
// the mean loss (1/B folded in) into D1 and D2.
template <int H, int ACT>
SKP_FORCE_INLINE void rows(const V* __restrict P, const float* __restrict X, const int* __restrict y,
                           V* __restrict Hs, V* __restrict D1, V* __restrict D2) {
    typedef Layout<H> Ly;
    V x[R][F], z[R][K];
    for (int r = 0; r < R; ++r) {
        for (int f = 0; f < F; ++f) x[r][f] = splat(X[r * F + f]);
        for (int k = 0; k < K; ++k) z[r][k] = P[Ly::B2 + k];
    }
    for (int j = 0; j < H; ++j) {
        for (int r = 0; r < R; ++r) {
            V a = P[Ly::B1 + j];
            for (int f = 0; f < F; ++f) a += x[r][f] * P[Ly::W1 + f * H + j];
            const V h = ACT == A_RELU ? vmax(a, splat(0.0f)) : Math::tanh(a);
            Hs[r * H + j] = h;
            for (int k = 0; k < K; ++k) z[r][k] += h * P[Ly::W2 + j * K + k];
        }
    }
    V d2[R][K];
    for (int r = 0; r < R; ++r) {
        V top = z[r][0];
        for (int k = 1; k < K; ++k) top = vmax(top, z[r][k]);
        V e[K], sum = splat(0.0f);
        for (int k = 0; k < K; ++k) sum += e[k] = Math::exp(z[r][k] - top);
        const V scale = Math::div(splat(1.0f / B), sum);
        for (int k = 0; k < K; ++k) D2[r * K + k] = d2[r][k] = e[k] * scale - (y[r] == k ? 1.0f / B : 0.0f);
    }
    for (int j = 0; j < H; ++j) {
        for (int r = 0; r < R; ++r) {
            V g = splat(0.0f);
            for (int k = 0; k < K; ++k) g += P[Ly::W2 + j * K + k] * d2[r][k];
            const V h = Hs[r * H + j];
            // the activation's derivative from its output: relu's h > 0, tanh's 1 - h^2
            D1[r * H + j] = ACT == A_RELU ? (h > 0.0f ? g : splat(0.0f)) : g - g * (h * h);
        }
    }
}

// The gradient: sums over the batch of the buffers' products, each tile of
// sums in registers for the whole batch (10 and 12 accumulators: they fit
// the 16 registers of SSE and AVX2).
template <int H> void gradient(Lanes<H>& m, const float* __restrict X) {
    typedef Layout<H> Ly;
    static_assert(H % 4 == 0, "hidden width: a multiple of 4");
    V* __restrict G = m.G;
    const V *__restrict Hs = m.Hs, *__restrict D1 = m.D1, *__restrict D2 = m.D2;
    for (int j = 0; j < H; j += 2) {  // W1 and b1: (F inputs + bias) x 2 units
        V acc[F + 1][2] = {};
        for (int b = 0; b < B; ++b) {
            const V d0 = D1[b * H + j], d1 = D1[b * H + j + 1];
            for (int f = 0; f < F; ++f) {
                const V xf = splat(X[b * F + f]);
                acc[f][0] += xf * d0;
                acc[f][1] += xf * d1;
            }
            acc[F][0] += d0;
            acc[F][1] += d1;
        }
        for (int f = 0; f < F; ++f)
            for (int u = 0; u < 2; ++u) G[Ly::W1 + f * H + j + u] = acc[f][u];
        for (int u = 0; u < 2; ++u) G[Ly::B1 + j + u] = acc[F][u];
    }
    for (int j = 0; j < H; j += 4) {  // W2: 4 units x K classes
        V acc[4][K] = {};
        for (int b = 0; b < B; ++b)
            for (int i = 0; i < 4; ++i)
                for (int k = 0; k < K; ++k) acc[i][k] += Hs[b * H + j + i] * D2[b * K + k];
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < K; ++k) G[Ly::W2 + (j + i) * K + k] = acc[i][k];
    }
    V acc[K] = {};  // b2
    for (int b = 0; b < B; ++b)
        for (int k = 0; k < K; ++k) acc[k] += D2[b * K + k];
    for (int k = 0; k < K; ++k) G[Ly::B2 + k] = acc[k];
}

// scikit-learn's Adam: step lr * sqrt(1 - beta2^t) / (1 - beta1^t), and the
// L2 penalty alpha * W / B added to the weights' gradient.
template <int H> void adam(Lanes<H>& m) {
    typedef Layout<H> Ly;
    m.t++;
    const V step = m.lr * float(std::sqrt(1 - std::pow(0.999, m.t)) / (1 - std::pow(0.9, m.t)));
    const V decay = m.alpha * (1.0f / B);
    auto update = [&](int i, V g) {
        m.M1[i] = m.M1[i] * 0.9f + g * 0.1f;
        m.M2[i] = m.M2[i] * 0.999f + g * g * 0.001f;
        m.P[i] -= step * Math::div(m.M1[i], vsqrt(m.M2[i]) + 1e-8f);
    };
    // the runs of weights and of biases apart, so that no loop tests which is which
    for (int i = Ly::W1; i < Ly::B1; ++i) update(i, m.G[i] + decay * m.P[i]);
    for (int i = Ly::B1; i < Ly::W2; ++i) update(i, m.G[i]);
    for (int i = Ly::W2; i < Ly::B2; ++i) update(i, m.G[i] + decay * m.P[i]);
    for (int i = Ly::B2; i < Ly::NP; ++i) update(i, m.G[i]);
}

template <int H, int ACT> void step(Lanes<H>& m, const float* X, const int* y) {
    for (int b = 0; b < B; b += R) rows<H, ACT>(m.P, X + b * F, y + b, m.Hs + b * H, m.D1 + b * H, m.D2 + b * K);
    gradient(m, X);
    adam(m);
}

// The same training in double, one model at a time, written as plainly as
// possible: what every lane must reproduce.
template <int H, int ACT>
void reference(std::vector<double>& P, double lr, double alpha, const float* X, const int* Y) {
    typedef Layout<H> Ly;
    std::vector<double> G(Ly::NP), M1(Ly::NP), M2(Ly::NP);
    for (int s = 0; s < STEPS; ++s) {
        std::fill(G.begin(), G.end(), 0.0);
        for (int b = 0; b < B; ++b) {
            const float* x = X + (s * B + b) * F;
            const int y = Y[s * B + b];
            double h[H], z[K], d1[H], d2[K];
            for (int j = 0; j < H; ++j) {
                double a = P[Ly::B1 + j];
                for (int f = 0; f < F; ++f) a += x[f] * P[Ly::W1 + f * H + j];
                h[j] = ACT == A_RELU ? std::max(a, 0.0) : std::tanh(a);
            }
            for (int k = 0; k < K; ++k) {
                z[k] = P[Ly::B2 + k];
                for (int j = 0; j < H; ++j) z[k] += h[j] * P[Ly::W2 + j * K + k];
            }
            const double top = *std::max_element(z, z + K);
            double sum = 0;
            for (int k = 0; k < K; ++k) sum += z[k] = std::exp(z[k] - top);
            for (int k = 0; k < K; ++k) d2[k] = (z[k] / sum - (y == k)) / B;
            for (int j = 0; j < H; ++j) {
                double g = 0;
                for (int k = 0; k < K; ++k) g += P[Ly::W2 + j * K + k] * d2[k];
                d1[j] = ACT == A_RELU ? (h[j] > 0 ? g : 0.0) : g * (1 - h[j] * h[j]);
            }
            for (int j = 0; j < H; ++j) {
                for (int f = 0; f < F; ++f) G[Ly::W1 + f * H + j] += x[f] * d1[j];
                G[Ly::B1 + j] += d1[j];
                for (int k = 0; k < K; ++k) G[Ly::W2 + j * K + k] += h[j] * d2[k];
            }
            for (int k = 0; k < K; ++k) G[Ly::B2 + k] += d2[k];
        }
        const int t = s + 1;
        const double step = lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
        for (int i = 0; i < Ly::NP; ++i) {
            const double g = G[i] + (Ly::is_weight(i) ? alpha / B * P[i] : 0.0);
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
template <int H, int ACT> bool run(const char* name, const std::vector<float>& X, const std::vector<int>& Y) {
    typedef Layout<H> Ly;
    // The 8 models of the kernel's side, repeated over wider vectors:
    // learning rates 1e-3 .. 8e-3, alphas 1e-4 .. 1e-1.
    float lr[L], alpha[L];
    for (int l = 0; l < L; ++l) lr[l] = 1e-3f * (1 + l % 8), alpha[l] = 1e-4f * std::pow(10.0f, float(l % 4));
    // Glorot-uniform initial weights and biases, as scikit-learn's
    std::mt19937 rng(1234 + H + ACT);
    std::uniform_real_distribution<float> unit(-1, 1);
    std::vector<float> P0(Ly::NP * L);
    for (int i = 0; i < Ly::NP; ++i)
        for (int l = 0; l < L; ++l) P0[i * L + l] = std::sqrt(6.0f / (i < Ly::W2 ? F + H : H + K)) * unit(rng);

    std::unique_ptr<Lanes<H>> m;
    auto reset = [&] {
        m = std::make_unique<Lanes<H>>();  // zeroed: gradient, moments, t
        for (int i = 0; i < Ly::NP; ++i)
            for (int l = 0; l < L; ++l) m->P[i][l] = P0[i * L + l];
        for (int l = 0; l < L; ++l) m->lr[l] = lr[l], m->alpha[l] = alpha[l];
    };
    auto epoch = [&] {
        for (int s = 0; s < STEPS; ++s) step<H, ACT>(*m, X.data() + s * B * F, Y.data() + s * B);
    };

    reset();
    epoch();
    double error = 0;
    for (int l = 0; l < L; ++l) {
        std::vector<double> P(Ly::NP);
        for (int i = 0; i < Ly::NP; ++i) P[i] = P0[i * L + l];
        reference<H, ACT>(P, lr[l], alpha[l], X.data(), Y.data());
        for (int i = 0; i < Ly::NP; ++i) {
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
    bool ok = run<16, A_RELU>("4-16-3_relu", X, Y);
    ok &= run<64, A_RELU>("4-64-3_relu", X, Y);
    ok &= run<16, A_TANH>("4-16-3_tanh", X, Y);
    if (!ok) std::fprintf(stderr, "a lane differs from the reference by more than %g\n", MAX_ERROR);
    return ok ? 0 : 1;
}
