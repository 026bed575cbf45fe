#if canImport(Glibc)
import Glibc
#endif
import CSystem
import CWslay
import Foundation
import IOReadiness
import Synchronization

/// What an application does with a WebSocket's messages.
public protocol WebSocketHandler: AnyObject, Sendable {
    /// A whole text message (valid UTF-8: wslay checks it). Called on the loop's thread: never wait here.
    func received(_ message: [UInt8], on socket: WebSocket)
    /// The socket has closed (either side, dropped, or the server stops); called once, on the loop's thread.
    func closed(_ socket: WebSocket)
}

/// One WebSocket connection, taken over from libmicrohttpd after its 101 (`Response.webSocket`). Its
/// framing is wslay's; its reading and writing are `WebSocketLoop`'s. Any thread may `send` or `close`:
/// what it sends waits in its outbox until the loop hands it to wslay.
///
/// Bounded: when more than `maxQueuedBytes` wait unsent (a client that reads slower than messages come),
/// the socket is closed with 1008 `too_slow`, and what waited is dropped.
/// Unchecked `Sendable`: `context`, `extra`, `lastHeard`, `lastPing` and `interest` are the loop thread's
/// alone; the outbox is under its mutex; the rest is set once.
public final class WebSocket: @unchecked Sendable {
    public let maxQueuedBytes: Int
    let fd: Int32
    let handler: any WebSocketHandler
    private let giveBack: @Sendable () -> Void
    fileprivate var context: wslay_event_context_ptr?
    fileprivate var extra: [UInt8]
    fileprivate var lastHeard = MonotonicClock.nanoseconds()
    fileprivate var lastPing = MonotonicClock.nanoseconds()
    fileprivate var interest: UInt32 = 0
    /// The loop that reads and writes it (it lives as long as the process).
    private unowned let loop: WebSocketLoop

    private struct Outbox {
        var messages: [[UInt8]] = []
        var bytes = 0
        var close: (code: UInt16, reason: String)?
    }
    private let outbox = Mutex(Outbox())
    /// Bytes wslay holds unsent (the loop updates it).
    fileprivate let queuedInFraming = Atomic<Int>(0)

    init(fd: Int32, extra: [UInt8], maxQueuedBytes: Int, handler: any WebSocketHandler, loop: WebSocketLoop,
         giveBack: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.loop = loop
        self.extra = extra
        self.maxQueuedBytes = maxQueuedBytes
        self.handler = handler
        self.giveBack = giveBack
    }

    /// Queues a text message; past `maxQueuedBytes` the socket is closed instead (1008 `too_slow`).
    public func send(_ text: [UInt8]) {
        outbox.withLock { box in
            guard box.close == nil else { return }
            guard box.bytes + text.count + queuedInFraming.load(ordering: .relaxed) <= maxQueuedBytes else {
                box.messages = []
                box.bytes = 0
                box.close = (1008, "too_slow")
                return
            }
            box.messages.append(text)
            box.bytes += text.count
        }
        loop.wake(self)
    }

    /// Closes with `code` and `reason` after what is already queued.
    public func close(code: UInt16, reason: String) {
        outbox.withLock { box in if box.close == nil { box.close = (code, reason) } }
        loop.wake(self)
    }

    /// The loop takes what waits.
    fileprivate func takeOutbox() -> (messages: [[UInt8]], close: (code: UInt16, reason: String)?) {
        outbox.withLock { box in
            defer { box.messages = []; box.bytes = 0 }
            return (box.messages, box.close)
        }
    }

    fileprivate func handBack() { giveBack() }
}

