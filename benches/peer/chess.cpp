// The program a user would write instead of grundy for "A Chess Game" (POJ 2425) judge files:
// straightforward and competent, single-threaded. mmap the input, a digit loop, the graph in
// CSR arrays, Kahn's algorithm for the Grundy values (successors first), xor per query, one
// output buffer. Acyclic graphs only (as the judge's inputs); it does not check the input.
//
//   g++ -O2 -o chess-peer benches/peer/chess.cpp && ./chess-peer < input > output
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

const char* at;
const char* end;

// The next unsigned number; false at the end of the input.
bool next_number(uint32_t& value) {
    while (at < end && (*at < '0' || *at > '9')) ++at;
    if (at == end) return false;
    uint32_t number = 0;
    while (at < end && *at >= '0' && *at <= '9') number = number * 10 + uint32_t(*at++ - '0');
    value = number;
    return true;
}

}  // namespace

int main() {
    struct stat info;
    if (fstat(0, &info) != 0) return 1;
    size_t size = size_t(info.st_size);
    std::vector<char> copy;
    const char* data = nullptr;
    if (size > 0) {
        void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, 0, 0);
        if (mapped != MAP_FAILED) {
            data = static_cast<const char*>(mapped);
        }
    }
    if (data == nullptr) {  // a pipe: read it all
        char buffer[1 << 16];
        ssize_t got;
        while ((got = read(0, buffer, sizeof buffer)) > 0) copy.insert(copy.end(), buffer, buffer + got);
        data = copy.data();
        size = copy.size();
    }
    at = data;
    end = data + size;

    std::vector<char> out;
    out.reserve(1 << 20);
    std::vector<uint32_t> offsets, targets, indegree, queue, grundy, seen;
    uint32_t n;
    while (next_number(n)) {
        // CSR: the out-neighbours of vertex v are targets[offsets[v] .. offsets[v + 1]].
        offsets.assign(n + 1, 0);
        targets.clear();
        for (uint32_t v = 0; v < n; ++v) {
            uint32_t degree = 0, target = 0;
            next_number(degree);
            for (uint32_t i = 0; i < degree; ++i) {
                next_number(target);
                targets.push_back(target);
            }
            offsets[v + 1] = uint32_t(targets.size());
        }
        // Kahn's algorithm on the reversed graph: a vertex is ready once all its successors
        // have values (its out-degree counts down).
        indegree.assign(n, 0);
        std::vector<uint32_t> rev_offsets(n + 1, 0), rev(targets.size());
        for (uint32_t t : targets) ++rev_offsets[t + 1];
        for (uint32_t v = 0; v < n; ++v) rev_offsets[v + 1] += rev_offsets[v];
        {
            std::vector<uint32_t> fill(rev_offsets.begin(), rev_offsets.end() - 1);
            for (uint32_t v = 0; v < n; ++v)
                for (uint32_t e = offsets[v]; e < offsets[v + 1]; ++e) rev[fill[targets[e]]++] = v;
        }
        queue.clear();
        for (uint32_t v = 0; v < n; ++v) {
            indegree[v] = offsets[v + 1] - offsets[v];
            if (indegree[v] == 0) queue.push_back(v);
        }
        grundy.assign(n, 0);
        seen.assign(n + 1, UINT32_MAX);
        for (size_t head = 0; head < queue.size(); ++head) {
            uint32_t v = queue[head];
            // mex of the successors' values, with a stamp array instead of clearing.
            for (uint32_t e = offsets[v]; e < offsets[v + 1]; ++e) {
                uint32_t g = grundy[targets[e]];
                if (g <= n) seen[g] = v;
            }
            uint32_t mex = 0;
            while (seen[mex] == v) ++mex;
            grundy[v] = mex;
            for (uint32_t e = rev_offsets[v]; e < rev_offsets[v + 1]; ++e)
                if (--indegree[rev[e]] == 0) queue.push_back(rev[e]);
        }
        // Queries until a line "0".
        uint32_t tokens;
        while (next_number(tokens) && tokens != 0) {
            uint32_t nim_sum = 0, vertex = 0;
            for (uint32_t i = 0; i < tokens; ++i) {
                next_number(vertex);
                nim_sum ^= grundy[vertex];
            }
            const char* line = nim_sum ? "WIN\n" : "LOSE\n";
            out.insert(out.end(), line, line + std::strlen(line));
        }
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
