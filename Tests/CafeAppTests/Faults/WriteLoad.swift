import CafeTestSupport
import Foundation
import Synchronization

/// Comment writers on their own threads, each request on a fresh connection, every answer kept:
/// what the service acknowledged can then be checked against what the database holds.
final class WriteLoad: Sendable {
    struct Outcome: Sendable {
        let detail: String
        let status: Int?          // nil: no answer (connection refused or dropped)
        let body: String
        /// Size of the photo sent with the comment, if any.
        let imageSize: Int?
    }

    private let outcomes = Mutex<[Outcome]>([])
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    private let target: @Sendable (Int) -> (port: UInt16, token: String, cafe: String)
    private let withPhotos: Bool

    /// `target(i)` says where the i-th request of a writer goes (port, session token, cafe id).
    init(writers: Int, withPhotos: Bool = false, target: @escaping @Sendable (Int) -> (port: UInt16, token: String, cafe: String)) {
        self.target = target
        self.withPhotos = withPhotos
        for w in 0..<writers {
            running.add(1, ordering: .relaxed)
            Thread { [self] in
                var i = 0
                while !stopped.load(ordering: .acquiring) {
                    record(write("w\(w)-\(i)", target(w * 1_000_000 + i)))
                    i += 1
                    usleep(2_000)
                }
                running.subtract(1, ordering: .releasing)
            }.start()
        }
    }

    func stop() -> [Outcome] {
        stopped.store(true, ordering: .releasing)
        while running.load(ordering: .acquiring) > 0 { usleep(10_000) }
        return outcomes.withLock { $0 }
    }

    var acknowledged: Int { outcomes.withLock { $0.filter { ($0.status ?? 0) / 100 == 2 }.count } }

    private func record(_ o: Outcome) { outcomes.withLock { $0.append(o) } }

    private func write(_ detail: String, _ to: (port: UInt16, token: String, cafe: String)) -> Outcome {
        do {
            var imageID: String?
            var size: Int?
            if withPhotos {
                // A real photo: its stored (cleaned) size is what the upload answered.
                let bytes = FilesAPITests.png
                let upload = try RawHTTPClient(port: to.port).request("POST", "/v1/files", headers: ["Authorization": "Bearer \(to.token)", "Content-Type": "image/png"], body: bytes)
                guard upload.status == 201 else { return Outcome(detail: detail, status: upload.status, body: upload.text, imageSize: nil) }
                imageID = upload.json()["id"] as? String
                size = upload.json()["size"] as? Int
            }
            let json = imageID.map { #"{"detail":"\#(detail)","star":\#(Int.random(in: 1...3)),"imageId":"\#($0)"}"# }
                ?? #"{"detail":"\#(detail)","star":\#(Int.random(in: 1...3))}"#
            let r = try RawHTTPClient(port: to.port).request("POST", "/v1/cafes/\(to.cafe)/comments", json: json, headers: ["Authorization": "Bearer \(to.token)"])
            return Outcome(detail: detail, status: r.status, body: r.text, imageSize: size)
        } catch {
            return Outcome(detail: detail, status: nil, body: String(describing: error), imageSize: nil)
        }
    }
}
