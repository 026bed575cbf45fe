#ifndef CAFE_CSYSTEM_H
#define CAFE_CSYSTEM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <microhttpd.h>
// Waiting on descriptors (IOReadiness, the statement loop): epoll, woken by an eventfd; Glibc's Swift
// module has neither.
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Allocations of at least `bytes` are mapped from the kernel and unmapped when freed (glibc's
/// M_MMAP_THRESHOLD, fixed: glibc otherwise raises it after each such free, up to 32 MiB). 0 on success.
int cafe_map_allocations_from(size_t bytes);

/// Starts a libmicrohttpd daemon: epoll, one internal polling thread per pool slot.
/// MHD_start_daemon is variadic, which Swift cannot call; this fixes the option list.
/// host: dotted IPv4 or IPv6 literal; NULL means all interfaces. listen_fd >= 0: serve that
/// already-listening socket instead of binding host:port (the supervisor's, see cafe_listen).
struct MHD_Daemon *cafe_mhd_start(int listen_fd, const char *host, uint16_t port,
                                  unsigned int thread_pool_size,
                                  unsigned int connection_limit,
                                  unsigned int per_address_limit,
                                  unsigned int connection_timeout_seconds,
                                  size_t connection_memory_limit,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  MHD_NotifyConnectionCallback notify, void *notify_cls);

/// The context a request starts with when its target holds `%00` (a NUL once decoded, which would cut
/// the path or a query value short): the access handler refuses it.
void *cafe_mhd_nul_target(void);

/// The context libmicrohttpd is given for a request whose path holds `%2F` (an encoded slash).
void *cafe_mhd_encoded_slash_target(void);

/// How a request's header fields frame it, as RFC 9112 reads them: 0 when sound; 400 for a field name that is
/// no token (a space before the colon), a value holding NUL, CR or LF, more than one Content-Length, or a
/// Content-Length beside a Transfer-Encoding; 501 for a Transfer-Encoding other than `chunked` alone.
int cafe_mhd_framing_fault(struct MHD_Connection *connection);

/// The socket of a connection, or -1.
int cafe_mhd_connection_fd(struct MHD_Connection *connection);
/// Hands an upgraded connection back to libmicrohttpd, which closes it (MHD_upgrade_action is variadic).
int cafe_mhd_upgrade_close(struct MHD_UpgradeResponseHandle *urh);
/// Shuts the socket down when its peer has closed its side (a read would return end of file), so that
/// libmicrohttpd closes it now; 1 when it did (see `ConnectionWatch.peerCheckNanos`).
int cafe_end_if_peer_closed(int fd);

/// The TCP port the daemon listens on (useful after binding port 0), or 0.
uint16_t cafe_mhd_bound_port(struct MHD_Daemon *daemon);

/// The peer address of a connection as text ("127.0.0.1"), written into buf. Returns 0 on success.
int cafe_mhd_client_address(struct MHD_Connection *connection, char *buf, size_t buflen);
/// The pointer the connection-notify callback stored for this connection (NULL for none).
void *cafe_mhd_socket_context(struct MHD_Connection *connection);

/// fork + exec with optional privilege drop, used to run PostgreSQL as an unprivileged account.
/// uid/gid < 0 keep the current ones. stdout and stderr go to out_fd (when >= 0).
/// die_with_parent: the child gets SIGINT if the spawning thread's process dies (PR_SET_PDEATHSIG),
/// so a SIGKILLed parent leaves no server behind. Returns the pid, or -1 with errno set.
pid_t cafe_spawn(const char *path, char *const argv[], int uid, int gid, int out_fd, int die_with_parent);

/// A listening TCP socket (SO_REUSEADDR, close-on-exec, non-blocking) on host:port; -1 with errno set.
int cafe_listen(const char *host, uint16_t port, int backlog);

/// The local port of a socket, or 0.
uint16_t cafe_socket_port(int fd);

/// Makes descriptor fd refer to a new, unbound socket of the same family, so that whatever shuts fd down
/// next (libmicrohttpd's MHD_stop_daemon) leaves the socket it referred to as it was. Returns 0, or -1.
int cafe_swap_in_stand_in_socket(int fd);

/// fork + execve of a request-handling process: socket_fd becomes its descriptor target_fd (inherited
/// across exec), it gets its own process group (a terminal's Ctrl-C goes to the supervisor only) and SIGTERM
/// if the spawning thread's process dies. stdout/stderr are inherited. Returns the pid, or -1.
pid_t cafe_spawn_with_socket(const char *path, char *const argv[], char *const envp[], int socket_fd, int target_fd);

/// A pipe whose two ends are close-on-exec from the start (pipe2 is not in Swift's Glibc module). 0, or -1.
int cafe_pipe(int ends[2]);

/// fork + execve of a program a test watches: in_fd, out_fd and err_fd become its standard input, output
/// and error (-1: /dev/null), it starts in `directory` (NULL: this one), with no other descriptor of ours,
/// the default signal mask and dispositions, and no death signal. Returns the pid, or -1 with errno set.
pid_t cafe_spawn_child(const char *path, char *const argv[], char *const envp[], const char *directory,
                       int in_fd, int out_fd, int err_fd);

/// fork + execv of a helper that speaks over pipes: its stdin is *to_child's read end, its stdout
/// *from_child's write end (the parent keeps the other ends, close-on-exec); stderr is inherited. Its
/// address space is limited to address_space_bytes (when > 0) and it gets SIGKILL if the spawning
/// thread's process dies. Returns the pid, or -1 with errno set.
pid_t cafe_spawn_with_pipes(const char *path, char *const argv[], long long address_space_bytes, int *to_child, int *from_child);

/// Makes the calling (single-threaded) process a helper that runs only when nothing else wants a core
/// (the password hashers): a session of its own (so that its CPU is charged to a scheduling group of its
/// own, not the serving process's), `niceness` for it and for that group (autogroup, where the kernel has
/// one), and, with niceness > 0, SCHED_IDLE. 0 on success, -1 when a step was refused.
int cafe_become_idle_helper(int niceness);

/// Makes the calling (single-threaded) process a helper that steps back from the serving process but
/// must still finish on a busy machine (the photo decoders): a process group of its own in the serving
/// process's session (its scheduling group), at `niceness`. 0 on success, -1 when refused.
int cafe_become_niced_helper(int niceness);

/// Sets the calling thread's CPU niceness (0–19); 0 on success, -1 with errno.
int cafe_set_thread_niceness(int niceness);

/// Names the calling thread for the kernel (what `top -H`, `perf` and /proc show), cut to its 15
/// bytes. Foundation's `Thread.name` does not do it reliably: set before `start()` it never reached the
/// kernel, and set from inside it reached it for some threads only.
void cafe_name_thread(const char *name);

#endif
