// One L-BFGS-B iteration step per model, after a full-batch evaluation: what
// scipy's L-BFGS-B does between two function evaluations (no bounds), for
// every model of a population at once, each with its own history, line
// search and stopping tests.
//
// It knows nothing of populations, folds or scikit-learn: buffers and
// offsets in, buffers out. The torch L-BFGS (skpmlp/_engine/_lbfgs.py,
// _linesearch.py) is the reference it is tested against in float64.
//
// Layout (T is float or double; every scalar is double):
//
//   params          the step kernel's flat buffer (see mlp_step.cpp): each
//                   model's initial weights, read before its first
//                   evaluation; where a model stops (or op 1 restores it),
//                   its x
//   loss_sums       (n_slots) each model's summed loss (no L2 term)
//   meta            (n_models, META) the step kernel's table; only slot,
//                   depth, sizes, w_off, b_off and ld are read
//   packed          (n_models) int64: where model i's packed vectors start
//   x, g, d         packed vectors: model i's n_i real parameters at
//                   packed[i], layer by layer, W (n_in, n_out) row-major
//                   then b: the iterate, its gradient, the direction
//   S, Y            (HISTORY x packed): model i's pair k at
//                   HISTORY * packed[i] + k * stride_i, a ring whose
//                   newest pair is at `head`; stride_i is n_i rounded up
//                   to whole PACK_BYTES (pack_stride), so models whose
//                   packed[i] are multiples of PACK_BYTES / sizeof(T) and
//                   at least stride_i apart have every vector on a cache
//                   line's start (the padding is never read: the
//                   arithmetic is that of n_i values)
//   state           (n_models, STATE) double, see the St indices below
//   curves          (n_slots, max_iter) the loss after every iteration
//   hyper, Xb, Yb, Wb, counts, weight_sums, stepping, step0
//                   the step kernel's tables and batches: one step, every
//                   fold's training rows (its gradients mode 3 evaluates)
//   rows            the models (rows of meta and state) to work on
//
// op 0 (run): each model of `rows`, on its own, up to max_evals times:
// evaluate it at its trial point (the step kernel's gradients of this one
// model, double's exp / tanh in vector lanes, then the L2 term), run its
// line search on that value and directional derivative, and where the
// search ends its iteration (stopping tests, curvature pair, two-loop
// direction, next search); choose its next trial point. The trial point
// and its gradient are packed, in the thread's own buffers: a model's first
// evaluation is of its initial point (n_fun 0, from params), every later
// one of x + stp d, its state's next step. Models run to their end one
// after another on each thread, so a model's history stays in the core's
// cache across its iterations. op 1 (restore): params = x for every model
// of `rows`.
//
// The arithmetic is scipy's: Moré-Thuente (MINPACK-2's dcsrch / dcstep with
// L-BFGS-B's constants), first step 1 / ||d|| at iteration 0 then 1, at
// most MAX_LS evaluations per search, a failed search restarts along -g
// once after forgetting the pairs, pairs kept only when s'y > eps * (-g'd)
// stp, H0 = s'y / y'y. The direction comes from the two-loop recursion
// instead of L-BFGS-B's compact form (equal up to rounding without bounds).
// A trial point where the loss or the derivative is not finite halves the
// step towards the best point so far instead of feeding NaN to dcstep.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "work_queue.h"

