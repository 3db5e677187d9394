// A stand-alone driver of the native kernel's C entry points, for running
// a kernel built for another CPU (aarch64 under qemu-user) on inputs the
// host's tests wrote: tests/test_kernel_aarch64.py.
//
// Usage: epoch_driver DIR. DIR holds dims.txt ("n_models n_steps K bp F C
// loss n_slots n_params n_rows") and one raw little-endian file per buffer
// (meta int64; stepping uint8; every other buffer float64; names below).
// The driver runs the self-test, one training epoch (mode 0) and the
// forward of the rows of forward_X.bin (n_rows x F, row-major), and writes
// params.out, state1.out, state2.out, loss_sums.out and forward.out.
// Exit code: 0, or the self-test's code, or 90+ on a file error.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int skp_self_test();
extern "C" int skp_run_f64(int, int, const int64_t*, const double*, int, int, int, int, int, int, const double*,
                           const double*, const double*, const double*, const double*, const uint8_t*,
                           const double*, double*, double*, double*, double*, double*, double*, int, int);
extern "C" int skp_forward_f64(int, const int64_t*, int, int, const double*, int, const double*, double*, int);
extern "C" int skp_target(int*, int*, int*, char*, int);

namespace {

std::string dir;

template <class T> std::vector<T> load(const char* name) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "rb");
    std::vector<T> data;
    if (!f) return data;
    std::fseek(f, 0, SEEK_END);
    const long bytes = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    data.resize(bytes / sizeof(T));
    if (std::fread(data.data(), sizeof(T), data.size(), f) != data.size()) data.clear();
    std::fclose(f);
    return data;
}

bool save(const char* name, const std::vector<double>& data) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (!f) return false;
    const bool ok = std::fwrite(data.data(), sizeof(double), data.size(), f) == data.size();
    return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 91;
    dir = argv[1];
    int vector_bytes = 0, registers = 0, tiles[4];
    char isa[32];
    skp_target(&vector_bytes, &registers, tiles, isa, sizeof(isa));
    std::printf("%s %d\n", isa, vector_bytes);
    const int code = skp_self_test();
    if (code != 0) return code;

    int n_models, n_steps, K, bp, F, C, loss, n_slots, n_params, n_rows;
    FILE* dims = std::fopen((dir + "/dims.txt").c_str(), "r");
    if (!dims || std::fscanf(dims, "%d %d %d %d %d %d %d %d %d %d", &n_models, &n_steps, &K, &bp, &F, &C, &loss,
                             &n_slots, &n_params, &n_rows) != 10)
        return 92;
    std::fclose(dims);
    auto meta = load<int64_t>("meta.bin");
    auto stepping = load<uint8_t>("stepping.bin");
    auto hyper = load<double>("hyper.bin"), X = load<double>("X.bin"), Y = load<double>("Y.bin");
    auto W = load<double>("W.bin"), counts = load<double>("counts.bin");
    auto weight_sums = load<double>("weight_sums.bin"), step0 = load<double>("step0.bin");
    auto params = load<double>("params.bin"), state1 = load<double>("state1.bin");
    auto state2 = load<double>("state2.bin"), forward_X = load<double>("forward_X.bin");
    std::vector<double> loss_sums(n_slots, 0.0), forward(long(n_slots) * n_rows * C, 0.0);
    if (long(params.size()) != n_params || state1.size() != params.size() || state2.size() != params.size() ||
        long(X.size()) != long(n_steps) * K * F * bp)
        return 93;
    if (skp_run_f64(0, n_models, meta.data(), hyper.data(), n_steps, K, bp, F, C, loss, X.data(), Y.data(),
                    W.data(), counts.data(), weight_sums.data(), stepping.data(), step0.data(), params.data(),
                    nullptr, state1.data(), state2.data(), nullptr, loss_sums.data(), 1, 0) != 0)
        return 94;
    // the forward's rows in one block of whole vectors (n_rows <= block)
    const int lanes = vector_bytes / 8, block = (n_rows + lanes - 1) / lanes * lanes;
    std::vector<double> Xb(long(F) * block, 0.0);
    for (int i = 0; i < n_rows; ++i)
        for (int f = 0; f < F; ++f) Xb[long(f) * block + i] = forward_X[long(i) * F + f];
    if (skp_forward_f64(n_models, meta.data(), 1, block, Xb.data(), n_rows, params.data(), forward.data(), 1) != 0)
        return 95;
    const bool saved = save("params.out", params) && save("state1.out", state1) && save("state2.out", state2) &&
                       save("loss_sums.out", loss_sums) && save("forward.out", forward);
    return saved ? 0 : 96;
}
