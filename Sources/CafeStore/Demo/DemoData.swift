import Foundation
import CafeDomain
import PostgresKit
import Synchronization

/// Fills an empty database with a small, realistic demo set (a few cafes in Japanese and English,
/// each with a drawn photo, users, comments with stars) and a demo admin account, or with N synthetic cafes for load tests.
public struct DemoData: Sendable {
    /// A seed is a bulk load nobody watches: its transaction leaves the live feed out (migration 0035).
    static let withoutLiveFeed = "SET LOCAL cafe.live_feed = 'off'"

    public struct AdminCredentials: Sendable {
        public let username: String
        public let password: String
    }

    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

    public func isEmpty() async throws -> Bool {
        try await pool.query("SELECT NOT EXISTS (SELECT 1 FROM users) AND NOT EXISTS (SELECT 1 FROM cafes)").one().decode(0)
    }

    static let cafes: [(name: String, catchCopy: String, introduction: String)] = [
        ("珈琲館 森の時計", "森の中の静かな喫茶店", "自家焙煎の珈琲と手作りのチーズケーキが自慢です。窓から見える森の景色を眺めながら、ゆっくりとした時間をお過ごしください。"),
        ("抹茶カフェ 翠", "京都宇治の抹茶専門店", "宇治から直送の抹茶を使ったラテやパフェをご用意しています。抹茶の苦味と甘さのバランスをお楽しみください。"),
        ("Blue Bottle Corner", "Single-origin pour-over, slowly", "A tiny corner cafe with a six-seat bar. We roast single-origin beans every Tuesday and brew every cup by hand. Free Wi-Fi and a quiet reading shelf."),
        ("蕎麦と珈琲 まるや", "蕎麦屋が始めたカフェ", "昼は手打ち蕎麦、午後からは珈琲と和菓子。そば粉のガレットも人気です。"),
        ("Café Lumière", "French pastries and espresso", "Croissants baked at six every morning, a proper espresso, and the best pain au chocolat on the street. Dogs welcome on the terrace."),
        ("ｺｰﾋｰ ハウス 七番", "昭和レトロな純喫茶", "創業五十年。ナポリタンとクリームソーダ、ネルドリップの珈琲。懐かしい味をどうぞ。"),
        ("Tea & Books", "A library you can drink in", "Over two thousand second-hand books, thirty teas, and long tables for working. Scones on weekends."),
        ("猫カフェ にゃんこ堂", "猫と過ごすひととき", "十二匹の保護猫がお出迎え。ドリンクはワンオーダー制です。猫の譲渡相談も受け付けています。"),
        ("Roastery 42", "Light roasts, loud music", "Our own roastery behind the counter. Try the Ethiopian natural as a filter or the house blend as a flat white."),
        ("喫茶 月光", "夜だけ開く喫茶店", "夜八時から深夜二時まで営業。ジャズのレコードと深煎りの珈琲で、一日の終わりをゆっくりと。"),
    ]