namespace {

constexpr int MAX_DEPTH = 8;  // as mlp_step.cpp
enum Meta {
    M_SLOT = 0, M_DEPTH = 1, M_SIZES = 6,
    M_WOFF = M_SIZES + MAX_DEPTH + 2, M_BOFF = M_WOFF + MAX_DEPTH + 1, M_LD = M_BOFF + MAX_DEPTH + 1,
    META = M_LD + MAX_DEPTH + 3,  // the dropout key and threshold last, unread here
};
constexpr int HYPER = 9;  // as mlp_step.cpp

constexpr int HISTORY = 10;  // scipy's maxcor under scikit-learn

// A model's curvature pairs lie whole PACK_BYTES apart: its pairs, and
// where packed[i] is a multiple of PACK_BYTES / sizeof(T) its iterate,
// gradient and direction too, start on a 64-byte line. The two-loop
// streams 2 x 2 x HISTORY of them from L2 every iteration, and a vector
// load straddling two lines costs both: on 2,499 float64 values (iris'
// (64, 32) network) the recursion took 18.1 us unaligned against 11.4 us
// aligned (Intel Xeon, Emerald Rapids, AVX-512, one thread).
constexpr int PACK_BYTES = 64;
template <class T> constexpr long pack_stride(long n) {
    constexpr long per_line = PACK_BYTES / long(sizeof(T));
    return (n + per_line - 1) / per_line * per_line;
}

// per-model state; the line search fields are dcsrch's
enum St {
    S_STP = 0, S_STAGE, S_BRACKT, S_FINIT, S_GINIT, S_GTEST, S_WIDTH, S_WIDTH1,
    S_STX, S_FX, S_GX, S_STY, S_FY, S_GY, S_STMIN, S_STMAX,
    S_F,        // value at x
    S_GD0,      // g . d at x
    S_N_ITER, S_N_FUN,
    S_IFUN,     // evaluations of the current search
    S_REASON,   // why it stopped (R_*)
    S_COL,      // pairs held
    S_HEAD,     // ring position of the newest pair
    S_H0,       // s'y / y'y of the newest pair
    S_L2,       // alpha / sum(w): the L2 coefficient (input)
    S_COUNT,    // rows of the model's fold: loss = loss_sum / count (input)
    S_RHO,      // HISTORY values: 1 / s'y of the pair at each ring position
    STATE = S_RHO + HISTORY,
};
enum Reason { R_RUNNING = 0, R_CONVERGED, R_MAX_ITER, R_MAX_FUN, R_ABNORMAL, R_DIVERGED };

// L-BFGS-B's line search constants (lnsrlb)
constexpr double LS_FTOL = 1e-3, LS_GTOL = 0.9, LS_XTOL = 0.1, STPMIN = 0.0, STPMAX = 1e10;
constexpr double P5 = 0.5, P66 = 0.66, XTRAPL = 1.1, XTRAPU = 4.0;
constexpr double EPS = 2.220446049250313e-16;

struct Settings {
    double tol, ftol;
    int max_iter, max_fun, max_ls, max_evals;
};

}  // namespace

// the step kernel (mlp_step.cpp): one model's gradients in a kept scratch
extern "C" void* skp_scratch_new_f32();
extern "C" void* skp_scratch_new_f64();
extern "C" void skp_scratch_free_f32(void*);
extern "C" void skp_scratch_free_f64(void*);
extern "C" int skp_gradients_f32(const int64_t*, const double*, int, int, int, int, int, const float*, const float*,
                                 const float*, const double*, const double*, const uint8_t*, const double*, float*,
                                 float*, float*, void*);
extern "C" int skp_gradients_f64(const int64_t*, const double*, int, int, int, int, int, const double*,
                                 const double*, const double*, const double*, const double*, const uint8_t*,
                                 const double*, double*, double*, double*, void*);

