/*
 * json_floor.cpp - what the field's fastest JSON parser takes to read the bench's traces:
 * the floor that tlreport's reading is measured against (tools/bench_ranks.sh).
 *
 * simdjson (Debian's libsimdjson-dev) picks its widest kernel for the CPU at run time.  It
 * is C++, so this program is; it is benchmark-only and tlcompare never links it.  Each mode
 * reads the files one after the other on one core, through one reused buffer (as tlreport
 * reuses its window), so that the figure is the parse and not the allocator:
 *
 *   json_floor read FILE...      the bytes into memory with read(2), nothing else
 *   json_floor dom FILE...       each file parsed whole: every token of it checked, which is
 *                                what a reader that refuses a malformed trace must at least do
 *   json_floor ondemand FILE...  each event's "cat" read, and a kernel's "name" (what the
 *                                collective report needs); the rest skipped, its brackets
 *                                balanced but its grammar not checked
 *
 * Prints one line: the files' bytes and the kernels with "nccl" in their names.  Time it
 * from outside (tools/benchrun).  Exits 1 naming the file that failed to read or parse.
 */
#include <simdjson.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

struct buffer {
    char *data = nullptr;
    size_t cap = 0, len = 0;
    ~buffer() { std::free(data); }
};

/* The whole file into b, with simdjson's padding after it; false on an error. */
bool read_file(const char *path, buffer &b)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    b.len = 0;
    for (;;) {
        if (b.cap - b.len < (1u << 20) + simdjson::SIMDJSON_PADDING) {
            size_t ncap = b.cap ? b.cap * 2 : (64u << 20);
            char *nd = static_cast<char *>(std::realloc(b.data, ncap));
            if (!nd) {
                close(fd);
                return false;
            }
            b.data = nd;
            b.cap = ncap;
        }
        ssize_t k = read(fd, b.data + b.len, 1u << 20);
        if (k < 0) {
            close(fd);
            return false;
        }
        if (k == 0)
            break;
        b.len += static_cast<size_t>(k);
    }
    close(fd);
    std::memset(b.data + b.len, 0, simdjson::SIMDJSON_PADDING);
    return true;
}

bool is_comm(std::string_view name) { return name.find("nccl") != std::string_view::npos; }

/* Every value parsed into simdjson's tape, then the events walked for the kernels. */
bool floor_dom(simdjson::dom::parser &p, const buffer &b, size_t &kernels)
{
    simdjson::dom::element doc;
    if (p.parse(b.data, b.len, false).get(doc))
        return false;
    simdjson::dom::array events;
    if (doc["traceEvents"].get_array().get(events))
        return false;
    for (simdjson::dom::element ev : events) {
        std::string_view cat, name;
        if (!ev["cat"].get(cat) && cat == "kernel" && !ev["name"].get(name) && is_comm(name))
            kernels++;
    }
    return true;
}

/* The events' fields read in their order, as a streaming reader does. */
bool floor_ondemand(simdjson::ondemand::parser &p, const buffer &b, size_t &kernels)
{
    simdjson::ondemand::document doc;
    if (p.iterate(b.data, b.len, b.cap).get(doc))
        return false;
    simdjson::ondemand::array events;
    if (doc["traceEvents"].get_array().get(events))
        return false;
    for (auto ev : events) {
        simdjson::ondemand::object o;
        if (ev.get_object().get(o))
            return false;
        bool kernel = false;
        for (auto field : o) {
            std::string_view key, val;
            if (field.unescaped_key().get(key))
                return false;
            if (key == "cat") {
                if (field.value().get_string().get(val))
                    return false;
                kernel = val == "kernel";
            } else if (key == "name" && kernel) {
                if (field.value().get_string().get(val))
                    return false;
                kernels += is_comm(val);
            }
        }
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3 || (std::strcmp(argv[1], "read") && std::strcmp(argv[1], "dom") && std::strcmp(argv[1], "ondemand"))) {
        std::fprintf(stderr, "usage: json_floor read|dom|ondemand FILE...\n");
        return 2;
    }
    std::string_view mode = argv[1];
    buffer b;
    simdjson::dom::parser dom;
    simdjson::ondemand::parser od;
    size_t bytes = 0, kernels = 0;
    for (int i = 2; i < argc; i++) {
        if (!read_file(argv[i], b)) {
            std::fprintf(stderr, "json_floor: %s: cannot read it\n", argv[i]);
            return 1;
        }
        bytes += b.len;
        bool ok = mode == "read" || (mode == "dom" ? floor_dom(dom, b, kernels) : floor_ondemand(od, b, kernels));
        if (!ok) {
            std::fprintf(stderr, "json_floor: %s: simdjson could not parse it\n", argv[i]);
            return 1;
        }
    }
    std::printf("%zu bytes, %zu communication kernels (simdjson %s)\n", bytes, kernels,
                simdjson::get_active_implementation()->name().c_str());
    return 0;
}
