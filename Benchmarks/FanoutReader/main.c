/*
 * fanout-reader: a lean load tool for SyncHub's fan-out figures (BENCHMARKS.md,
 * "Cluster mode on Redis", figure 3). Holds N WebSocket clients on one letter
 * board with plain sockets and one epoll loop (no WebSocket library: the
 * frames a hub sends are unmasked and small), paces changes from a few of
 * them, and measures, for every change, when the last client saw it.
 *
 *   fanout-reader --port P [--host 127.0.0.1] [--board NAME] [--clients 10000]
 *                 [--senders 10] [--rate 10] [--duration 10] [--warmup 1]
 *                 [--connect-rate 5000] [--pid PID]...
 *
 * It exists because `syncclient bench`, the project's general load tool, costs
 * about 5 us of CPU per frame read (lws client machinery, a Swift callback per
 * frame): at 10,000 clients and 10 changes a second it takes half of a 2-core
 * machine, so it competes with the hubs it measures. This reader costs a
 * fraction of that per frame (one recv, a scan for "version"), and so leaves
 * the cores to the hubs. Both hub configurations of a comparison are measured
 * with it, in the same run.
 *
 * Changes: the senders alternate {"type":"select","letter":"A"} and
 * {"type":"deselect","letter":"A"} (each changes the board, so each gets a new
 * version), round robin, `--rate` a second in all, each with a ref. A sender's
 * ack names the change's version; each client records when it first read a
 * state whose version is at or above it. "Visible at every client" for a
 * change sent in the measured window is the last client's time minus the
 * send time. Every connection answers pings with pongs.
 *
 * Prints one JSON line: connected, changes measured (and how many every
 * client saw), p50/p90/p99/max of visibility at every client in ms, frames
 * read a second, this process's CPU % and the summed CPU % of every --pid.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_VERSIONS 200000
#define BUFFER 65536

typedef struct {
    int fd;
    int upgraded;
    size_t have;            /* bytes in buf */
    uint64_t seen;          /* highest version read */
    unsigned char buf[BUFFER];
} client_t;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static double cpu_seconds(int pid) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *p = strrchr(text, ')');
    if (!p) return 0;
    unsigned long utime = 0, stime = 0;
    /* after ") " come fields 3..: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime);
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static uint64_t parse_number(const unsigned char *p, const unsigned char *end) {
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') v = v * 10 + (uint64_t)(*p++ - '0');
    return v;
}

/* Writes a masked client frame (mask key 0: the payload goes as it is). */
static void send_frame(int fd, int opcode, const char *payload, size_t length) {
    unsigned char frame[256];
    size_t at = 0;
    if (length > 125) return;   /* control frames and our intents are short: one length byte */
    frame[at++] = (unsigned char)(0x80 | opcode);
    frame[at++] = (unsigned char)(0x80 | length);
    frame[at++] = 0; frame[at++] = 0; frame[at++] = 0; frame[at++] = 0;
    memcpy(frame + at, payload, length);
    at += length;
    ssize_t ignored = send(fd, frame, at, MSG_NOSIGNAL);
    (void)ignored;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *board = "fanout";
    int port = 0, clients = 10000, senders = 10, pids[16], npids = 0;
    double rate = 10, duration = 10, warmup = 1, connect_rate = 5000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--host")) host = argv[i + 1];
        else if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--board")) board = argv[i + 1];
        else if (!strcmp(argv[i], "--clients")) clients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--senders")) senders = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--duration")) duration = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--connect-rate")) connect_rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--pid") && npids < 16) pids[npids++] = atoi(argv[i + 1]);
        else { fprintf(stderr, "fanout-reader: unknown option %s\n", argv[i]); return 2; }
    }
    if (port <= 0 || clients < 1 || senders < 1 || senders > clients || rate <= 0 || connect_rate <= 0 || duration <= 0) {
        fprintf(stderr, "fanout-reader: give --port, and --clients >= --senders >= 1, --rate, --connect-rate and --duration > 0\n");
        return 2;
    }
    client_t *c = calloc((size_t)clients, sizeof *c);
    uint64_t *sent_at = calloc(MAX_VERSIONS, sizeof *sent_at);       /* by version: when its change was sent */
    uint64_t *last_seen = calloc(MAX_VERSIONS, sizeof *last_seen);   /* by version: the last client's first read */
    uint32_t *seen_by = calloc(MAX_VERSIONS, sizeof *seen_by);       /* by version: how many clients read it */
    uint64_t *ref_sent = calloc(1 << 20, sizeof *ref_sent);          /* by ref */
    if (!c || !sent_at || !last_seen || !seen_by || !ref_sent) { fprintf(stderr, "fanout-reader: out of memory\n"); return 2; }
    int ep = epoll_create1(0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) { fprintf(stderr, "fanout-reader: --host must be an IPv4 address\n"); return 2; }
    char request[512];
    int request_length = snprintf(request, sizeof request,
        "GET /boards/%s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", board, host, port);

    uint64_t start = now_ns(), frames = 0;
    int opened = 0, upgraded = 0, failures = 0;
    /* Connect, paced. */
    while (opened < clients) {
        uint64_t due = start + (uint64_t)((double)opened / connect_rate * 1e9);
        if (now_ns() < due) { usleep(200); continue; }
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
            failures++;
            if (fd >= 0) close(fd);
            c[opened].fd = -1;
            opened++;
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        ssize_t ignored = send(fd, request, (size_t)request_length, MSG_NOSIGNAL);
        (void)ignored;
        c[opened].fd = fd;
        struct epoll_event event = { .events = EPOLLIN, .data.u32 = (uint32_t)opened };
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event);
        opened++;
    }

    uint64_t began = now_ns(), measure_from = 0, measure_until = 0, stop_at = 0, next_send = 0, refs = 0;
    uint64_t sent_in_window = 0, acked_in_window = 0, refused_in_window = 0, duplicate_versions = 0;
    uint64_t cpu_from_frames = 0;
    double cpu_self0 = 0, cpu_hubs0 = 0, cpu_self1 = 0, cpu_hubs1 = 0;
    int sender = 0, select_next = 1;
    struct epoll_event events[512];
    for (;;) {
        uint64_t now = now_ns();
        if (!measure_from && upgraded + failures >= clients) {
            /* Everyone is in (or failed): warm up, then measure. */
            measure_from = now + (uint64_t)(warmup * 1e9);
            measure_until = measure_from + (uint64_t)(duration * 1e9);
            stop_at = measure_until + 2000000000ull;   /* two more seconds for the last changes to arrive */
            next_send = now;
        }
        if (measure_from && now >= measure_from && cpu_from_frames == 0) {
            cpu_from_frames = frames + 1;
            cpu_self0 = cpu_seconds(getpid());
            for (int i = 0; i < npids; i++) cpu_hubs0 += cpu_seconds(pids[i]);
        }
        if (measure_until && now >= measure_until && cpu_self1 == 0) {
            cpu_self1 = cpu_seconds(getpid());
            for (int i = 0; i < npids; i++) cpu_hubs1 += cpu_seconds(pids[i]);
            cpu_self1 += 1e-9;
        }
        if (stop_at && now >= stop_at) break;
        if (now - began > 600ull * 1000000000ull) break;   /* never more than ten minutes */
        /* Pace the changes. */
        while (next_send && now >= next_send && now < measure_until) {
            client_t *s = &c[sender % senders];
            sender++;
            next_send += (uint64_t)(1e9 / rate);
            if (s->fd < 0 || !s->upgraded) continue;
            char intent[128];
            refs++;
            int n = snprintf(intent, sizeof intent, "{\"type\":\"%s\",\"letter\":\"A\",\"ref\":\"%llu\"}",
                             select_next ? "select" : "deselect", (unsigned long long)refs);
            select_next = !select_next;
            if (refs < (1 << 20)) ref_sent[refs] = now;
            if (now >= measure_from) sent_in_window++;
            send_frame(s->fd, 0x1, intent, (size_t)n);
        }
        int ready = epoll_wait(ep, events, 512, 1);
        for (int e = 0; e < ready; e++) {
            client_t *k = &c[events[e].data.u32];
            now = now_ns();   /* per socket: a batch of 512 takes milliseconds to read */
            for (;;) {
                size_t room = BUFFER - k->have;
                ssize_t got = recv(k->fd, k->buf + k->have, room, 0);
                if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                    if (k->upgraded == 0) failures++;   /* closed before its upgrade: it will never count */
                    epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
                    close(k->fd);
                    k->fd = -1;
                    break;
                }
                if (got < 0) break;
                k->have += (size_t)got;
                size_t at = 0;
                if (!k->upgraded) {
                    unsigned char *end = memmem(k->buf, k->have, "\r\n\r\n", 4);
                    if (!end) { if (k->have == BUFFER) k->have = 0; break; }
                    if (memcmp(k->buf, "HTTP/1.1 101", 12) != 0) {
                        failures++;
                        epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
                        close(k->fd);
                        k->fd = -1;
                        k->upgraded = -1;
                        break;
                    }
                    k->upgraded = 1;
                    upgraded++;
                    at = (size_t)(end - k->buf) + 4;
                }
                while (k->have - at >= 2) {
                    unsigned char *f = k->buf + at;
                    int opcode = f[0] & 0x0F;
                    uint64_t length = f[1] & 0x7F;
                    size_t header = 2;
                    if (length == 126) { if (k->have - at < 4) break; length = ((uint64_t)f[2] << 8) | f[3]; header = 4; }
                    else if (length == 127) {
                        if (k->have - at < 10) break;
                        length = 0;
                        for (int b = 0; b < 8; b++) length = (length << 8) | f[2 + b];
                        header = 10;
                    }
                    if (length > BUFFER - 16) {   /* never from a letter board: drop the connection */
                        epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
                        close(k->fd);
                        k->fd = -1;
                        k->have = 0;
                        at = 0;
                        break;
                    }
                    if (k->have - at < header + length) break;
                    unsigned char *payload = f + header, *stop = payload + length;
                    if (opcode == 0x9) send_frame(k->fd, 0xA, (const char *)payload, (size_t)length);
                    if (opcode == 0x1) {
                        frames++;
                        unsigned char *v = memmem(payload, length, "\"version\":", 10);
                        uint64_t version = v ? parse_number(v + 10, stop) : 0;
                        int is_ack = memmem(payload, length < 16 ? length : 16, "\"ack\"", 5) != NULL;
                        if (is_ack || memmem(payload, length < 24 ? length : 24, "\"rejected\"", 10) || memmem(payload, length < 16 ? length : 16, "\"error\"", 7)) {
                            unsigned char *r = memmem(payload, length, "\"ref\":\"", 7);
                            uint64_t ref = r ? parse_number(r + 7, stop) : 0;
                            if (ref && ref < (1 << 20) && ref_sent[ref] >= measure_from && ref_sent[ref] < measure_until && measure_from) {
                                if (is_ack) acked_in_window++; else refused_in_window++;
                            }
                            if (is_ack && ref && ref < (1 << 20) && version < MAX_VERSIONS && ref_sent[ref]) {
                                if (sent_at[version]) duplicate_versions++;   /* an ack of no change: not a change of its own */
                                else sent_at[version] = ref_sent[ref];
                            }
                        } else if (memmem(payload, length < 16 ? length : 16, "\"state\"", 7)) {
                            if (k->seen == 0) {
                                k->seen = version;   /* the first state: what was there before this client came */
                            } else if (version > k->seen) {
                                for (uint64_t w = k->seen + 1; w <= version && w < MAX_VERSIONS; w++) {
                                    seen_by[w]++;
                                    if (now > last_seen[w]) last_seen[w] = now;
                                }
                                k->seen = version;
                            }
                        }
                    }
                    at += header + (size_t)length;
                }
                memmove(k->buf, k->buf + at, k->have - at);
                k->have -= at;
                /* Less than the room asked for: the socket is drained (epoll says when more comes). */
                if ((size_t)got < room) break;
            }
        }
    }
    /* Changes sent in the window, and when the last client saw each. */
    uint64_t *every = malloc(MAX_VERSIONS * sizeof *every);
    if (!every) { fprintf(stderr, "fanout-reader: out of memory\n"); return 2; }
    size_t measured = 0, partial = 0;
    for (uint64_t v = 1; v < MAX_VERSIONS; v++) {
        if (!sent_at[v] || sent_at[v] < measure_from || sent_at[v] >= measure_until) continue;
        if ((int)seen_by[v] < upgraded) { partial++; continue; }
        every[measured++] = last_seen[v] - sent_at[v];
    }
    qsort(every, measured, sizeof *every, compare_u64);
    double seconds = duration;
    double p50 = measured ? every[measured / 2] / 1e6 : 0;
    double p90 = measured ? every[(measured * 9) / 10] / 1e6 : 0;
    double p99 = measured ? every[measured * 99 / 100 < measured ? measured * 99 / 100 : measured - 1] / 1e6 : 0;
    double max = measured ? every[measured - 1] / 1e6 : 0;
    printf("{\"connected\":%d,\"connectFailures\":%d,\"changesSent\":%llu,\"changesAcknowledged\":%llu,\"changesRefused\":%llu,"
           "\"acksOfNoChange\":%llu,\"changesMeasured\":%zu,\"changesNotSeenByEveryClient\":%zu,"
           "\"visibilityAtEveryClientMillis\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
           "\"framesReadPerSecond\":%.0f,\"readerCPUPercent\":%.1f,\"hubCPUPercent\":%.1f}\n",
           upgraded, failures, (unsigned long long)sent_in_window, (unsigned long long)acked_in_window,
           (unsigned long long)refused_in_window, (unsigned long long)duplicate_versions, measured, partial, p50, p90, p99, max,
           (double)(frames - (cpu_from_frames ? cpu_from_frames - 1 : 0)) / (seconds + 2),
           (cpu_self1 - cpu_self0) / seconds * 100, (cpu_hubs1 - cpu_hubs0) / seconds * 100);
    /* Every change sent in the window acknowledged as a change and seen by every client, or the run failed. */
    return measured > 0 && partial == 0 && refused_in_window == 0 && measured == acked_in_window ? 0 : 1;
}