namespace {

// Every fold's full batch, as the step kernel reads it (n_steps = 1).
template <class T> struct Data {
    const double* hyper;
    int n_folds, bp, n_features, n_outputs, loss;
    const T *Xb, *Yb, *Wb;
    const double *counts, *weight_sums;
    const uint8_t* stepping;
    const double* step0;
};

// The step kernel's gradients of one model (no L2 term; double's exp and
// tanh in vector lanes: tanh and logistic units cost 5x and 2x relu's with
// the C library's), in a scratch a thread keeps for all its evaluations.
template <class T> struct StepEntries;
template <> struct StepEntries<float> {
    static constexpr auto make = skp_scratch_new_f32;
    static constexpr auto free = skp_scratch_free_f32;
    static constexpr auto gradients = skp_gradients_f32;
};
template <> struct StepEntries<double> {
    static constexpr auto make = skp_scratch_new_f64;
    static constexpr auto free = skp_scratch_free_f64;
    static constexpr auto gradients = skp_gradients_f64;
};
template <class T> struct StepScratch {
    typedef StepEntries<T> E;
    void* const scratch = E::make();
    StepScratch() = default;
    StepScratch(const StepScratch&) = delete;
    StepScratch& operator=(const StepScratch&) = delete;
    ~StepScratch() { E::free(scratch); }
    int gradients(const int64_t* meta, const double* hyper, const Data<T>& D, T* params, T* grads,
                  T* loss_sums) const {
        return E::gradients(meta, hyper, D.n_folds, D.bp, D.n_features, D.n_outputs, D.loss, D.Xb, D.Yb, D.Wb,
                            D.counts, D.weight_sums, D.stepping, D.step0, params, grads, loss_sums, scratch);
    }
};

// ------------------------------------------------------------ line search
// MINPACK-2's dcstep (scipy's transcription, branch for branch).
void dcstep(double& stx, double& fx, double& dx, double& sty, double& fy, double& dy, double& stp, double fp,
            double dp, bool& brackt, double stpmin, double stpmax) {
    const double sgnd = ((dp > 0) - (dp < 0)) * double((dx > 0) - (dx < 0));
    double stpf;
    if (fp > fx) {  // higher value: the minimum is bracketed
        const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
        const double s = std::max(std::max(std::abs(theta), std::abs(dx)), std::abs(dp));
        double gamma = s * std::sqrt((theta / s) * (theta / s) - (dx / s) * (dp / s));
        if (stp < stx) gamma = -gamma;
        const double p = (gamma - dx) + theta;
        const double q = ((gamma - dx) + gamma) + dp;
        const double stpc = stx + (p / q) * (stp - stx);
        const double stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2.0) * (stp - stx);
        stpf = std::abs(stpc - stx) <= std::abs(stpq - stx) ? stpc : stpc + (stpq - stpc) / 2.0;
        brackt = true;
    } else if (sgnd < 0.0) {  // lower value, derivatives of opposite sign
        const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
        const double s = std::max(std::max(std::abs(theta), std::abs(dx)), std::abs(dp));
        double gamma = s * std::sqrt((theta / s) * (theta / s) - (dx / s) * (dp / s));
        if (stp > stx) gamma = -gamma;
        const double p = (gamma - dp) + theta;
        const double q = ((gamma - dp) + gamma) + dx;
        const double stpc = stp + (p / q) * (stx - stp);
        const double stpq = stp + (dp / (dp - dx)) * (stx - stp);
        stpf = std::abs(stpc - stp) > std::abs(stpq - stp) ? stpc : stpq;
        brackt = true;
    } else if (std::abs(dp) < std::abs(dx)) {  // same sign, the derivative decreases
        const double theta = 3.0 * (fx - fp) / (stp - stx) + dx + dp;
        const double s = std::max(std::max(std::abs(theta), std::abs(dx)), std::abs(dp));
        double gamma = s * std::sqrt(std::max(0.0, (theta / s) * (theta / s) - (dx / s) * (dp / s)));
        if (stp > stx) gamma = -gamma;
        const double p = (gamma - dp) + theta;
        const double q = (gamma + (dx - dp)) + gamma;
        const double r = p / q;
        double stpc;
        if (r < 0 && gamma != 0) stpc = stp + r * (stx - stp);
        else stpc = stp > stx ? stpmax : stpmin;
        const double stpq = stp + (dp / (dp - dx)) * (stx - stp);
        if (brackt) {
            stpf = std::abs(stpc - stp) < std::abs(stpq - stp) ? stpc : stpq;
            stpf = stp > stx ? std::min(stp + P66 * (sty - stp), stpf) : std::max(stp + P66 * (sty - stp), stpf);
        } else {
            stpf = std::abs(stpc - stp) > std::abs(stpq - stp) ? stpc : stpq;
            stpf = std::max(stpmin, std::min(stpmax, stpf));
        }
    } else {  // same sign, the derivative does not decrease
        if (brackt) {
            const double theta = 3.0 * (fp - fy) / (sty - stp) + dy + dp;
            const double s = std::max(std::max(std::abs(theta), std::abs(dy)), std::abs(dp));
            double gamma = s * std::sqrt((theta / s) * (theta / s) - (dy / s) * (dp / s));
            if (stp > sty) gamma = -gamma;
            const double p = (gamma - dp) + theta;
            const double q = ((gamma - dp) + gamma) + dy;
            stpf = stp + (p / q) * (sty - stp);
        } else {
            stpf = stp > stx ? stpmax : stpmin;
        }
    }
    if (fp > fx) {
        sty = stp, fy = fp, dy = dp;
    } else {
        if (sgnd < 0.0) sty = stx, fy = fx, dy = dx;
        stx = stp, fx = fp, dx = dp;
    }
    stp = stpf;
}

void search_start(double* st, double stp, double f0, double g0) {
    st[S_STP] = stp, st[S_STAGE] = 1, st[S_BRACKT] = 0, st[S_FINIT] = f0, st[S_GINIT] = g0;
    st[S_GTEST] = LS_FTOL * g0, st[S_WIDTH] = STPMAX - STPMIN, st[S_WIDTH1] = (STPMAX - STPMIN) / P5;
    st[S_STX] = 0, st[S_FX] = f0, st[S_GX] = g0, st[S_STY] = 0, st[S_FY] = f0, st[S_GY] = g0;
    st[S_STMIN] = 0, st[S_STMAX] = stp + XTRAPU * stp;
}