/// The thread that reads and writes every WebSocket of a server: one epoll for all their sockets (no
/// thread per connection), level-triggered, each socket watched for reading while wslay wants to read
/// and for writing while it has frames to send. Messages queued from other threads wake it through an
/// eventfd. It pings every socket each `pingInterval` and closes one that sent nothing (not even the
/// pong) for `idleTimeout`.
/// Unchecked `Sendable`: `sockets` is its thread's alone; `arriving`, `woken` and `stopping` are under mutexes.
final class WebSocketLoop: @unchecked Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    private var sockets: [Int32: WebSocket] = [:]
    private let arriving = Mutex<[WebSocket]>([])
    private let woken = Mutex<[ObjectIdentifier: WebSocket]>([:])
    private let stopping = Mutex<DispatchSemaphore?>(nil)
    private let started = Mutex(false)
    let pingInterval: Double
    let idleTimeout: Double
    let maxMessageBytes: Int
    let open = Atomic<Int>(0)

    init(pingInterval: Double, idleTimeout: Double, maxMessageBytes: Int) {
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.maxMessageBytes = maxMessageBytes
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeFD))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    /// Takes a socket over (from any thread); its thread starts with the first and lives as long as the process.
    func add(_ socket: WebSocket) {
        open.add(1, ordering: .relaxed)
        arriving.withLock { $0.append(socket) }
        let start = started.withLock { started -> Bool in defer { started = true }; return !started }
        if start {
            let thread = Thread { [self] in
                cafe_name_thread("websockets")
                run()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        wake()
    }

    func wake(_ socket: WebSocket) {
        woken.withLock { $0[ObjectIdentifier(socket)] = socket }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Closes every socket (1001 `server_stopping`) and waits until they are handed back, at most `timeout`.
    func closeAll(timeout: Double) {
        guard started.withLock({ $0 }), open.load(ordering: .acquiring) > 0 else { return }
        let done = DispatchSemaphore(value: 0)
        stopping.withLock { $0 = done }
        wake()
        _ = done.wait(timeout: .now() + timeout)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var lastTick = MonotonicClock.nanoseconds()
        while true {
            let n = epoll_wait(epollFD, &events, Int32(events.count), 250)
            for socket in arriving.withLock({ s -> [WebSocket] in defer { s = [] }; return s }) { register(socket) }
            if n > 0 {
                for event in events[0..<Int(n)] {
                    if event.data.fd == wakeFD {
                        var count: UInt64 = 0
                        _ = read(wakeFD, &count, 8)
                        continue
                    }
                    guard let socket = sockets[event.data.fd] else { continue }
                    service(socket, readable: event.events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0)
                }
            }
            for socket in woken.withLock({ w -> [WebSocket] in defer { w = [:] }; return Array(w.values) }) where sockets[socket.fd] === socket {
                service(socket, readable: false)
            }
            if let done = stopping.withLock({ s -> DispatchSemaphore? in defer { s = nil }; return s }) {
                for socket in Array(sockets.values) {
                    // The close goes out the way every close does (what the socket can take now), then it is handed back.
                    socket.close(code: 1001, reason: "server_stopping")
                    service(socket, readable: false)
                    finish(socket)
                }
                done.signal()
            }
            let now = MonotonicClock.nanoseconds()
            if now - lastTick > 1_000_000_000 {
                lastTick = now
                tick(now)
            }
        }
    }

    private func register(_ socket: WebSocket) {
        var callbacks = wslay_event_callbacks(recv_callback: receive, send_callback: transmit, genmask_callback: mask,
                                              on_frame_recv_start_callback: nil, on_frame_recv_chunk_callback: nil,
                                              on_frame_recv_end_callback: nil, on_msg_recv_callback: message)
        var context: wslay_event_context_ptr?
        guard wslay_event_context_server_init(&context, &callbacks, Unmanaged.passUnretained(socket).toOpaque()) == 0, let context else {
            socket.handler.closed(socket)
            socket.handBack()
            open.subtract(1, ordering: .relaxed)
            return
        }
        wslay_event_config_set_max_recv_msg_length(context, UInt64(maxMessageBytes))
        socket.context = context
        let flags = fcntl(socket.fd, F_GETFL)
        _ = fcntl(socket.fd, F_SETFL, flags | O_NONBLOCK)
        // As for a stream (`HTTPServer.streamSocketBufferBytes`): the kernel holds little for a client that
        // does not read, so `maxQueuedBytes` is the bound.
        var sendBuffer = HTTPServer.streamSocketBufferBytes
        _ = setsockopt(socket.fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        sockets[socket.fd] = socket
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: socket.fd))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, socket.fd, &event)
        socket.interest = EPOLLIN.rawValue
        // What libmicrohttpd read past the handshake, if anything, is read first.
        service(socket, readable: !socket.extra.isEmpty)
    }

    /// Reads what came, hands wslay what waits, writes what it can; closes the socket when wslay is done with it.
    private func service(_ socket: WebSocket, readable: Bool) {
        guard let context = socket.context else { return }
        if readable, wslay_event_recv(context) != 0 { return finish(socket) }
        let (messages, close) = socket.takeOutbox()
        for text in messages {
            text.withUnsafeBufferPointer { bytes in
                var message = wslay_event_msg(opcode: UInt8(WSLAY_TEXT_FRAME.rawValue), msg: bytes.baseAddress, msg_length: bytes.count)
                _ = wslay_event_queue_msg(context, &message)
            }
        }
        if let close {
            Array(close.reason.utf8).withUnsafeBufferPointer { reason in
                _ = wslay_event_queue_close(context, close.code, reason.baseAddress, reason.count)
            }
        }
        if wslay_event_want_write(context) != 0, wslay_event_send(context) != 0 { return finish(socket) }
        socket.queuedInFraming.store(Int(wslay_event_get_queued_msg_length(context)), ordering: .relaxed)
        let wantRead = wslay_event_want_read(context) != 0
        let wantWrite = wslay_event_want_write(context) != 0
        guard wantRead || wantWrite else { return finish(socket) }
        let interest = (wantRead ? EPOLLIN.rawValue : 0) | (wantWrite ? EPOLLOUT.rawValue : 0)
        if interest != socket.interest {
            var event = epoll_event(events: interest, data: epoll_data_t(fd: socket.fd))
            epoll_ctl(epollFD, EPOLL_CTL_MOD, socket.fd, &event)
            socket.interest = interest
        }
    }

    private func finish(_ socket: WebSocket) {
        guard sockets[socket.fd] === socket else { return }
        sockets[socket.fd] = nil
        epoll_ctl(epollFD, EPOLL_CTL_DEL, socket.fd, nil)
        if let context = socket.context { wslay_event_context_free(context) }
        socket.context = nil
        socket.handler.closed(socket)
        socket.handBack()
        open.subtract(1, ordering: .releasing)
    }

    /// Pings the sockets due one, closes those idle past `idleTimeout`.
    private func tick(_ now: UInt64) {
        for socket in Array(sockets.values) {
            guard let context = socket.context else { continue }
            let silent = Double(now - min(now, socket.lastHeard)) / 1e9
            if silent > idleTimeout + 5 {
                finish(socket)   // not even its answer to the close came
            } else if silent > idleTimeout {
                socket.close(code: 1001, reason: "idle")
            } else if Double(now - min(now, socket.lastPing)) / 1e9 >= pingInterval {
                socket.lastPing = now
                var ping = wslay_event_msg(opcode: UInt8(WSLAY_PING.rawValue), msg: nil, msg_length: 0)
                _ = wslay_event_queue_msg(context, &ping)
                service(socket, readable: false)
            }
        }
    }

    // wslay's callbacks, on the loop's thread (inside `wslay_event_recv`/`wslay_event_send`).

    fileprivate static func socket(_ userData: UnsafeMutableRawPointer?) -> WebSocket? {
        userData.map { Unmanaged<WebSocket>.fromOpaque($0).takeUnretainedValue() }
    }
}

