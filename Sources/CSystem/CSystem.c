#define _GNU_SOURCE
#include "CSystem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

/// host:port as a socket address: an IPv6 literal (it has a ':'), a dotted IPv4 one, or NULL for all
/// IPv4 interfaces. Returns the address's length, or 0 with errno EINVAL for a host that is neither.
static socklen_t socket_address(const char *host, uint16_t port, struct sockaddr_storage *addr) {
    memset(addr, 0, sizeof(*addr));
    if (host != NULL && strchr(host, ':') != NULL) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) { errno = EINVAL; return 0; }
        return sizeof(*a6);
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    if (host == NULL) a4->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) { errno = EINVAL; return 0; }
    return sizeof(*a4);
}

/// What `mark_nul_target` leaves as a request's context: only its address matters.
static char nul_target_marker;
static char encoded_slash_marker;

void *cafe_mhd_nul_target(void) { return &nul_target_marker; }
void *cafe_mhd_encoded_slash_target(void) { return &encoded_slash_marker; }

/// libmicrohttpd decodes the request target in place into C strings, so a `%00` cut the path or a
/// query value short where it stood (`/v1/cafes/1%00x` was `/v1/cafes/1`, `q=a%00b` was `q=a`). Called
/// with the target as sent, before decoding; what it returns is the request's first context, which the
/// access handler reads on its first call.
///
/// It also marks a path holding `%2F`: decoded, it would split its segment in two (`/v1/cafes%2F1` was
/// `/v1/cafes/1`), so a proxy that routes on the target as sent and this server would disagree.
static void *mark_nul_target(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls; (void)connection;
    if (uri == NULL) return NULL;
    const char *query = strchr(uri, '?');
    void *mark = NULL;
    for (const char *p = strchr(uri, '%'); p != NULL; p = strchr(p + 1, '%')) {
        if (p[1] == '0' && p[2] == '0') return &nul_target_marker;
        if ((query == NULL || p < query) && p[1] == '2' && (p[2] == 'F' || p[2] == 'f')) mark = &encoded_slash_marker;
    }
    return mark;
}

/// What `framing_fault` found so far in a request's header fields.
struct framing {
    int content_lengths;
    int transfer_encodings;
    int chunked_only;
    int malformed;
};

static int is_token_char(unsigned char c) {
    return c > 0x20 && c < 0x7f && strchr("\"(),/:;<=>?@[\\]{}", c) == NULL;
}

static enum MHD_Result framing_fault(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                     const char *value, size_t value_size) {
    (void)kind;
    struct framing *f = cls;
    for (size_t i = 0; i < key_size; i++) {
        if (!is_token_char((unsigned char)key[i])) f->malformed = 1;
    }
    for (size_t i = 0; value != NULL && i < value_size; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c == 0 || c == '\r' || c == '\n') f->malformed = 1;
    }
    if (key_size == 14 && strncasecmp(key, "Content-Length", 14) == 0) f->content_lengths++;
    if (key_size == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0) {
        f->transfer_encodings++;
        f->chunked_only = value != NULL && value_size == 7 && strncasecmp(value, "chunked", 7) == 0;
    }
    return MHD_YES;
}

int cafe_mhd_framing_fault(struct MHD_Connection *connection) {
    struct framing f = {0, 0, 0, 0};
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, framing_fault, &f);
    if (f.malformed || f.content_lengths > 1) return 400;
    if (f.transfer_encodings > 0 && f.content_lengths > 0) return 400;
    if (f.transfer_encodings > 1 || (f.transfer_encodings == 1 && !f.chunked_only)) return 501;
    return 0;
}

struct MHD_Daemon *cafe_mhd_start(int listen_fd, const char *host, uint16_t port,
                                  unsigned int thread_pool_size,
                                  unsigned int connection_limit,
                                  unsigned int per_address_limit,
                                  unsigned int connection_timeout_seconds,
                                  size_t connection_memory_limit,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  MHD_NotifyConnectionCallback notify, void *notify_cls) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE;
    if (listen_fd >= 0) {
        return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                                MHD_OPTION_LISTEN_SOCKET, listen_fd,
                                MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                                MHD_OPTION_URI_LOG_CALLBACK, mark_nul_target, NULL,
                                MHD_OPTION_END);
    }
    struct sockaddr_storage addr;
    if (socket_address(host, port, &addr) == 0) return NULL;
    if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_URI_LOG_CALLBACK, mark_nul_target, NULL,
                            MHD_OPTION_END);
}

