#if canImport(Glibc)
import Glibc
#endif

/// Waits for SIGTERM or SIGINT, so that a command can shut down in order: refuse new work, finish
/// what runs, stop the database.
///
/// Create it before the command starts any thread. It blocks the two signals in the calling thread,
/// and every thread started after it inherits that mask. A blocked signal stays pending until
/// `wait()` takes it with `sigwait`, whenever it comes: during start-up, before anyone waits, or
/// from the kernel when a supervisor dies (`PR_SET_PDEATHSIG`). Child processes get an empty mask
/// (`prepare_child_signals` in CSystem).
///
/// This replaced a dispatch signal source, with which the signal was ignored until libdispatch's
/// manager thread had installed its handler, and then handled by whichever thread had it unblocked,
/// racing a signalfd read. A SIGTERM sent about 37 ms after exec was lost in two of four runs of
/// `ShutdownSignalTests` (80 starts each). Such a process never stopped: one, orphaned by a SIGKILLed
/// supervisor in CI, kept its port and its pool for half an hour.
final class ShutdownSignal {
    private var signals = sigset_t()

    init() {
        signal(SIGPIPE, SIG_IGN)
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Returns once SIGTERM or SIGINT has arrived (at once if one is already pending).
    func wait() {
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
    }
}
