#!/usr/bin/env python3
"""Writes Parse exports shaped like the original apps' data, for `cafe import-parse`.

  tools/parse-export-fixture.py fixtures DIR     the test fixtures: DIR/rest (Parse Dashboard / REST JSON)
                                                 and DIR/mongo (mongoexport of a Parse Server database),
                                                 the same app in both, with the malformed rows the import
                                                 must report (the files are committed; this says how they were made)
  tools/parse-export-fixture.py large DIR N      a mongoexport with N comments over N/20 cafes and N/10
                                                 users, for timing the import
"""
import crypt   # libxcrypt's bcrypt, as Parse Server's hashes are (Python 3.11, Debian 12)
import json
import os
import random
import struct
import sys
import zlib


def png(width, height, tint):
    rows = b"".join(b"\x00" + b"".join(struct.pack("BBB", (tint[0] + x * 90 // width) % 256, (tint[1] + y * 90 // height) % 256, tint[2])
                             for x in range(width)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


GIF = bytes.fromhex("47494638396101000100800000ffffff00000021f90401000000002c00000000010001000002024401003b")


def bcrypt(password, prefix="$2b$"):
    return prefix + crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024))[4:]


def iso(day, hour=9):
    return f"2019-{4 + day // 28:02d}-{1 + day % 28:02d}T{hour:02d}:00:00.000Z"


# The app: accounts, cafes and comments as the original apps wrote them, malformed rows included.
USERS = [  # objectId, username, email, password (None: none in the export), day, extra fields
    ("uSakura01", "sakura", "sakura@example.jp", "sakura-no-himitsu", 0, {}),
    ("uKenta002", "kenta", "kenta@example.jp", "kenta password 2", 1, {}),
    ("uKentaDu3", "Kenta", "kenta2@example.jp", "another one", 5, {}),          # same as "kenta" ignoring case
    ("uJiro0004", "jiro", "not-an-email", None, 2, {}),                         # no password, bad email
    ("uOdd00005", "oddone", "odd@example.jp", "odd password", 3, {"favoriteColor": "blue"}),   # unknown field
]
CAFES = [  # objectId, name, catchCopy, intro, image, publishDate, exported sum, amount, extra
    ("cafeKissa01", "喫茶 ひだまり", "昭和の純喫茶", "ネルドリップの珈琲と固めのプリン。窓際の席が人気です。", "tfss-hidamari.png", "2019-05-01", 5, 12, {}),
    ("cafeMatcha2", "抹茶処 あおい", "宇治抹茶の専門店", "石臼挽きの抹茶ラテと季節の和菓子。", "tfss-aoi.gif", "2019-05-10", 2, 5, {}),
    ("cafeBroken3", "Broken Beans", "", "A photo that was never downloaded.", "tfss-missing.jpg", None, 0, 0, {}),
    ("cafeOdd0004", "Odd Cafe", "", "Has a field the apps never had.", None, None, None, None, {"rating": 4}),
]
# Where the cafes are: Parse GeoPoints (Kyoto's Sanjō, Uji).
LOCATIONS = {"cafeKissa01": (35.0086, 135.7681), "cafeMatcha2": (34.8892, 135.8077)}
COMMENTS = [  # objectId, cafe, author (how), star, detail, image, day
    ("cm01", "cafeKissa01", ("pointer", "uSakura01"), 3, "プリンが絶品でした", "tfss-latte.png", 10),
    ("cm02", "cafeKissa01", ("acl", "uKenta002"), 2, "落ち着く空間", None, 11),
    ("cm03", "cafeMatcha2", ("name", "sakura"), 3, "抹茶ラテが濃厚", None, 12),
    ("cm04", "cafeMatcha2", ("pointer", "uKenta002"), 5, "five stars!", None, 13),              # star outside 1–3
    ("cm05", "cafeGone999", ("pointer", "uSakura01"), 2, "the cafe is gone", None, 14),       # missing cafe
    ("cm06", "cafeBroken3", ("pointer", "uKenta002"), 1, "on a skipped cafe", None, 15),      # its cafe was skipped
    ("cm07", "cafeKissa01", ("pointer", "uKenta002"), 2, "photo lost", "tfss-nothere.png", 16),  # missing photo
    ("cm08", "cafeMatcha2", ("pointer", "uKenta002"), 2, "和菓子もおいしい", None, 17),
]
FILES = {"tfss-hidamari.png": png(160, 100, (150, 90, 40)), "tfss-aoi.gif": GIF, "tfss-latte.png": png(120, 120, (200, 160, 90))}


def rest_export(root):
    users = []
    for oid, name, email, _password, day, extra in USERS:
        users.append({"objectId": oid, "username": name, "email": email, "emailVerified": False, "createdAt": iso(day), "updatedAt": iso(day, 10),
                      "ACL": {"*": {"read": True}, oid: {"read": True, "write": True}}, **extra})
    cafes = []
    for oid, name, copy, intro, image, published, total, amount, extra in CAFES:
        cafe = {"objectId": oid, "name": name, "catchCopy": copy, "IntroduceDetail": intro, "createdAt": iso(3), "updatedAt": iso(4),
                "ACL": {"*": {"read": True}}, **extra}
        if image:
            cafe["CafeImage"] = {"__type": "File", "name": image, "url": f"https://parsefiles.example.com/app/{image}"}
        if published:
            cafe["publishDate"] = published
        if total is not None:
            cafe["commentSum"], cafe["commentAmount"] = total, amount
        if oid in LOCATIONS:
            cafe["location"] = {"__type": "GeoPoint", "latitude": LOCATIONS[oid][0], "longitude": LOCATIONS[oid][1]}
        cafes.append(cafe)
    comments = []
    usernames = {oid: name for oid, name, *_ in USERS}
    for oid, cafe, (how, who), star, detail, image, day in COMMENTS:
        c = {"objectId": oid + "rest", "CafeMasterObjectId": cafe, "CafeCommentStar": star, "CafeCommentDetail": detail,
             "createdAt": iso(day), "updatedAt": iso(day, 11)}
        if how == "pointer":
            c["user"] = {"__type": "Pointer", "className": "_User", "objectId": who}
            c["commentUsername"] = usernames[who]
        elif how == "acl":
            c["ACL"] = {"*": {"read": True}, who: {"read": True, "write": True}}
        else:
            c["commentUsername"] = who
        if image:
            c["CafeCommentImage"] = {"__type": "File", "name": image, "url": f"https://parsefiles.example.com/app/{image}"}
        comments.append(c)
    write(root, {"_User.json": {"results": users}, "CafeMaster.json": {"results": cafes}, "CafeTransactionComment.json": {"results": comments}})


def mongo_export(root):
    def date(text):
        return {"$date": text}
    users = []
    for i, (oid, name, email, password, day, extra) in enumerate(USERS):
        doc = {"_id": oid, "username": name, "email": email, "_created_at": date(iso(day)), "_updated_at": date(iso(day, 10)),
               "_rperm": ["*", oid], "_wperm": [oid], "_acl": {oid: {"r": True, "w": True}, "*": {"r": True}}, **extra}
        if password:
            doc["_hashed_password"] = bcrypt(password, "$2a$" if i == 1 else "$2b$")   # bcryptjs wrote $2a$
        users.append(doc)
    cafes = []
    for oid, name, copy, intro, image, published, total, amount, extra in CAFES:
        doc = {"_id": oid, "name": name, "catchCopy": copy, "IntroduceDetail": intro, "_created_at": date(iso(3)),
               "_updated_at": date(iso(4)), "_rperm": ["*"], **extra}
        if image:
            doc["CafeImage"] = image
        if published:
            doc["publishDate"] = published
        if total is not None:
            doc["commentSum"], doc["commentAmount"] = {"$numberInt": str(total)}, amount
        if oid in LOCATIONS:   # Parse Server keeps a GeoPoint as [longitude, latitude]
            doc["location"] = [{"$numberDouble": str(LOCATIONS[oid][1])}, LOCATIONS[oid][0]]
        cafes.append(doc)
    comments = []
    usernames = {oid: name for oid, name, *_ in USERS}
    for oid, cafe, (how, who), star, detail, image, day in COMMENTS:
        doc = {"_id": oid + "mongo", "CafeMasterObjectId": cafe, "CafeCommentStar": star, "CafeCommentDetail": detail,
               "_created_at": date(iso(day)), "_updated_at": date(iso(day, 11)), "_rperm": ["*"]}
        if how == "pointer":
            doc["_p_user"] = f"_User${who}"
            doc["commentUsername"] = usernames[who]
        elif how == "acl":
            doc["_wperm"] = [who]
        else:
            doc["commentUsername"] = who
        if image:
            doc["CafeCommentImage"] = image
        comments.append(doc)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "_User.json"), "w") as f:            # mongoexport: one document per line
        f.writelines(json.dumps(u, ensure_ascii=False) + "\n" for u in users)
    with open(os.path.join(root, "CafeMaster.json"), "w") as f:       # mongoexport --jsonArray
        json.dump(cafes, f, ensure_ascii=False)
    with open(os.path.join(root, "CafeTransactionComment.json"), "w") as f:
        f.writelines(json.dumps(c, ensure_ascii=False) + "\n" for c in comments)
    write_files(root)