// One dcsrch call at the trial step st[S_STP] (value f, derivative g).
// Returns true where the search ended ('CONVERGENCE' or a 'WARNING', both
// accepted by L-BFGS-B): the trial step is the step taken. Else st[S_STP]
// holds the next trial step ('FG').
bool search_iterate(double* st, double f, double g) {
    double stp = st[S_STP];
    const double ftest = st[S_FINIT] + stp * st[S_GTEST];
    if (st[S_STAGE] == 1 && f <= ftest && g >= 0) st[S_STAGE] = 2;
    bool brackt = st[S_BRACKT] != 0;
    if (brackt && (stp <= st[S_STMIN] || stp >= st[S_STMAX])) return true;
    if (brackt && st[S_STMAX] - st[S_STMIN] <= LS_XTOL * st[S_STMAX]) return true;
    if (stp == STPMAX && f <= ftest && g <= st[S_GTEST]) return true;
    if (stp == STPMIN && (f > ftest || g >= st[S_GTEST])) return true;
    if (f <= ftest && std::abs(g) <= LS_GTOL * -st[S_GINIT]) return true;

    double stx = st[S_STX], fx = st[S_FX], gx = st[S_GX], sty = st[S_STY], fy = st[S_FY], gy = st[S_GY];
    if (st[S_STAGE] == 1 && f <= fx && f > ftest) {
        // a decrease short of sufficient: search the modified function
        // psi(stp) = f(stp) - f(0) - ftol * stp * f'(0)
        const double gtest = st[S_GTEST];
        double fm = f - stp * gtest, fxm = fx - stx * gtest, fym = fy - sty * gtest;
        double gm = g - gtest, gxm = gx - gtest, gym = gy - gtest;
        dcstep(stx, fxm, gxm, sty, fym, gym, stp, fm, gm, brackt, st[S_STMIN], st[S_STMAX]);
        fx = fxm + stx * gtest, fy = fym + sty * gtest;
        gx = gxm + gtest, gy = gym + gtest;
    } else {
        dcstep(stx, fx, gx, sty, fy, gy, stp, f, g, brackt, st[S_STMIN], st[S_STMAX]);
    }
    if (brackt) {
        if (std::abs(sty - stx) >= P66 * st[S_WIDTH1]) stp = stx + P5 * (sty - stx);
        st[S_WIDTH1] = st[S_WIDTH];
        st[S_WIDTH] = std::abs(sty - stx);
        st[S_STMIN] = std::min(stx, sty), st[S_STMAX] = std::max(stx, sty);
    } else {
        st[S_STMIN] = stp + XTRAPL * (stp - stx), st[S_STMAX] = stp + XTRAPU * (stp - stx);
    }
    stp = std::min(std::max(stp, STPMIN), STPMAX);
    if (brackt && (stp <= st[S_STMIN] || stp >= st[S_STMAX] || st[S_STMAX] - st[S_STMIN] <= LS_XTOL * st[S_STMAX]))
        stp = stx;
    st[S_STX] = stx, st[S_FX] = fx, st[S_GX] = gx, st[S_STY] = sty, st[S_FY] = fy, st[S_GY] = gy;
    st[S_STP] = stp, st[S_BRACKT] = brackt;
    return false;
}

// ------------------------------------------------------------------ model
// One model's parameters: runs of n_out entries, contiguous in the packed
// vectors, strided in the flat buffers. `packed_meta` is the model's meta
// row with its layers where the packed vectors hold them (each W (n_in,
// n_out) row-major, then b): the step kernel evaluates the model on a packed
// trial point and leaves the gradient packed, so an evaluation needs no
// scatter into the flat buffers and no gather back, row run by row run.
struct Runs {
    struct Run { long flat, packed; int len; bool weight; };
    std::vector<Run> runs;
    long n = 0;
    int64_t packed_meta[META];
    Runs(const int64_t* m) {
        std::copy(m, m + META, packed_meta);
        const int depth = int(m[M_DEPTH]);
        for (int l = 0; l <= depth; ++l) {
            const int n_in = int(m[M_SIZES + l]), n_out = int(m[M_SIZES + l + 1]);
            packed_meta[M_WOFF + l] = n, packed_meta[M_LD + l] = n_out;
            for (int r = 0; r < n_in; ++r, n += n_out)
                runs.push_back({m[M_WOFF + l] + r * m[M_LD + l], n, n_out, true});
            packed_meta[M_BOFF + l] = n;
            runs.push_back({m[M_BOFF + l], n, n_out, false}), n += n_out;
        }
    }
};