int cafe_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

int cafe_end_if_peer_closed(int fd) {
    char byte;
    if (fd < 0 || recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0) return 0;
    shutdown(fd, SHUT_RDWR);
    return 1;
}

uint16_t cafe_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int cafe_mhd_client_address(struct MHD_Connection *connection, char *buf, size_t buflen) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *sa = info->client_addr;
    const void *src = sa->sa_family == AF_INET6
        ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
        : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
    return inet_ntop(sa->sa_family, src, buf, (socklen_t)buflen) == NULL ? -1 : 0;
}

void *cafe_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// Closes every descriptor from 3 up except `keep` (-1 for none). A child gets only the descriptors it
/// is given: whatever else the parent has open without close-on-exec (a test runner's process-exit
/// socket, a client's connection, a pipe another thread is about to hand to its own child) would
/// otherwise live on in it, and keep the other end from ever seeing that end close.
static void close_inherited_descriptors(int keep) {
    if (keep < 3) {
        close_range(3, ~0U, 0);
    } else {
        if (keep > 3) close_range(3, (unsigned)keep - 1, 0);
        close_range((unsigned)keep + 1, ~0U, 0);
    }
}

/// In a forked child before exec: the signal the kernel sends when the parent dies (0: none; exits if
/// the parent is already gone), and the mask and dispositions the parent may have changed reset
/// (e.g. SIGTERM blocked for sigwait). Async-signal-safe calls only.
static void prepare_child_signals(int parent_death_signal, pid_t parent) {
    if (parent_death_signal != 0) {
        prctl(PR_SET_PDEATHSIG, parent_death_signal);
        if (getppid() != parent) _exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < 32; s++) {
        if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
    }
}

pid_t cafe_spawn(const char *path, char *const argv[], int uid, int gid, int out_fd, int die_with_parent) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    // Child: only async-signal-safe calls from here to exec.
    setsid();
    if (out_fd >= 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(out_fd, STDERR_FILENO);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    close_inherited_descriptors(-1);
    if (gid >= 0) {
        if (setgroups(0, NULL) != 0 || setgid((gid_t)gid) != 0) _exit(126);
    }
    if (uid >= 0 && setuid((uid_t)uid) != 0) _exit(126);
    // After the credential change: the kernel clears the parent-death signal when credentials change.
    // SIGINT is PostgreSQL's "fast shutdown": clean, no crash recovery on the next start.
    prepare_child_signals(die_with_parent ? SIGINT : 0, parent);
    execv(path, argv);
    _exit(127);
}

int cafe_pipe(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

pid_t cafe_spawn_child(const char *path, char *const argv[], char *const envp[], const char *directory,
                       int in_fd, int out_fd, int err_fd) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    // Child: only async-signal-safe calls from here to exec. dup2 clears close-on-exec on the copies.
    int devnull = open("/dev/null", O_RDWR);
    if (dup2(in_fd >= 0 ? in_fd : devnull, STDIN_FILENO) < 0
        || dup2(out_fd >= 0 ? out_fd : devnull, STDOUT_FILENO) < 0
        || dup2(err_fd >= 0 ? err_fd : devnull, STDERR_FILENO) < 0) _exit(126);
    close_inherited_descriptors(-1);
    if (directory != NULL && chdir(directory) != 0) _exit(126);
    prepare_child_signals(0, 0);
    execve(path, argv, envp);
    _exit(127);
}

