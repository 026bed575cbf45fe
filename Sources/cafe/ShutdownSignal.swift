#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Waits for SIGTERM or SIGINT. Their default action (exit at once) is replaced by a dispatch
/// source, so the command can shut down in order: refuse new work, finish what runs, stop the database.
final class ShutdownSignal {
    private let received = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [received] in received.signal() }
            source.resume()
            sources.append(source)
        }
    }

    func wait() {
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
