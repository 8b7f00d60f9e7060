/* A load generator's connections, each from a loopback address of its own.
 *
 * Loaded with LD_PRELOAD into wrk or h2load by `scripts/bench --cores`, it binds every IPv4
 * socket that connects to 127.0.0.1 to the next address of 127.1.0.0/16 (127.1.0.1,
 * 127.1.0.2, ...) before the connect: Linux answers every address of 127.0.0.0/8 on the
 * loopback device, so the server sees each connection as a different client, keyed apart by
 * its rate limiter and its in-flight ceiling, with no header of ours to parse. Nothing else
 * changes: a socket already bound, another family or another destination is left alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static atomic_uint next_client;

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    static connect_fn real_connect;
    if (!real_connect)
        real_connect = (connect_fn)dlsym(RTLD_NEXT, "connect");
    if (!real_connect) {
        errno = ENOSYS;
        return -1;
    }
    if (address && address->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *to = (const struct sockaddr_in *)address;
        struct sockaddr_in bound;
        socklen_t bound_length = sizeof bound;
        int already_bound = getsockname(fd, (struct sockaddr *)&bound, &bound_length) == 0 &&
                            bound.sin_port != 0;
        if (to->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && !already_bound) {
            /* 127.1.0.1 first; 65,534 clients, then around again (0 and 255.255 skipped). */
            unsigned client = atomic_fetch_add(&next_client, 1) % 65534 + 1;
            struct sockaddr_in from = {0};
            from.sin_family = AF_INET;
            from.sin_port = 0;
            from.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | client);
            int saved = errno;
            /* A failed bind leaves the connection as it was: it comes from 127.0.0.1. */
            (void)bind(fd, (struct sockaddr *)&from, sizeof from);
            errno = saved;
        }
    }
    return real_connect(fd, address, length);
}
