import Backups
import CafeApp
import CafeTestSupport
import Foundation
import XCTest

/// A setting the service cannot use stops it at start, naming the variable and what it takes,
/// instead of a silent default.
final class ConfigurationRefusalTests: XCTestCase {
    func testPort80aExitsNamingPort() throws {
        let environment = CafeProcess.environment(dataDirectory: TestCluster.root.appendingPathComponent("unused-\(UUID().uuidString.prefix(6))"),
                                                  extra: ["PORT": "80a"])
        let (status, output) = try CafeProcess.run(["serve"], environment: environment, timeout: 20)
        XCTAssertEqual(status, 78, output)
        XCTAssertTrue(output.contains(#"PORT: "80a" is not a whole number from 0 to 65535"#), output)
    }

    func testEveryKindOfValueIsChecked() {
        let config = Configuration(environment: [
            "HTTP_THREADS": "0", "DB_QUERY_TIMEOUT": "soon", "LOG_LEVEL": "verbose", "RATE_LIMIT_HOLD": "-1",
            "TRUSTED_PROXIES": "10.0.0.0/40", "PUBLIC_URL": "cafe.example.com", "QUERY_MAX_IN": "1e3", "SEARCH_KEYWORD_CACHE": "-1",
        ])
        let named = config.invalid.map { String($0.prefix { $0 != ":" }) }
        XCTAssertEqual(Set(named), ["HTTP_THREADS", "DB_QUERY_TIMEOUT", "LOG_LEVEL", "RATE_LIMIT_HOLD", "TRUSTED_PROXIES", "PUBLIC_URL", "QUERY_MAX_IN",
                                  "SEARCH_KEYWORD_CACHE"],
                       "\(config.invalid)")
        XCTAssertThrowsError(try config.validate())
        let fine = Configuration(environment: ["PORT": "0", "QUERY_HEAVY_SHARE": "0.05", "PUBLIC_URL": "https://cafe.example.com/", "DATABASE_URL": ""])
        XCTAssertEqual(fine.invalid, [])
        XCTAssertEqual(fine.publicURL, "https://cafe.example.com")
        XCTAssertNil(fine.databaseURL, "empty is unset")
        XCTAssertEqual(fine.searchKeywordCache, 10_000)
        XCTAssertEqual(Configuration(environment: ["SEARCH_KEYWORD_CACHE": "0"]).searchKeywordCache, 0)
    }

    /// The embedded database's repository is `BACKUP_REPO`; a deployment's own database is backed up
    /// through its pgBackRest configuration (`BACKUP_CONFIG`), and mixing the two is refused.
    func testBackupsAreConfiguredOneWayPerKindOfDatabase() {
        let external = "host=db.example dbname=cafe"
        func refusal(_ environment: [String: String]) -> String? { Configuration(environment: environment).invalid.first { $0.hasPrefix("BACKUP_") } }
        XCTAssertEqual(refusal(["DATABASE_URL": external, "BACKUP_REPO": "/srv/backups"])?.contains("BACKUP_CONFIG"), true)
        XCTAssertEqual(refusal(["BACKUP_CONFIG": "/etc/pgbackrest.conf"])?.contains("DATABASE_URL"), true)
        XCTAssertEqual(refusal(["DATABASE_URL": external, "BACKUP_CONFIG": "pgbackrest.conf"])?.contains("absolute"), true)
        XCTAssertEqual(Configuration(environment: ["DATABASE_URL": external]).backup.repository, .off)
        XCTAssertEqual(Configuration(environment: ["DATABASE_URL": external, "BACKUP_CONFIG": "/etc/pgbackrest.conf"]).backup.repository,
                       .configured(URL(fileURLWithPath: "/etc/pgbackrest.conf")))
        XCTAssertEqual(Configuration(environment: ["DATABASE_URL": external, "BACKUP_CONFIG": "/etc/pgbackrest.conf", "BACKUP_REPO": "off"]).backup.repository, .off)
        XCTAssertEqual(Configuration(environment: ["CAFE_DATA_DIR": "/srv/cafe/pgdata"]).backup.repository, .directory(URL(fileURLWithPath: "/srv/cafe/backups")))
    }
}
