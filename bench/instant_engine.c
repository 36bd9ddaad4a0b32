/* bench/bot.py's measured engine in C: bench/instant_engine.py's behaviour, without
 * an interpreter between the pipe and the stamp.
 *
 * Why: the engine stamps when its read of `go` returned; everything before that stamp
 * (the pipe, the wake-up) is counted as the runner's. A Python engine's own line
 * reading and decoding comes before its stamp too, and is not the runner's. This one
 * stamps as read() returns the line, and writes its answer in one write().
 * It answers `go` with a random move of the last `legal` line, preceded by
 * `info string stamp READ WRITE` (CLOCK_MONOTONIC nanoseconds). No --think-ms: the
 * bench's opponent keeps the Python engine.
 * Build: cc -O2 -o instant_engine instant_engine.c (bench/bot.py does it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 17];
static char legal[sizeof buf];
static char *moves[4096];
static int n_moves = 0;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void say(const char *text) {
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(1, text, left);
        if (n <= 0) exit(1);
        text += n;
        left -= (size_t)n;
    }
}

/* one line (no newline): answer it */
static int line(char *text, long long read_at) {
    char *cmd = strtok(text, " \t\r");
    if (cmd == NULL) return 1;
    if (strcmp(cmd, "go") == 0) {
        static char out[sizeof buf + 128];
        const char *move = n_moves ? moves[rand() % n_moves] : "resign";
        snprintf(out, sizeof out, "info string stamp %lld %lld\nbestmove %s\n", read_at,
                 now_ns(), move);
        say(out);
    } else if (strcmp(cmd, "legal") == 0) {
        char *rest = strtok(NULL, "\r");
        snprintf(legal, sizeof legal, "%s", rest ? rest : "");
        n_moves = 0;
        for (char *m = strtok(legal, " \t"); m && n_moves < 4096; m = strtok(NULL, " \t"))
            moves[n_moves++] = m;
    } else if (strcmp(cmd, "isready") == 0) {
        say("readyok\n");
    } else if (strcmp(cmd, "arena") == 0) {
        say("id name instant-c\narenaok 1\n");
    } else if (strcmp(cmd, "quit") == 0) {
        return 0;
    }
    return 1;
}

int main(void) {
    size_t have = 0;
    int skipping = 0; /* in a line longer than the buffer: dropped up to its newline */
    srand(0);
    for (;;) {
        ssize_t n = read(0, buf + have, sizeof buf - have - 1);
        long long read_at = now_ns();
        if (n <= 0) return 0;
        have += (size_t)n;
        char *start = buf, *end;
        while ((end = memchr(start, '\n', have - (size_t)(start - buf))) != NULL) {
            *end = '\0';
            if (!skipping && !line(start, read_at)) return 0;
            skipping = 0;
            start = end + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof buf - 1) {
            have = 0;
            skipping = 1;
        }
    }
}
