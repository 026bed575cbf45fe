import Foundation
@testable import HTTPKit
import XCTest

/// A lane with a time budget works for at most its share of the time: once a long job has spent
/// the budget, new work is refused until the share has refilled it; occasional short jobs never
/// meet the bound.
final class LaneTimeBudgetTests: XCTestCase {
    func testALongJobSpendsTheBudgetAndTheShareRefillsIt() throws {
        let lane = WorkLane(.init(name: "heavy", limit: 1, timeBudget: .init(share: 0.25, burst: 0.1)))

        XCTAssertEqual(try waitFor { try await lane.run { usleep(400_000); return 1 } }, 1, "within the burst: runs")
        // 0.1 s of credit, plus 0.1 s earned while it ran, minus 0.4 s spent: 0.2 s in debt,
        // refilled at a quarter of a second a second in 0.8 s.
        let spent: Int? = try waitFor { try await lane.run { 2 } }
        XCTAssertNil(spent, "the budget is spent: refused without running")
        usleep(400_000)
        let inDebt: Int? = try waitFor { try await lane.run { 3 } }
        XCTAssertNil(inDebt, "still in debt")
        usleep(600_000)
        XCTAssertEqual(try waitFor { try await lane.run { 4 } }, 4, "refilled")
    }

    func testShortJobsWellUnderTheShareAreNeverRefused() throws {
        let lane = WorkLane(.init(name: "heavy", limit: 1, timeBudget: .init(share: 0.25, burst: 0.05)))
        for i in 0..<20 {
            XCTAssertEqual(try waitFor { try await lane.run { usleep(2_000); return i } }, i)
            usleep(20_000)   // 2 ms of work in every 22: under a quarter
        }
    }

    func testWithoutABudgetALaneIsBoundedOnlyByItsLimit() throws {
        let lane = WorkLane(.init(name: "query", limit: 1))
        XCTAssertEqual(try waitFor { try await lane.run { usleep(200_000); return 1 } }, 1)
        XCTAssertEqual(try waitFor { try await lane.run { 2 } }, 2)
    }
}

/// A job frees its place as soon as its answer is ready: a caller who asks again the moment it has
/// its answer is never refused by its own previous request, even on a lane of one.
final class LanePlaceTests: XCTestCase {
    func testASequentialCallerIsNeverRefusedByItsOwnPreviousJob() throws {
        let lane = WorkLane(.init(name: "heavy", limit: 1))
        var refused = 0
        for i in 0..<2_000 where try waitFor({ try await lane.run { i } }) == nil { refused += 1 }
        XCTAssertEqual(refused, 0)
    }
}