// Per-model reductions in LANES independent partial sums (vectorised, not
// one latency-bound chain), added in a fixed order: the result depends on
// the model's own length only, never on the population.
constexpr int LANES = 8;

// The sum of term(e) for e in [0, n) in those partial sums: term e of the
// whole blocks into sum e mod LANES, the tail into sum 0, the sums added in
// order. Every dot product of the model is one (dot, update_then_dot).
template <class Term> double lane_sum(long n, Term term) {
    double acc[LANES] = {};
    long e = 0;
    for (; e + LANES <= n; e += LANES)
        for (int k = 0; k < LANES; ++k) acc[k] += term(e + k);
    for (; e < n; ++e) acc[0] += term(e);
    double s = 0;
    for (int k = 0; k < LANES; ++k) s += acc[k];
    return s;
}

// lane_sum's terms taken from the end back to the start: the tail first,
// then the whole blocks in chunks of BACKWARD_CHUNK blocks from the last
// chunk to the first, each chunk's blocks in lane_sum's ascending order
// (each term in the same partial sum as forward). Blocks taken one by one
// from the last, GCC 12 vectorised the loop with AVX-512 but left it
// scalar with AVX2 and SSE4.2: a 2,499-value pass took 1.5 times the
// forward one there; the chunks' ascending loops are vectorised as
// lane_sum's at every width.
constexpr long BACKWARD_CHUNK = 8;
template <class Term> double lane_sum_backward(long n, Term term) {
    constexpr long chunk = BACKWARD_CHUNK * LANES;
    double acc[LANES] = {};
    const long whole = n / LANES * LANES;
    for (long e = n - 1; e >= whole; --e) acc[0] += term(e);
    for (long end = whole; end > 0; end -= chunk) {
        const long start = end > chunk ? end - chunk : 0;
        for (long e = start; e < end; e += LANES)
            for (int k = 0; k < LANES; ++k) acc[k] += term(e + k);
    }
    double s = 0;
    for (int k = 0; k < LANES; ++k) s += acc[k];
    return s;
}

template <class T> double dot(const T* a, const T* b, long n) {
    return lane_sum(n, [a, b](long e) { return double(a[e]) * double(b[e]); });
}

// d[e] = next(d[e], e) for every e, then dot(v, d) of the new d, in one
// pass with dot's sums: the sums' dependent adds bound a dot's pass, and
// the update's loads and stores run in their shadow instead of in a pass
// of their own. (Where GCC vectorises the products of a tail in one loop
// and not in the other, it may contract one sum's last adds into FMAs and
// the other's not: the two agree to rounding, not always bit for bit.)
//
// `backward` runs the pass from the end of d to its start (a chunk of
// lanes at a time, lane_sum_backward). The two-loop
// recursion alternates: each pass streams two vectors of the history from
// L2 through L1 and would evict d's start before the next pass reads it,
// where d and the two streams exceed L1. A pass that starts where the last
// one ended finds that end still in L1: 20 passes over iris' (64, 32)
// network (2,499 float64 values, d 20 KB of a 48 KB L1) took 11.2 us one
// way and 8.1 us alternating (Intel Xeon, Emerald Rapids, AVX-512).
template <class T, class Next>
double update_then_dot(T* __restrict d, const T* __restrict v, long n, bool backward, Next next) {
    const auto term = [d, v, next](long e) {
        const T de = next(d[e], e);
        d[e] = de;
        return double(v[e]) * double(de);
    };
    return backward ? lane_sum_backward(n, term) : lane_sum(n, term);
}

template <class T> struct Buffers {
    T *params, *loss_sums, *x, *g, *d, *S, *Y;
    const int64_t* packed;
    double* curves;
};