private let receive: wslay_event_recv_callback = { context, buffer, length, _, userData in
    guard let socket = WebSocketLoop.socket(userData), let buffer else {
        wslay_event_set_error(context, WSLAY_ERR_CALLBACK_FAILURE.rawValue)
        return -1
    }
    if !socket.extra.isEmpty {
        let n = min(length, socket.extra.count)
        _ = UnsafeMutableBufferPointer(start: buffer, count: n).update(fromContentsOf: socket.extra.prefix(n))
        socket.extra.removeFirst(n)
        return n
    }
    let n = recv(socket.fd, buffer, length, 0)
    if n > 0 { return n }
    wslay_event_set_error(context, n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? WSLAY_ERR_WOULDBLOCK.rawValue : WSLAY_ERR_CALLBACK_FAILURE.rawValue)
    return -1
}

private let transmit: wslay_event_send_callback = { context, data, length, _, userData in
    guard let socket = WebSocketLoop.socket(userData) else {
        wslay_event_set_error(context, WSLAY_ERR_CALLBACK_FAILURE.rawValue)
        return -1
    }
    let n = send(socket.fd, data, length, Int32(MSG_NOSIGNAL))
    if n >= 0 { return n }
    wslay_event_set_error(context, errno == EAGAIN || errno == EWOULDBLOCK ? WSLAY_ERR_WOULDBLOCK.rawValue : WSLAY_ERR_CALLBACK_FAILURE.rawValue)
    return -1
}

/// Only a client masks its frames; wslay asks a server context for none, but the callback must exist.
private let mask: wslay_event_genmask_callback = { _, buffer, length, _ in
    guard let buffer else { return -1 }
    for i in 0..<length { buffer[i] = UInt8.random(in: 0...255) }
    return 0
}

private let message: wslay_event_on_msg_recv_callback = { _, argument, userData in
    guard let argument, let socket = WebSocketLoop.socket(userData) else { return }
    socket.lastHeard = MonotonicClock.nanoseconds()
    let opcode = UInt32(argument.pointee.opcode)
    if opcode == WSLAY_TEXT_FRAME.rawValue {
        let bytes = argument.pointee.msg.map { Array(UnsafeBufferPointer(start: $0, count: argument.pointee.msg_length)) } ?? []
        socket.handler.received(bytes, on: socket)
    } else if opcode == WSLAY_BINARY_FRAME.rawValue {
        socket.close(code: 1003, reason: "text_only")
    }
}
