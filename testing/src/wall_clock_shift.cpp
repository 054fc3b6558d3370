// An LD_PRELOAD library for a server whose wall clock a test steps (RedisServer with
// ServerClock::stepped): clock_gettime() of the realtime clocks, gettimeofday() and time()
// return the real time plus the offset, in whole seconds ("+600", "-30"), written in the file
// that ROWPUMP_CLOCK_OFFSET_FILE names, read again at most every 10 ms; the monotonic clocks are
// left alone. Only system calls, no dlsym() and no malloc(): libfaketime cannot start Debian's
// redis-server, whose jemalloc calls clock_gettime() while libfaketime initialises itself.

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace {

std::atomic<long> offset_seconds{0};
std::atomic<long> next_read_ns{0};

long monotonic_ns() {
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

long parse_offset(const char* text, long n) {
    long i = 0, sign = 1, value = 0;
    if (i < n && (text[i] == '+' || text[i] == '-')) sign = text[i++] == '-' ? -1 : 1;
    for (; i < n && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + (text[i] - '0');
    return sign * value;
}

long offset() {
    const long now = monotonic_ns();
    if (now >= next_read_ns.load(std::memory_order_relaxed)) {
        next_read_ns.store(now + 10000000L, std::memory_order_relaxed);
        if (const char* path = std::getenv("ROWPUMP_CLOCK_OFFSET_FILE")) {
            const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY));
            if (fd >= 0) {
                char text[32];
                const long n = syscall(SYS_read, fd, text, sizeof text);
                syscall(SYS_close, fd);
                if (n > 0) offset_seconds.store(parse_offset(text, n), std::memory_order_relaxed);
            }
        }
    }
    return offset_seconds.load(std::memory_order_relaxed);
}

bool is_realtime(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE;
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t clock, struct timespec* ts) noexcept {
    const long result = syscall(SYS_clock_gettime, clock, ts);
    if (result == 0 && is_realtime(clock)) ts->tv_sec += offset();
    return static_cast<int>(result);
}

int gettimeofday(struct timeval* __restrict tv, void* __restrict) noexcept {
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
    if (tv != nullptr) {
        tv->tv_sec = ts.tv_sec + offset();
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t* out) noexcept {
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
    const time_t now = ts.tv_sec + offset();
    if (out != nullptr) *out = now;
    return now;
}

}  // extern "C"