template <class T> struct Model {
    const Settings& cfg;
    const Buffers<T>& B;
    const double* hyper;
    const Runs runs;
    const int slot;
    const long n, stride;  // real parameters; a pair's stride (pack_stride)
    double* st;
    T *x, *g, *d, *S, *Y;
    T *xt, *gt;  // the trial point and its gradient (the thread's buffers, packed)

    // `trial` and `trial_grad`: the thread's buffers, grown to the model's size
    Model(const Settings& c, const Buffers<T>& b, const int64_t* meta_row, const double* hyper_row, double* state,
          long packed, std::vector<T>& trial, std::vector<T>& trial_grad)
        : cfg(c), B(b), hyper(hyper_row), runs(meta_row), slot(int(meta_row[M_SLOT])), n(runs.n),
          stride(pack_stride<T>(runs.n)),
          st(state) {
        x = B.x + packed, g = B.g + packed, d = B.d + packed;
        S = B.S + HISTORY * packed, Y = B.Y + HISTORY * packed;
        if (long(trial.size()) < n) trial.resize(n), trial_grad.resize(n);
        xt = trial.data(), gt = trial_grad.data();
    }

    // xt = x + stp d ("x + d" at a unit step, as the torch path)
    void write_trial() const {
        const T s = T(st[S_STP]);
        if (s == T(1)) for (long e = 0; e < n; ++e) xt[e] = x[e] + d[e];
        else for (long e = 0; e < n; ++e) xt[e] = x[e] + s * d[e];
    }

    // xt = the point of the model's next evaluation: its initial weights
    // (the flat params) before its first, else the trial point its last
    // step chose (x + stp d: a running model's state always ends a step
    // with one written)
    void load_trial() const {
        if (st[S_N_FUN] != 0) {
            write_trial();
            return;
        }
        for (const auto& r : runs.runs) std::copy(B.params + r.flat, B.params + r.flat + r.len, xt + r.packed);
    }

    // params = x: a model's result (or its last iterate) where the caller reads it
    void restore() const {
        for (const auto& r : runs.runs) std::copy(x + r.packed, x + r.packed + r.len, B.params + r.flat);
    }

    // the L2 term added to the gradient at the trial point; the value there
    double add_l2() const {
        const T l2 = T(st[S_L2]);
        double ww = 0;
        for (const auto& r : runs.runs) {
            if (!r.weight) continue;
            const T* p = xt + r.packed;
            T* gr = gt + r.packed;
            for (int j = 0; j < r.len; ++j) gr[j] = gr[j] + l2 * p[j];
            ww += dot(p, p, r.len);
        }
        return double(B.loss_sums[slot]) / st[S_COUNT] + 0.5 * st[S_L2] * ww;
    }

    // the largest absolute entry; NaN if any entry is NaN (as torch's amax)
    double max_abs(const T* v) const {
        double m[LANES] = {};
        bool nan = false;
        long e = 0;
        for (; e + LANES <= n; e += LANES)
            for (int k = 0; k < LANES; ++k) {
                const double a = std::abs(double(v[e + k]));
                nan |= a != a;
                m[k] = m[k] > a ? m[k] : a;
            }
        for (; e < n; ++e) {
            const double a = std::abs(double(v[e]));
            nan |= a != a;
            m[0] = m[0] > a ? m[0] : a;
        }
        return nan ? NAN : *std::max_element(m, m + LANES);
    }

    // d = -H g: the two-loop recursion over the pairs held, newest first.
    // Each pass updates d by one pair and takes the next pair's dot with
    // the new d (update_then_dot): the values of the textbook's separate
    // dot and update passes, in half the passes. The passes alternate their
    // direction (update_then_dot's `backward`), so each begins where the
    // last one ended.
    void direction() const {
        const int col = int(st[S_COL]), head = int(st[S_HEAD]);
        const auto ring = [head](int t) { return (head - t + HISTORY) % HISTORY; };  // the t-th newest pair
        const T* const G = g;
        const T h0 = T(st[S_H0]);
        if (col == 0) {
            for (long e = 0; e < n; ++e) d[e] = -(h0 * G[e]);
            return;
        }
        bool backward = false;
        double alpha[HISTORY];
        // d = g, with the newest pair's s . d
        double sd = update_then_dot(d, S + ring(0) * stride, n, backward, [G](T, long e) { return G[e]; });
        double yd = 0;
        for (int t = 0; t < col; ++t) {
            backward = !backward;
            const T a = T(st[S_RHO + ring(t)] * sd);
            alpha[t] = a;
            const T* y = Y + ring(t) * stride;
            if (t + 1 < col) {  // d -= a y, with the next pair's s . d
                sd = update_then_dot(d, S + ring(t + 1) * stride, n, backward,
                                     [a, y](T de, long e) { return de - a * y[e]; });
            } else {  // d = h0 (d - a y), with the oldest pair's y . d
                yd = update_then_dot(d, Y + ring(t) * stride, n, backward, [a, y, h0](T de, long e) {
                    const T u = de - a * y[e];
                    return h0 * u;
                });
            }
        }
        for (int t = col - 1; t >= 0; --t) {
            backward = !backward;
            const T b = T(st[S_RHO + ring(t)] * yd);
            const T c = T(alpha[t]) - b;
            const T* s = S + ring(t) * stride;
            if (t > 0) {  // d += c s, with the next newer pair's y . d
                yd = update_then_dot(d, Y + ring(t - 1) * stride, n, backward,
                                     [c, s](T de, long e) { return de + c * s[e]; });
            } else {  // d = -(d + c s); forward: 2 col passes came before it, an even number
                for (long e = 0; e < n; ++e) d[e] = -(d[e] + c * s[e]);
            }
        }
    }

    // a line search along d from x (lnsrlb's start); a direction that is
    // not a descent direction fails at once
    void start_search() const {
        const double gd = dot(g, d, n);
        // the first step is 1 / ||d||, every later one 1
        const double stp = st[S_N_ITER] == 0 ? std::min(1.0 / std::sqrt(dot(d, d, n)), STPMAX) : 1.0;
        st[S_GD0] = gd;
        if (!(gd < 0)) {
            search_failed();
            return;
        }
        search_start(st, stp, st[S_F], gd);
        st[S_IFUN] = 1;
        write_trial();
    }

    // back to x; forget the pairs and restart along -g, or stop
    // (ABNORMAL_TERMINATION_IN_LNSRCH, at x) when there were none
    void search_failed() const {
        if (st[S_COL] == 0) {
            st[S_REASON] = R_ABNORMAL;
            return;
        }
        st[S_COL] = 0, st[S_H0] = 1;
        for (int k = 0; k < HISTORY; ++k) st[S_RHO + k] = 0;
        for (long e = 0; e < n; ++e) d[e] = -g[e];
        start_search();
    }

    void first(double f) const {
        std::copy(xt, xt + n, x), std::copy(gt, gt + n, g);
        st[S_F] = f;
        const double gmax = max_abs(gt);
        if (!std::isfinite(f) || !std::isfinite(gmax)) {
            st[S_REASON] = R_DIVERGED;
            return;
        }
        if (gmax <= cfg.tol) {
            st[S_REASON] = R_CONVERGED;
            return;
        }
        for (long e = 0; e < n; ++e) d[e] = -g[e];
        start_search();
    }

    // the search accepted its trial point: scipy's stopping tests, the
    // curvature pair, the next direction and search
    void end_iteration(double f, double gd) const {
        const int it = int(st[S_N_ITER] += 1);
        B.curves[long(slot) * cfg.max_iter + it - 1] = f;
        const double f_old = st[S_F];
        st[S_F] = f;
        const bool stop_iter = it >= cfg.max_iter;
        const bool stop_fun = !stop_iter && st[S_N_FUN] > cfg.max_fun;
        const double gmax = max_abs(gt);
        const double scale = std::max(std::max(std::abs(f_old), std::abs(f)), 1.0);
        const bool converged = !stop_iter && !stop_fun && (gmax <= cfg.tol || f_old - f <= cfg.ftol * scale);
        if (stop_iter) st[S_REASON] = R_MAX_ITER;
        else if (stop_fun) st[S_REASON] = R_MAX_FUN;
        else if (converged) st[S_REASON] = R_CONVERGED;
        const bool going = st[S_REASON] == R_RUNNING;
        if (going) {
            const double stp = st[S_STP], gd0 = st[S_GD0];
            const bool unit = stp == 1;
            const double sy = unit ? gd - gd0 : (gd - gd0) * stp;
            const double ddum = unit ? -gd0 : -gd0 * stp;
            if (sy > EPS * ddum) {
                const int k = (int(st[S_HEAD]) + 1) % HISTORY;
                T* s = S + k * stride;
                T* y = Y + k * stride;
                const T step = T(unit ? 1.0 : stp);
                for (long e = 0; e < n; ++e) y[e] = gt[e] - g[e], s[e] = step * d[e];
                const double yy = dot(y, y, n);
                st[S_HEAD] = k;
                st[S_RHO + k] = 1.0 / sy;
                st[S_H0] = sy / yy;
                st[S_COL] = std::min(int(st[S_COL]) + 1, HISTORY);
            }
        }
        std::copy(xt, xt + n, x), std::copy(gt, gt + n, g);
        if (going) {
            direction();
            start_search();
        }
    }

    // loss sum and gradient (no L2 term) at the trial point, by the step kernel
    int evaluate(const Data<T>& D, const StepScratch<T>& step) const {
        B.loss_sums[slot] = 0;
        return step.gradients(runs.packed_meta, hyper, D, xt, gt, B.loss_sums);
    }

    void advance() const {
        const double f = add_l2();
        st[S_N_FUN] += 1;
        if (st[S_N_FUN] == 1) {
            first(f);
            return;
        }
        const double gd = dot(gt, d, n);
        bool done = false;
        if (std::isfinite(f) && std::isfinite(gd)) {
            done = search_iterate(st, f, gd);
        } else {  // halve the step towards the best point so far
            st[S_STP] = st[S_STX] + P5 * (st[S_STP] - st[S_STX]);
            st[S_STMAX] = std::max(st[S_STP], st[S_STX]);
        }
        if (done) {
            end_iteration(f, gd);
            return;
        }
        st[S_IFUN] += 1;
        if (st[S_IFUN] - 1 >= cfg.max_ls) {  // L-BFGS-B evaluates at most max_ls points per search
            search_failed();
            return;
        }
        write_trial();
    }
};

