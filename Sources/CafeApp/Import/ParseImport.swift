import Aggregation
import CafeDomain
import CafeStore
import Foundation
import JSONLogging
import PostgresKit

/// `cafe import-parse DIR [--dry-run]`: a Parse app's users, cafes, comments and photos, from its
/// export (`ParseExport`), checked (`ParseImportPlan`) and written in batches (`ParseImportStore`).
/// Accounts keep their bcrypt passwords (rehashed to argon2id at their first log-in) and every
/// object its Parse objectId, which `/parse` keeps answering to. `commentSum`/`commentAmount` are
/// never copied: the worker's pass counts the imported comments, and the report says how many
/// cafes the export had wrong.
struct ParseImport {
    let pool: ConnectionPool
    /// Where imported photos go, cleaned as uploads are.
    let files: FileRepository
    /// Rows per transaction (`--batch`).
    let batchSize: Int
    let logger: Logger

    static let defaultBatchSize = 1_000
    /// Photo bytes one batch reads and writes at most (a batch of one row may exceed it by that row's
    /// photo): photos are read from `files/` only as their batch is written, so memory holds about
    /// this much of them whatever the size of the export.
    static let photoBytesPerBatch = 64 * 1024 * 1024

    struct Report {
        let dryRun: Bool
        let files: [(file: String, format: String, objects: Int)]
        let unreadable: [(file: String, reason: String)]
        let plan: ParseImportPlan
        /// Rows written (or, in a dry run, that would be) per class.
        let imported: [String: Int]
        let photos: Int
        /// Cafes whose exported commentSum/commentAmount differ from the recount, of those that had any.
        let wrongAggregates: (wrong: Int, compared: Int)
    }

    func run(directory: URL, dryRun: Bool, progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) async throws -> Report {
        let export = try ParseExport(directory: directory)
        let store = ParseImportStore(pool: pool, files: files)
        let objects = export.classFiles.flatMap(\.objects)
        func ids(_ className: String) async -> [String] { objects.filter { $0.className == className }.map(\.objectID) }
        var known = ParseImportPlan.Known()
        known.users = try await store.imported(.user, ids("_User"))
        known.cafes = try await store.imported(.cafe, ids("CafeMaster"))
        known.comments = try await store.imported(.comment, ids("CafeTransactionComment"))
        let names = objects.compactMap { $0.fields["username"]?.string }
        known.accounts = try await store.accounts(named: Array(Set(names.map { $0.lowercased() })))
        let plan = ParseImportPlan(export, known: known)
        let files = export.classFiles.map { ($0.file, $0.format.rawValue, $0.objects.count) }
        let photoCount = Set(plan.cafes.compactMap(\.photo?.name) + plan.comments.compactMap(\.photo?.name)).count
        let counts = ["_User": plan.users.count, "CafeMaster": plan.cafes.count, "CafeTransactionComment": plan.comments.count]
        if dryRun {
            var recount: [String: (sum: Int, amount: Int)] = [:]
            for c in plan.comments {
                if case .planned(let cafe) = c.cafe { recount[cafe, default: (0, 0)].sum += 1; recount[cafe, default: (0, 0)].amount += c.star.value }
            }
            return Report(dryRun: true, files: files, unreadable: export.unreadable, plan: plan, imported: counts, photos: photoCount,
                          wrongAggregates: Self.compare(plan.exportedAggregates, recount))
        }

        let total = plan.users.count + plan.cafes.count + plan.comments.count
        var done = 0
        progress(0, total)
        var userIDs = known.users
        for batch in plan.users.chunked(batchSize) {
            await userIDs.merge(try store.insert(users: Array(batch))) { $1 }
            done += batch.count
            progress(done, total)
        }
        var cafeIDs = known.cafes
        for batch in plan.cafes.chunked(batchSize, bytes: { $0.photo?.size ?? 0 }, limit: Self.photoBytesPerBatch) {
            await cafeIDs.merge(try store.insert(cafes: Array(batch))) { $1 }
            done += batch.count
            progress(done, total)
        }
        for batch in plan.comments.chunked(batchSize, bytes: { $0.photo?.size ?? 0 }, limit: Self.photoBytesPerBatch) {
            let rows = batch.compactMap { c -> ParseImportStore.Comment? in
                guard let cafe = Self.id(c.cafe, cafeIDs), let author = Self.id(c.author, userIDs) else { return nil }
                return .init(objectID: c.objectID, cafe: CafeID(rawValue: cafe), author: UserID(rawValue: author), detail: c.detail,
                             star: c.star, photo: c.photo, createdAt: c.createdAt, updatedAt: c.updatedAt)
            }
            _ = try await store.insert(comments: rows)
            done += batch.count
            progress(done, total)
        }
        // The worker's own pass counts what was imported, so the cafes show exact aggregates now.
        _ = try await OutboxDrain(pool: pool, logger: logger).drain()
        let recount = try await store.aggregates(ofCafes: plan.cafes.map(\.objectID))
        return Report(dryRun: false, files: files, unreadable: export.unreadable, plan: plan, imported: counts, photos: photoCount,
                      wrongAggregates: Self.compare(plan.exportedAggregates, recount))
    }

    private static func id(_ reference: ParseImportPlan.Reference, _ planned: [String: Int64]) -> Int64? {
        switch reference {
        case .planned(let objectID): planned[objectID]
        case .existing(let id): id
        }
    }

    /// Of the cafes the export gave counts for, how many differ from the recount.
    static func compare(_ exported: [String: (sum: Int?, amount: Int?)], _ recount: [String: (sum: Int, amount: Int)]) -> (wrong: Int, compared: Int) {
        var wrong = 0
        var compared = 0
        for (cafe, counts) in exported where counts.sum != nil || counts.amount != nil {
            compared += 1
            let actual = recount[cafe] ?? (0, 0)
            if (counts.sum.map { $0 != actual.sum } ?? false) || (counts.amount.map { $0 != actual.amount } ?? false) { wrong += 1 }
        }
        return (wrong, compared)
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        chunked(size, bytes: { _ in 0 }, limit: 0)
    }

    /// Runs of at most `size` elements whose `bytes` add up to at most `limit` (a run holds at least one).
    func chunked(_ size: Int, bytes: (Element) -> Int, limit: Int) -> [ArraySlice<Element>] {
        var runs: [ArraySlice<Element>] = []
        var start = startIndex
        var total = 0
        for index in indices {
            let weight = bytes(self[index])
            if index > start, index - start >= Swift.max(1, size) || (limit > 0 && total + weight > limit) {
                runs.append(self[start..<index])
                (start, total) = (index, 0)
            }
            total += weight
        }
        if start < endIndex { runs.append(self[start..<endIndex]) }
        return runs
    }
}
