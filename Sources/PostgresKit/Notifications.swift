#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import Foundation

/// A notification (`NOTIFY channel, 'payload'`) this connection listens for.
public struct Notification: Sendable, Equatable {
    public let channel: String
    public let payload: String
}

extension Connection {
    /// Waits up to `timeout` for notifications and returns those that arrived (none on timeout).
    /// Throws when the connection is lost: a listener must then assume it missed some.
    public func notifications(waitingUpTo timeout: TimeInterval) throws -> [Notification] {
        var found = drainNotifications()
        guard found.isEmpty else { return found }
        guard !isBroken else { throw PostgresError(kind: .unavailable, message: "the listening connection is lost") }
        var pfd = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, Int32(max(0, timeout) * 1000))
        if ready < 0 && errno != EINTR { throw PostgresError(kind: .unavailable, message: "poll failed on the listening connection") }
        if ready > 0 {
            guard PQconsumeInput(handle) == 1, !isBroken else {
                throw PostgresError(connectionFailed: handle)
            }
            found = drainNotifications()
        }
        return found
    }

    private func drainNotifications() -> [Notification] {
        var found: [Notification] = []
        while let note = PQnotifies(handle) {
            found.append(Notification(channel: String(cString: note.pointee.relname), payload: String(cString: note.pointee.extra)))
            PQfreemem(note)
        }
        return found
    }
}