template <class T>
int run(int op, int n_rows, const int64_t* rows, const int64_t* meta, double* state, const Settings& cfg,
        const Data<T>& D, const Buffers<T>& B, int n_threads) {
    for (int i = 0; i < n_rows; ++i) {
        const int64_t depth = meta[rows[i] * META + M_DEPTH];
        if (depth < 0 || depth > MAX_DEPTH) return 1;
    }
    // models are independent: threads take the next run of them as they
    // finish one (WorkQueue: runs of neighbours in memory); each thread has
    // its trial point and gradient buffers and the step kernel's scratch
    struct Trial {
        std::vector<T> xt, gt;
        StepScratch<T> step;
    };
    std::atomic<int> error{0};
    skp::for_each_item_on_threads<Trial>(n_rows, n_threads, [&](int i, Trial& trial) {
        const long row = rows[i];
        const Model<T> m(cfg, B, meta + row * META, D.hyper + row * HYPER, state + row * STATE, B.packed[row],
                         trial.xt, trial.gt);
        if (op == 1) {
            m.restore();
            return;
        }
        if (m.st[S_REASON] == R_RUNNING) m.load_trial();
        for (int e = 0; e < cfg.max_evals && m.st[S_REASON] == R_RUNNING; ++e) {
            if (const int code = m.evaluate(D, trial.step)) {
                error = 10 + code;
                break;
            }
            m.advance();
        }
        if (m.st[S_REASON] != R_RUNNING) m.restore();  // its result, where the caller reads it
    });
    return error;
}

}  // namespace