pid_t cafe_spawn_with_pipes(const char *path, char *const argv[], long long address_space_bytes, int *to_child, int *from_child) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return -1;
    if (pipe2(out, O_CLOEXEC) != 0) { close(in[0]); close(in[1]); return -1; }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls from here to exec. dup2 clears close-on-exec on the copies.
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        close_inherited_descriptors(-1);
        if (address_space_bytes > 0) {
            struct rlimit limit = {(rlim_t)address_space_bytes, (rlim_t)address_space_bytes};
            setrlimit(RLIMIT_AS, &limit);
        }
        prepare_child_signals(SIGKILL, parent);
        execv(path, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to_child = in[1];
    *from_child = out[0];
    return pid;
}

int cafe_listen(const char *host, uint16_t port, int backlog) {
    struct sockaddr_storage addr;
    socklen_t len = socket_address(host, port, &addr);
    if (len == 0) return -1;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (struct sockaddr *)&addr, len) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cafe_swap_in_stand_in_socket(int fd) {
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) return -1;
    int stand_in = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (stand_in < 0) return -1;
    // dup3 replaces fd in one step: no moment where the number is free for another thread's open().
    int swapped = dup3(stand_in, fd, O_CLOEXEC);
    close(stand_in);
    return swapped < 0 ? -1 : 0;
}

uint16_t cafe_socket_port(int fd) {
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) return 0;
    if (addr.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

pid_t cafe_spawn_with_socket(const char *path, char *const argv[], char *const envp[], int socket_fd, int target_fd) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    // Child: only async-signal-safe calls from here to exec.
    // A process group of its own, so a terminal's Ctrl-C reaches the supervisor alone (which then stops
    // this process in order). Not a session of its own (setsid): with the kernel's scheduler autogroups,
    // a new session competes for CPU as one group against everything else, a sixth less throughput here.
    setpgid(0, 0);
    if (socket_fd == target_fd) {
        int flags = fcntl(target_fd, F_GETFD);
        if (flags < 0 || fcntl(target_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) _exit(126);
    } else if (dup2(socket_fd, target_fd) < 0) {
        _exit(126);
    }
    close_inherited_descriptors(target_fd);
    // SIGTERM: the graceful stop, should the supervisor die without stopping us.
    prepare_child_signals(SIGTERM, parent);
    execve(path, argv, envp);
    _exit(127);
}

int cafe_set_thread_niceness(int niceness) {
    // Linux keeps a niceness per thread: PRIO_PROCESS with a thread id sets only that thread's.
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
}

void cafe_name_thread(const char *name) {
    // The kernel keeps at most 15 bytes and a NUL; pthread_setname_np refuses a longer name outright.
    char kept[16];
    snprintf(kept, sizeof kept, "%s", name);
    pthread_setname_np(pthread_self(), kept);
}

int cafe_become_idle_helper(int niceness) {
    // A session of its own: where the kernel groups tasks by session (autogroup), its CPU is charged to
    // a group of its own, not to the serving process's.
    setsid();
    int failed = setpriority(PRIO_PROCESS, 0, niceness) != 0;
    FILE *group = fopen("/proc/self/autogroup", "w");
    if (group != NULL) {
        fprintf(group, "%d", niceness);
        fclose(group);
    }
    if (niceness > 0) {
        // Only when nothing else wants a core: a niced group still ran out its slices while a request
        // waited (docs/performance.md, "Password hashing under log-in floods").
        struct sched_param none = {0};
        failed |= sched_setscheduler(0, SCHED_IDLE, &none) != 0;
    }
    return failed ? -1 : 0;
}

int cafe_become_niced_helper(int niceness) {
    // A process group of its own (a signal to the serving process's group is not its business), in the
    // serving process's session, so in its scheduling group: there the niceness puts it behind the
    // serving threads. A session (autogroup) of its own, however niced, made PostgreSQL's backends wait
    // for a core for tens of milliseconds while photos were decoded (docs/performance.md, "Photos").
    setpgid(0, 0);
    return setpriority(PRIO_PROCESS, 0, niceness) != 0 ? -1 : 0;
}

int cafe_map_allocations_from(size_t bytes) {
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 0 : -1;
}

int cafe_mhd_upgrade_close(struct MHD_UpgradeResponseHandle *urh) {
    return MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE) == MHD_YES ? 0 : -1;
}
