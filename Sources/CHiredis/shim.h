#ifndef SYNCHUB_CHIREDIS_SHIM_H
#define SYNCHUB_CHIREDIS_SHIM_H

// The second C library's one room (hiredis 0.14, synchronous API). Swift
// cannot call the variadic redisCommand; everything goes through the argv
// forms, which are binary-safe (lengths given).
#include <hiredis/hiredis.h>
#include <sys/time.h>

/// Connects with a timeout in milliseconds; NULL only when out of memory
/// (a failed connection returns a context whose `err` is set).
static inline redisContext *shredis_connect(const char *host, int port, long timeout_ms)
{
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    return redisConnectWithTimeout(host, port, tv);
}

/// Bounds every later read and write on the connection (SO_RCVTIMEO/SO_SNDTIMEO):
/// a server that stops answering (SIGSTOP, a partition) fails the call.
static inline int shredis_set_timeout(redisContext *c, long timeout_ms)
{
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    return redisSetTimeout(c, tv);
}

/// Queues one command (pipelining); 0 on success.
static inline int shredis_append(redisContext *c, int argc, const char **argv, const size_t *lengths)
{
    return redisAppendCommandArgv(c, argc, argv, lengths);
}

/// Reads the next reply of the pipeline; NULL on a connection error (c->err set).
static inline redisReply *shredis_next_reply(redisContext *c)
{
    void *reply = NULL;
    if (redisGetReply(c, &reply) != REDIS_OK) return NULL;
    return (redisReply *)reply;
}

static inline redisReply *shredis_element(redisReply *r, size_t i) { return r->element[i]; }

#endif