#define SKP_LBFGS_ENTRY(NAME, T)                                                                          \
    extern "C" int NAME(int op, int n_rows, const int64_t* rows, const int64_t* meta, const double* hyper,  \
                        double* state, const int64_t* packed, int n_folds, int bp, int n_features,        \
                        int n_outputs, int loss, const T* Xb, const T* Yb, const T* Wb,                    \
                        const double* counts, const double* weight_sums, const uint8_t* stepping,          \
                        const double* step0, double tol, double ftol, int max_iter, int max_fun,           \
                        int max_ls, int max_evals, T* params, T* loss_sums, T* x, T* g, T* d,              \
                        T* S, T* Y, double* curves, int n_threads) {                                       \
        const Settings cfg{tol, ftol, max_iter, max_fun, max_ls, max_evals};                               \
        const Data<T> D{hyper, n_folds, bp, n_features, n_outputs, loss, Xb, Yb, Wb,                       \
                        counts, weight_sums, stepping, step0};                                             \
        const Buffers<T> B{params, loss_sums, x, g, d, S, Y, packed, curves};                              \
        return run<T>(op, n_rows, rows, meta, state, cfg, D, B, n_threads);                                \
    }

SKP_LBFGS_ENTRY(skp_lbfgs_f32, float)
SKP_LBFGS_ENTRY(skp_lbfgs_f64, double)

extern "C" int skp_lbfgs_layout(int* meta, int* hyper, int* state, int* history, int* pack_bytes) {
    *meta = META, *hyper = HYPER, *state = STATE, *history = HISTORY, *pack_bytes = PACK_BYTES;
    return 0;
}