def write(root, classes):
    os.makedirs(root, exist_ok=True)
    for name, content in classes.items():
        with open(os.path.join(root, name), "w") as f:
            json.dump(content, f, ensure_ascii=False, indent=1)
    write_files(root)


def write_files(root):
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    for name, data in FILES.items():
        with open(os.path.join(root, "files", name), "wb") as f:
            f.write(data)


def large(root, comments):
    rng = random.Random(7)
    cafes, users = max(1, comments // 20), max(1, comments // 10)
    os.makedirs(os.path.join(root, "files"), exist_ok=True)
    with open(os.path.join(root, "files", "tfss-front.png"), "wb") as f:
        f.write(png(64, 40, (120, 80, 40)))
    shared = bcrypt("imported password")   # one hash for all: bcrypt at cost 10 takes ~70 ms each to make
    with open(os.path.join(root, "_User.json"), "w") as f:
        for i in range(users):
            f.write(json.dumps({"_id": f"u{i:09d}x", "username": f"parse_user_{i}", "_hashed_password": shared,
                                "_created_at": {"$date": iso(i % 300)}, "_updated_at": {"$date": iso(i % 300)}}) + "\n")
    with open(os.path.join(root, "CafeMaster.json"), "w") as f:
        for i in range(cafes):
            doc = {"_id": f"c{i:09d}x", "name": f"Imported cafe {i}", "catchCopy": "", "IntroduceDetail": f"cafe number {i} 珈琲",
                   "_created_at": {"$date": iso(i % 300)}, "_updated_at": {"$date": iso(i % 300)}, "commentSum": rng.randint(0, 40)}
            if i % 10 == 0:
                doc["CafeImage"] = "tfss-front.png"
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(os.path.join(root, "CafeTransactionComment.json"), "w") as f:
        for i in range(comments):
            user = rng.randrange(users)
            f.write(json.dumps({"_id": f"m{i:09d}x", "CafeMasterObjectId": f"c{rng.randrange(cafes):09d}x", "_p_user": f"_User$u{user:09d}x",
                                "commentUsername": f"parse_user_{user}", "CafeCommentStar": rng.randint(1, 3),
                                "CafeCommentDetail": f"comment {i}", "_created_at": {"$date": iso(i % 300)},
                                "_updated_at": {"$date": iso(i % 300)}}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "fixtures":
        rest_export(os.path.join(sys.argv[2], "rest"))
        mongo_export(os.path.join(sys.argv[2], "mongo"))
    elif len(sys.argv) == 4 and sys.argv[1] == "large":
        large(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