    /// Where each demo cafe is (real neighbourhoods of Tokyo and Kyoto, in `cafes`' order) and its hours
    /// (`OpeningHours`' JSON, in Asia/Tokyo).
    static let places: [(latitude: Double, longitude: Double, address: String, hours: String)] = [
        (35.7003, 139.5741, "東京都武蔵野市吉祥寺南町1丁目 (井の頭公園そば)",
         #"{"mon":[["09:00","19:00"]],"tue":[["09:00","19:00"]],"thu":[["09:00","19:00"]],"fri":[["09:00","19:00"]],"sat":[["09:00","19:00"]],"sun":[["09:00","19:00"]]}"#),
        (35.0037, 135.7788, "京都府京都市東山区祇園町南側",
         #"{"mon":[["10:00","18:00"]],"tue":[["10:00","18:00"]],"wed":[["10:00","18:00"]],"thu":[["10:00","18:00"]],"fri":[["10:00","18:00"]],"sat":[["10:00","18:00"]],"sun":[["10:00","18:00"]],"exceptions":[{"date":"2026-12-31","hours":[]},{"date":"2027-01-01","hours":[]},{"date":"2027-01-02","hours":[["12:00","16:00"]]}]}"#),
        (35.6806, 139.8010, "東京都江東区平野1丁目 (清澄白河)", Self.daily("08:00", "19:00")),
        (35.0441, 135.7867, "京都府京都市左京区一乗寺",
         #"{"mon":[["11:00","15:00"],["15:30","20:00"]],"wed":[["11:00","15:00"],["15:30","20:00"]],"thu":[["11:00","15:00"],["15:30","20:00"]],"fri":[["11:00","15:00"],["15:30","20:00"]],"sat":[["11:00","20:00"]],"sun":[["11:00","20:00"]]}"#),
        (35.6486, 139.7031, "東京都渋谷区代官山町", Self.daily("07:30", "21:00")),
        (35.6959, 139.7577, "東京都千代田区神田神保町2丁目",
         #"{"mon":[["08:00","20:00"]],"tue":[["08:00","20:00"]],"wed":[["08:00","20:00"]],"thu":[["08:00","20:00"]],"fri":[["08:00","20:00"]],"sat":[["08:00","20:00"]]}"#),
        (35.6613, 139.6680, "東京都世田谷区北沢2丁目 (下北沢)",
         #"{"mon":[["11:00","23:00"]],"tue":[["11:00","23:00"]],"wed":[["11:00","23:00"]],"thu":[["11:00","23:00"]],"fri":[["11:00","01:00"]],"sat":[["11:00","01:00"]],"sun":[["11:00","23:00"]]}"#),
        (35.0050, 135.7689, "京都府京都市中京区河原町通三条", Self.daily("12:00", "21:00")),
        (35.6440, 139.6988, "東京都目黒区上目黒1丁目 (中目黒)", Self.daily("09:00", "18:00")),
        (35.0065, 135.7713, "京都府京都市下京区木屋町通",
         #"{"tue":[["20:00","02:00"]],"wed":[["20:00","02:00"]],"thu":[["20:00","02:00"]],"fri":[["20:00","02:00"]],"sat":[["20:00","02:00"]],"sun":[["20:00","02:00"]]}"#),
    ]

    static let closedMondays = "{" + OpeningHours.days.dropFirst().map { "\"\($0)\":[[\"10:00\",\"22:00\"]]" }.joined(separator: ",") + "}"
    static let officeHours = "{" + OpeningHours.days.enumerated().map { i, day in
        i < 5 ? "\"\(day)\":[[\"07:00\",\"18:00\"]]" : "\"\(day)\":[[\"09:00\",\"17:00\"]]"
    }.joined(separator: ",") + "}"
    static let nightOnly = "{" + OpeningHours.days.dropLast().map { "\"\($0)\":[[\"18:00\",\"02:00\"]]" }.joined(separator: ",") + "}"

    /// The same hours every day.
    static func daily(_ opens: String, _ closes: String) -> String {
        "{" + OpeningHours.days.map { "\"\($0)\":[[\"\(opens)\",\"\(closes)\"]]" }.joined(separator: ",") + "}"
    }

    static let comments: [(detail: String, star: Int)] = [
        ("雰囲気がとても良かったです。また来ます。", 3),
        ("珈琲が美味しい！ケーキも最高でした。", 3),
        ("少し混んでいましたが、店員さんが親切でした。", 2),
        ("Great coffee, a bit pricey.", 2),
        ("Lovely place to work for an afternoon.", 3),
        ("まあまあでした。", 1),
        ("The pastries sold out by noon — come early!", 2),
    ]

    /// Seeds the demo set and returns the admin's credentials (password freshly generated).
    /// Every third comment has a photo, so a new install's photo wall shows some. `files` stores them
    /// as any upload is stored (cleaned, in the configured photo store).
    public func seedDemo(files: FileRepository) async throws -> AdminCredentials {
        let admin = AdminCredentials(username: "admin", password: PasswordHasher.randomPassword())
        let users = UserRepository(pool: pool)
        let adminID = try await users.create(.init(username: admin.username, passwordHash: try PasswordHasher.hash(admin.password), isAdmin: true)).id
        // The pictures are drawn and stored before the transaction that uses them.
        var photos: [Int64] = []
        for index in Self.cafes.indices {
            photos.append(try await files.create(owner: adminID, from: nil, upload: DemoPhotos.cafe(index), format: .png).id.rawValue)
        }
        var userIDs: [Int64] = []
        for name in ["hanako", "taro", "alice"] {
            await userIDs.append(try users.create(.init(username: name, passwordHash: try PasswordHasher.hash(PasswordHasher.randomPassword()))).id.rawValue)
        }
        var commentPhotos: [Int: Int64] = [:]
        var n = 0
        for (i, _) in Self.cafes.enumerated() {
            for j in 0..<(i % 4) {
                if n % 3 == 0 {
                    let author = UserID(rawValue: userIDs[(i + j) % userIDs.count])
                    commentPhotos[i * 4 + j] = try await files.create(owner: author, from: nil, upload: DemoPhotos.latte(n), format: .png).id.rawValue
                }
                n += 1
            }
        }
        try await pool.transaction { tx in
            try await tx.execute(script: Self.withoutLiveFeed)
            for (i, (cafe, place)) in zip(Self.cafes, Self.places).enumerated() {
                // Spread creation times over the past days so "newest first" has an order to show.
                let createdAt = Date().addingTimeInterval(-Double(Self.cafes.count - i) * 86_400)
                let cafeID: Int64 = try await tx.query("""
                    INSERT INTO cafes (name, catch_copy, introduction, publish_date, image_id, created_at, updated_at,
                                       location, address, time_zone, opening_hours)
                    VALUES (\(cafe.name), \(cafe.catchCopy), \(cafe.introduction), \(String(ISO8601DateFormatter().string(from: createdAt).prefix(10))), \(photos[i]), \(createdAt), \(createdAt),
                            \(CafeRepository.PlaceChanges.point(GeoPoint(latitude: place.latitude, longitude: place.longitude))), \(place.address),
                            'Asia/Tokyo', \(place.hours)::jsonb) RETURNING id
                    """).one().decode(0)
                for j in 0..<(i % 4) {
                    let comment = Self.comments[(i + j) % Self.comments.count]
                    try await tx.query("""
                        INSERT INTO comments (cafe_id, user_id, detail, star, image_id, created_at, updated_at)
                        VALUES (\(cafeID), \(userIDs[(i + j) % userIDs.count]), \(comment.detail), \(comment.star), \(commentPhotos[i * 4 + j]), \(createdAt.addingTimeInterval(Double(j + 1) * 3600)), \(createdAt.addingTimeInterval(Double(j + 1) * 3600)))
                        """)
                }
            }
            // Until the aggregation worker runs, give the demo correct numbers directly.
            try await tx.execute(script: """
                UPDATE cafe_stats s SET comment_sum = a.n, comment_amount = a.total, stars_1 = a.n1, stars_2 = a.n2, stars_3 = a.n3,
                       rating_score_0 = rating_score(a.total, a.n, p.mean_0, p.weight_0),
                       rating_score_1 = rating_score(a.total, a.n, p.mean_1, p.weight_1)
                FROM (SELECT cafe_id, count(*)::int AS n, sum(star)::int AS total, count(*) FILTER (WHERE star = 1)::int AS n1,
                             count(*) FILTER (WHERE star = 2)::int AS n2, count(*) FILTER (WHERE star = 3)::int AS n3
                      FROM comments GROUP BY cafe_id) a, rating_prior p
                WHERE s.cafe_id = a.cafe_id
                """)
        }
        return admin
    }

    /// Inserts `count` synthetic cafes and about `comments` comments in total, generated in SQL in
    /// batches (one transaction each), reporting progress after every batch. Introductions are built
    /// from a pool of Japanese and English phrases, each in roughly 13% of cafes, so common keywords
    /// match many cafes; one cafe in 25,000 also gets a rare phrase (鰻, 蕎麦, ガレット, ホットサンド).
    /// Each introduction names one of eight cities first, so two common keywords can also have no
    /// cafe in common (渋谷 京都). Phrases and city are picked by a hash of the cafe's number: a
    /// dataset is the same on every run, and its text is independent of its popularity. Comments
    /// are skewed towards some cafes, as real ones are. Each cafe lies within 10 km of its city's centre
    /// and has hours of one of five kinds (`Asia/Tokyo`). The batch's aggregates are written directly
    /// (those cafes are new: nobody else can have touched them) instead of through the outbox.
    ///
    /// A bulk load: the gram bitmaps (`GramBitmapBuilder`) are set aside while the batches run — the
    /// triggers would otherwise OR a bit per cafe and common gram, a million rows a batch — and built
    /// from the texts at the end, after the statistics that choose their grams. When it adds at least as
    /// many cafes as there are, the tables' non-unique indexes are set aside too (`SetAsideIndexes`) and
    /// built after the rows. `indexing(what, done, total)` reports both builds.
    public func seedSynthetic(cafes count: Int, comments: Int, batchSize: Int = 10_000, lanes: Int = 2,
                              progress: @Sendable (Int, Int) -> Void,
                              indexing: @Sendable (_ what: String, _ done: Int, _ total: Int) -> Void = { _, _, _ in }) async throws {
        try await pool.query("DELETE FROM search_bitmap_grams")
        let authorID: Int64 = try await pool.query("""
            INSERT INTO users (username, password_hash) VALUES ('seed-author', '!')
            ON CONFLICT ((lower(username))) DO UPDATE SET updated_at = now() RETURNING id
            """).one().decode(0)
        let indexes = SetAsideIndexes(pool: pool)
        let existing: Int = try await pool.query("SELECT count(*)::int FROM cafes").one().decode(0)
        if count >= existing { try await indexes.setAside(["cafes", "cafe_stats", "comments"]) }
        // Batches run on `lanes` connections at once: the work is CPU-bound in PostgreSQL (computing
        // the search columns), so each core gets a batch.
        let batches = stride(from: 0, to: count, by: batchSize).map { start in
            (start: start, n: min(batchSize, count - start),
             comments: Int((Double(comments) * Double(min(batchSize, count - start)) / Double(max(count, 1))).rounded()))
        }
        let finished = SharedCount()
        try Blocking.forEach(batches, lanes: lanes) { batch in
            try await insertBatch(start: batch.start, n: batch.n, comments: batch.comments, authorID: authorID)
            progress(finished.add(batch.n), count)
        }
        try await indexes.restore(lanes: lanes) { indexing("indexes", $0, $1) }
        try await pool.query("ANALYZE cafes")
        try await GramBitmapBuilder(pool: pool).buildAll { indexing("bitmap chunks", $0.chunks - $0.chunksLeft, $0.chunks) }
    }

    private func insertBatch(start done: Int, n: Int, comments batchComments: Int, authorID: Int64) async throws {
            try await pool.transaction { tx in
                try await tx.execute(script: Self.withoutLiveFeed)
                try await tx.query("""
                    CREATE TEMP TABLE seed_batch ON COMMIT DROP AS
                    WITH phrases AS (SELECT p, i FROM unnest(ARRAY[
                        '自家焙煎の珈琲', 'チーズケーキが人気', '抹茶ラテ', '窓際の席', 'モーニングセット', 'ジャズが流れる',
                        '手作りのスコーン', '静かな喫茶店', 'Wi-Fi完備', '駅から徒歩三分', 'テラス席あり', '深煎りのブレンド',
                        'single origin pour-over', 'fresh croissants', 'quiet reading corner', 'latte art', 'dog friendly',
                        'open late', 'vegan options', 'specialty coffee', '季節のパフェ', 'ナポリタン', 'クリームソーダ',
                        'カウンター八席', '焼き菓子', '紅茶の種類が豊富', 'ハンドドリップ', '昭和レトロ', 'ランチ営業', '朝七時から'
                    ]) WITH ORDINALITY AS t(p, i))
                    SELECT g,
                           'Cafe ' || (\(done)::int + g) AS name,
                           (ARRAY['こだわりの一杯を', 'くつろぎの時間', 'Good coffee, good people', '街角の小さなカフェ'])[1 + g % 4] AS catch_copy,
                           (ARRAY['渋谷', '京都', '札幌', '福岡', '横浜', '神戸', '仙台', '名古屋'])[1 + h % 8]
                           || '。' || (SELECT string_agg(p, '。' ORDER BY i) FROM phrases
                             WHERE i IN (1 + (h >> 3) % 30, 1 + (h >> 8) % 30, 1 + (h >> 13) % 30, 1 + (h >> 18) % 30))
                           || CASE WHEN (\(done)::int + g) % 25000 = 7 THEN '。名物は鰻と蕎麦のガレット、ホットサンド' ELSE '' END
                           || '。No.' || (\(done)::int + g) AS introduction,
                           now() - make_interval(secs => (\(done)::int + g)) AS created_at,
                           -- Around the centre of the city the introduction names, evenly within 10 km.
                           ST_SetSRID(ST_MakePoint(
                               (ARRAY[139.7005, 135.7681, 141.3545, 130.4017, 139.6380, 135.1955, 140.8694, 136.9066])[1 + h % 8]
                                   + 10000 * sqrt(((q & 1048575) + 0.5) / 1048576) * sin(2 * pi() * (q >> 20) / 2048.0)
                                     / (111320 * cos(radians((ARRAY[35.6595, 35.0116, 43.0618, 33.5902, 35.4437, 34.6901, 38.2682, 35.1815])[1 + h % 8]))),
                               (ARRAY[35.6595, 35.0116, 43.0618, 33.5902, 35.4437, 34.6901, 38.2682, 35.1815])[1 + h % 8]
                                   + 10000 * sqrt(((q & 1048575) + 0.5) / 1048576) * cos(2 * pi() * (q >> 20) / 2048.0) / 111320),
                               4326)::geography AS location,
                           (ARRAY['東京都渋谷区', '京都府京都市', '北海道札幌市', '福岡県福岡市', '神奈川県横浜市', '兵庫県神戸市', '宮城県仙台市', '愛知県名古屋市'])[1 + h % 8]
                               || ' ' || (1 + p % 9) || '-' || (1 + (p >> 4) % 30) AS address,
                           -- Hours of five kinds: most open all day, some close on Mondays, keep office hours, open
                           -- only at night (past midnight), or never close.
                           (CASE WHEN (p >> 24) % 100 < 60 THEN \(Self.daily("08:00", "20:00"))
                                 WHEN (p >> 24) % 100 < 75 THEN \(Self.closedMondays)
                                 WHEN (p >> 24) % 100 < 85 THEN \(Self.officeHours)
                                 WHEN (p >> 24) % 100 < 95 THEN \(Self.nightOnly)
                                 ELSE \(Self.daily("00:00", "24:00")) END)::jsonb AS opening_hours
                    FROM generate_series(1, \(n)::int) g,
                         LATERAL (SELECT hashint8(\(done)::int + g)::bigint & 2147483647 AS h,   -- 31 bits: city, then 4 phrases
                                         hashint8(-(\(done)::int + g))::bigint & 2147483647 AS p,   -- address and hours
                                         hashint8((\(done)::int + g)::bigint << 32)::bigint & 2147483647 AS q) hashed   -- where: 20 bits of radius, 11 of angle
                    """)
                try await tx.execute(script: """
                    CREATE TEMP TABLE seed_cafes (k bigint PRIMARY KEY, id bigint NOT NULL) ON COMMIT DROP;
                    WITH inserted AS (
                        INSERT INTO cafes (name, catch_copy, introduction, created_at, updated_at, location, address, time_zone, opening_hours)
                        SELECT name, catch_copy, introduction, created_at, created_at, location, address, 'Asia/Tokyo', opening_hours
                        FROM seed_batch ORDER BY g
                        RETURNING id
                    )
                    INSERT INTO seed_cafes SELECT row_number() OVER (ORDER BY id), id FROM inserted;
                    ANALYZE seed_cafes;
                    """)
                // Every outbox row the comments below enqueue gets an id above this one: the batch
                // deletes its own through the primary key's range instead of scanning the whole
                // outbox, which holds every earlier batch's dead rows until vacuum catches up (a
                // scan of them took 30 s a batch by 480,000 cafes).
                let outboxFloor: Int64 = try await tx.query("SELECT nextval(pg_get_serial_sequence('aggregation_outbox', 'id'))").one().decode(0)
                // The batch's aggregates come from the rows it inserts (RETURNING), never from the
                // comments table, which grows with every batch: each batch costs the same.
                try await tx.query("""
                    WITH inserted AS (
                        INSERT INTO comments (cafe_id, user_id, detail, star, created_at, updated_at)
                        SELECT sc.id, \(authorID), '美味しかったです #' || r.c, 1 + (r.c * 7 + sc.id) % 3, now() - make_interval(secs => r.c), now()
                        FROM (SELECT c, 1 + floor(power(random(), 3) * \(n)::int)::int AS k   -- one draw per comment
                              FROM generate_series(1, \(batchComments)::int) c) r
                        JOIN seed_cafes sc ON sc.k = r.k
                        RETURNING cafe_id, star
                    ), counted AS (
                        SELECT cafe_id, count(*)::int AS n, sum(star)::int AS total, count(*) FILTER (WHERE star = 1)::int AS n1,
                               count(*) FILTER (WHERE star = 2)::int AS n2, count(*) FILTER (WHERE star = 3)::int AS n3
                        FROM inserted GROUP BY cafe_id
                    )
                    UPDATE cafe_stats s SET comment_sum = s.comment_sum + counted.n, comment_amount = s.comment_amount + counted.total,
                        stars_1 = s.stars_1 + counted.n1, stars_2 = s.stars_2 + counted.n2, stars_3 = s.stars_3 + counted.n3,
                        rating_score_0 = rating_score(s.comment_amount + counted.total, s.comment_sum + counted.n, p.mean_0, p.weight_0),
                        rating_score_1 = rating_score(s.comment_amount + counted.total, s.comment_sum + counted.n, p.mean_1, p.weight_1)
                    FROM counted, rating_prior p WHERE s.cafe_id = counted.cafe_id
                    """)
                try await tx.queryPlannedPerCall("DELETE FROM aggregation_outbox o USING seed_cafes sc WHERE o.id > \(outboxFloor) AND o.cafe_id = sc.id")
            }
    }
}
