# The source of the OpenAPI 3.1 document served at GET /openapi.json.
# Edit this file, then run `python3 tools/openapi.py` to regenerate Sources/CafeApp/Controllers/OpenAPIDocument.swift.
# (A test fails when a route is missing from the document or the document names a route that does not exist.)
import json
import os
def ref(n): return {"$ref": f"#/components/schemas/{n}"}
def problem(desc): return {"description": desc, "content": {"application/problem+json": {"schema": ref("Problem")}}}
def js(schema, desc="OK"): return {"description": desc, "content": {"application/json": {"schema": schema}}}
P = {"400": problem("Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`."),
     "401": problem("`unauthorized`: no, invalid, revoked or expired session token."),
     "403": problem("`forbidden`: logged in but not allowed."),
     "404": problem("`not_found`."),
     "413": problem("`payload_too_large`."),
     "415": problem("`unsupported_media_type`."),
     "503": problem("`database_unavailable`: retry after `Retry-After` seconds.")}
def errs(*codes): return {c: P[c] for c in codes}
idp = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}, "description": "Opaque id."}
limit = lambda d: {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": d}}
cursor = {"name": "cursor", "in": "query", "schema": {"type": "string"}, "description": "`nextCursor` of the previous page."}
sec = [{"bearer": []}]
ts = {"type": "string", "format": "date-time", "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"}
nstr = {"type": ["string", "null"]}
# /parse: Parse's wire format.
parse_headers = [{"name": "X-Parse-Application-Id", "in": "header", "required": True, "schema": {"type": "string"}, "description": "PARSE_APP_ID (default `cafe`)."},
                 {"name": "X-Parse-Session-Token", "in": "header", "schema": {"type": "string"}}]
def pjs(desc="OK"): return {"description": desc, "content": {"application/json": {"schema": {"type": "object"}}}}
PERR = {"400": "Parse error {code, error}: 102 bad query, 107 invalid JSON, 111 wrong type, 119 not permitted, 142 validation failed, 202 username taken, 209 invalid session token.",
        "403": "{\"error\":\"unauthorized\"}: missing or wrong X-Parse-Application-Id.",
        "404": "{\"code\":101}: object not found, or invalid username/password."}
def perrs(*codes): return {c: {"description": PERR[c], "content": {"application/json": {"schema": ref("ParseError") if c != "403" else {"type": "object"}}}} for c in codes}
def parse_body(props): return {"required": True, "content": {"application/json": {"schema": {"type": "object", "properties": props}}}}
class_param = {"name": "className", "in": "path", "required": True, "schema": {"type": "string", "enum": ["CafeMaster", "CafeTransactionComment"]}}
doc = {
 "openapi": "3.1.0",
 "info": {"title": "CafeReview API", "version": "1.0.0",
          "description": "Browse and search cafes, read comments, and after logging in post comments with a 1–3 star rating and a photo. "
          "A Cafe is *CafeMaster* and a Comment is *CafeTransactionComment* in the original app. JSON bodies use camelCase; unknown request fields are rejected (400). "
          "Every error is application/problem+json with a stable `code`. A 2xx answer means the change is committed. "
          "`commentSum`, `commentAmount` and `averageStar` are maintained by the aggregation worker and lag writes by about a second."},
 "components": {
  "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "The `sessionToken` from sign-up or log-in."}},
  "schemas": {
   "Problem": {"type": "object", "required": ["type", "title", "status", "code"], "properties": {
      "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"}, "detail": nstr,
      "code": {"type": "string", "description": "Stable machine-readable error code."},
      "errors": {"type": "array", "items": {"type": "object", "required": ["field", "message"], "properties": {"field": {"type": "string"}, "message": {"type": "string"}}}}}},
   "User": {"type": "object", "required": ["id", "username", "email", "emailVerified", "age", "createdAt", "updatedAt"], "properties": {
      "id": {"type": "string"}, "username": {"type": "string"}, "email": {**nstr, "description": "Shown to its owner only."},
      "emailVerified": {"type": "boolean"}, "age": {"type": ["integer", "null"]}, "createdAt": ts, "updatedAt": ts}},
   "Session": {"type": "object", "required": ["user", "sessionToken"], "properties": {"user": ref("User"), "sessionToken": {"type": "string"}}},
   "Cafe": {"type": "object", "required": ["id", "name", "catchCopy", "introduction", "imageUrl", "publishDate", "commentSum", "commentAmount", "averageStar", "createdAt", "updatedAt"], "properties": {
      "id": {"type": "string"}, "name": {"type": "string"}, "catchCopy": {"type": "string"}, "introduction": {"type": "string"},
      "imageUrl": nstr, "publishDate": nstr,
      "commentSum": {"type": "integer", "description": "Number of comments."},
      "commentAmount": {"type": "integer", "description": "Sum of the comments' stars."},
      "averageStar": {"type": ["number", "null"], "description": "commentAmount / commentSum rounded to 2 decimals; null without comments."},
      "createdAt": ts, "updatedAt": ts}},
   "Comment": {"type": "object", "required": ["id", "cafeId", "userId", "username", "detail", "star", "imageUrl", "createdAt", "updatedAt"], "properties": {
      "id": {"type": "string"}, "cafeId": {"type": "string"}, "userId": {"type": "string"}, "username": {"type": "string"},
      "detail": {"type": "string"}, "star": {"type": "integer", "minimum": 1, "maximum": 3}, "imageUrl": nstr, "createdAt": ts, "updatedAt": ts}},
   "RecentComment": {"allOf": [ref("Comment"), {"type": "object", "required": ["cafeName"], "properties": {"cafeName": {"type": "string"}}}]},
   "RecentCommentPage": {"type": "object", "required": ["items", "nextCursor"], "properties": {"items": {"type": "array", "items": ref("RecentComment")}, "nextCursor": nstr}},
   "CafePage": {"type": "object", "required": ["items", "nextCursor"], "properties": {"items": {"type": "array", "items": ref("Cafe")}, "nextCursor": nstr}},
   "CommentPage": {"type": "object", "required": ["items", "nextCursor"], "properties": {"items": {"type": "array", "items": ref("Comment")}, "nextCursor": nstr}},
   "File": {"type": "object", "required": ["id", "url", "contentType", "size"], "properties": {"id": {"type": "string"}, "url": {"type": "string"}, "contentType": {"type": "string"}, "size": {"type": "integer"}}},
   "JobRun": {"type": "object", "required": ["id", "kind", "worker", "startedAt", "finishedAt", "outboxRows", "cafesTouched", "driftFound", "error"], "properties": {
      "id": {"type": "string"}, "kind": {"type": "string", "enum": ["pass", "reconcile"]}, "worker": {"type": "string"},
      "startedAt": ts, "finishedAt": {"type": ["string", "null"], "format": "date-time"}, "outboxRows": {"type": "integer"},
      "cafesTouched": {"type": "integer"}, "driftFound": {"type": ["integer", "null"]}, "error": nstr}},
   "Jobs": {"type": "object", "required": ["outboxRows", "lagSeconds", "runs"], "properties": {
      "outboxRows": {"type": "integer", "description": "Comment changes not yet aggregated."},
      "lagSeconds": {"type": "number", "description": "Age of the oldest unconsumed outbox row (0 when empty)."},
      "runs": {"type": "array", "items": ref("JobRun")}}},
   "ParseError": {"type": "object", "required": ["code", "error"], "properties": {"code": {"type": "integer"}, "error": {"type": "string"}}},
   "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
  }},
 "paths": {
  "/healthz": {"get": {"summary": "The process is up.", "operationId": "health", "responses": {"200": js(ref("Health"))}}},
  "/readyz": {"get": {"summary": "The database answers and no migration is pending.", "operationId": "ready",
      "responses": {"200": js(ref("Health")), "503": problem("`database_unavailable` or `migrations_pending`.")}}},
  "/openapi.json": {"get": {"summary": "This document.", "operationId": "openapi", "responses": {"200": js({"type": "object"})}}},
  "/": {"get": {"summary": "The browser client (HTML; only its own scripts may run).", "operationId": "webClient",
      "responses": {"200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}},
                    "304": {"description": "Not modified."}, **errs("404")}}},
  "/assets/{name}": {"get": {"summary": "A file of the browser client (JavaScript module, style sheet, icon).", "operationId": "webAsset",
      "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "The file.", "content": {t: {"schema": {"type": "string"}} for t in ["text/javascript", "text/css", "image/svg+xml"]}},
                    "304": {"description": "Not modified."}, **errs("404")}}},
  "/metrics": {"get": {"summary": "Prometheus metrics: requests and latency by route, pool, outbox lag, worker runs, process memory and descriptors. "
      "With METRICS_TOKEN set, needs it as a bearer token.", "operationId": "metrics",
      "responses": {"200": {"description": "Prometheus text format 0.0.4.", "content": {"text/plain": {"schema": {"type": "string"}}}}, **errs("401")}}},
  "/v1/users": {"post": {"summary": "Sign up.", "operationId": "signUp",
      "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["username", "password"], "properties": {
          "username": {"type": "string", "minLength": 3, "maxLength": 40, "description": "Letters of any script, digits, _ . -; unique regardless of case."},
          "password": {"type": "string", "minLength": 8, "maxLength": 200}, "email": {"type": "string", "format": "email"},
          "age": {"type": "integer", "minimum": 0, "maximum": 150}}}}}},
      "responses": {"201": js(ref("Session"), "Created; logged in."), **errs("400", "415", "503"), "409": problem("`username_taken`.")}}},
  "/v1/users/me": {"get": {"summary": "The logged-in user.", "operationId": "me", "security": sec, "responses": {"200": js(ref("User")), **errs("401", "503")}}},
  "/v1/sessions": {"post": {"summary": "Log in.", "operationId": "logIn",
      "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["username", "password"], "properties": {"username": {"type": "string"}, "password": {"type": "string"}}}}}},
      "responses": {"201": js(ref("Session"), "Logged in."), **errs("400", "415", "503"),
         "401": problem("`invalid_credentials` (unknown user and wrong password look the same)."),
         "429": problem("`too_many_attempts`: 5 failures for this username in 15 minutes; see `Retry-After`.")}}},
  "/v1/sessions/current": {"delete": {"summary": "Log out: the token is revoked everywhere.", "operationId": "logOut", "security": sec,
      "responses": {"204": {"description": "Logged out."}, **errs("401", "503")}}},
  "/v1/cafes": {
     "get": {"summary": "Cafes, newest first, optionally searched.", "operationId": "listCafes",
        "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}, "description":
            "Keywords separated by white space (including the ideographic space U+3000), at most 8, each at most 64 characters. "
            "Every keyword must occur as a substring of the name, catch copy or introduction, compared after Unicode NFKC "
            "normalisation and lower-casing of both sides (ＣＯＦＦＥＥ = coffee, ｺｰﾋｰ = コーヒー). `%`, `_` and `\\` are ordinary characters. "
            "Keywords of any length, in any script (Japanese, Chinese, Thai, English), are supported; an empty q is no filter."},
           {"name": "sort", "in": "query", "schema": {"type": "string", "enum": ["newest", "rating", "popular"], "default": "newest"}, "description":
            "newest: createdAt desc. rating: averageStar desc, then commentSum desc, then newest; cafes without comments last. popular: commentSum desc, then newest."},
           {"name": "minStar", "in": "query", "schema": {"type": "number", "minimum": 1, "maximum": 3}, "description": "Only cafes whose averageStar is at least this."},
           limit(20), {**cursor, "description": "`nextCursor` of the previous page; it encodes the sort, so it is only valid with the same sort (else 400 invalid_cursor)."}],
        "responses": {"200": js(ref("CafePage")), **errs("400", "503")}},
     "post": {"summary": "Add a cafe (admin).", "operationId": "createCafe", "security": sec,
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["name", "catchCopy", "introduction"], "properties": {
           "name": {"type": "string", "minLength": 1, "maxLength": 100}, "catchCopy": {"type": "string", "maxLength": 200},
           "introduction": {"type": "string", "maxLength": 5000}, "imageId": nstr, "publishDate": {**nstr, "maxLength": 40}}}}}},
        "responses": {"201": js(ref("Cafe"), "Created."), **errs("400", "401", "403", "415", "503")}}},
  "/v1/cafes/{id}": {"parameters": [idp],
     "get": {"summary": "One cafe.", "operationId": "getCafe", "responses": {"200": js(ref("Cafe")), **errs("404", "503")}},
     "patch": {"summary": "Change a cafe (admin); absent fields stay, null clears imageId/publishDate.", "operationId": "updateCafe", "security": sec,
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "properties": {
           "name": {"type": "string", "minLength": 1, "maxLength": 100}, "catchCopy": {"type": "string", "maxLength": 200},
           "introduction": {"type": "string", "maxLength": 5000}, "imageId": nstr, "publishDate": nstr}}}}},
        "responses": {"200": js(ref("Cafe")), **errs("400", "401", "403", "404", "415", "503")}},
     "delete": {"summary": "Delete a cafe and its comments (admin).", "operationId": "deleteCafe", "security": sec,
        "responses": {"204": {"description": "Deleted."}, **errs("401", "403", "404", "503")}}},
  "/v1/cafes/{id}/comments": {"parameters": [idp],
     "get": {"summary": "A cafe's comments, newest first.", "operationId": "listComments", "parameters": [limit(100), cursor],
        "responses": {"200": js(ref("CommentPage")), **errs("400", "404", "503")}},
     "post": {"summary": "Comment on a cafe (logged in). The author is the session's user.", "operationId": "createComment", "security": sec,
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["detail", "star"], "properties": {
           "detail": {"type": "string", "minLength": 1, "maxLength": 2000}, "star": {"type": "integer", "minimum": 1, "maximum": 3},
           "imageId": {**nstr, "description": "A file you uploaded."}}}}}},
        "responses": {"201": js(ref("Comment"), "Created."), **errs("400", "401", "404", "415", "503")}}},
  "/v1/comments": {"get": {"summary": "Everyone's comments, newest first, with their cafe's name; `withImage=true` for those with a photo (the photo wall).",
      "operationId": "recentComments",
      "parameters": [{"name": "withImage", "in": "query", "schema": {"type": "string", "enum": ["true", "false"], "default": "false"}}, limit(20), cursor],
      "responses": {"200": js(ref("RecentCommentPage")), **errs("400", "503")}}},
  "/v1/comments/{id}": {"parameters": [idp],
     "patch": {"summary": "Edit your own comment (author only; admins may not edit others' words).", "operationId": "updateComment", "security": sec,
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "properties": {
           "detail": {"type": "string", "minLength": 1, "maxLength": 2000}, "star": {"type": "integer", "minimum": 1, "maximum": 3}, "imageId": nstr}}}}},
        "responses": {"200": js(ref("Comment")), **errs("400", "401", "403", "404", "415", "503")}},
     "delete": {"summary": "Delete a comment (author or admin).", "operationId": "deleteComment", "security": sec,
        "responses": {"204": {"description": "Deleted."}, **errs("401", "403", "404", "503")}}},
  "/v1/admin/jobs": {"get": {"summary": "Aggregation worker status: outbox lag and recent passes and reconciles (admin).", "operationId": "adminJobs", "security": sec,
      "responses": {"200": js(ref("Jobs")), **errs("401", "403", "503")}}},
  "/v1/admin/aggregates/reconcile": {"post": {"summary": "Ask the worker for a full reconcile now (admin).", "operationId": "requestReconcile", "security": sec,
      "responses": {"202": js(ref("Health"), "Requested; a worker runs it within a second."), **errs("401", "403", "503")}}},
  "/v1/files": {"post": {"summary": "Upload a photo (logged in): raw bytes, at most 5 MiB; the bytes must be the declared format.", "operationId": "uploadFile", "security": sec,
      "requestBody": {"required": True, "content": {t: {"schema": {"type": "string", "contentEncoding": "binary"}} for t in ["image/png", "image/jpeg", "image/webp", "image/gif"]}},
      "responses": {"201": js(ref("File"), "Stored."), **errs("400", "401", "413", "415", "503")}}},
  "/v1/files/{id}": {"parameters": [idp], "get": {"summary": "A photo's bytes (immutable; ETag / If-None-Match).", "operationId": "getFile",
      "responses": {"200": {"description": "The bytes with their Content-Type.", "content": {"image/*": {"schema": {"type": "string", "contentEncoding": "binary"}}}},
                    "304": {"description": "Not modified."}, **errs("404", "503")}}},

  # The Parse REST facade: the original apps' SDKs, unchanged but for the server URL. Errors here are
  # Parse's {"code","error"} (see README "Using the original Parse apps"), not problem+json.
  "/parse/users": {"post": {"tags": ["parse"], "summary": "Parse sign-up → 201 {objectId, createdAt, sessionToken}.", "operationId": "parseSignUp",
      "parameters": parse_headers, "requestBody": parse_body({"username": {"type": "string"}, "password": {"type": "string"}, "email": {"type": "string"}, "age": {"type": "integer"}}),
      "responses": {"201": pjs("Created; logged in."), **perrs("400", "403")}}},
  "/parse/users/me": {"get": {"tags": ["parse"], "summary": "The session's user (`User.current` refresh).", "operationId": "parseMe",
      "parameters": parse_headers, "responses": {"200": pjs(), **perrs("400", "403")}}},
  "/parse/login": {
     "get": {"tags": ["parse"], "summary": "Parse log-in with query parameters (iOS SDK).", "operationId": "parseLogInGet",
        "parameters": parse_headers + [{"name": n, "in": "query", "schema": {"type": "string"}} for n in ["username", "password"]],
        "responses": {"200": pjs("The user with its sessionToken."), **perrs("400", "403", "404")}},
     "post": {"tags": ["parse"], "summary": "Parse log-in with a JSON body (ParseSwift, JS).", "operationId": "parseLogIn",
        "parameters": parse_headers, "requestBody": parse_body({"username": {"type": "string"}, "password": {"type": "string"}}),
        "responses": {"200": pjs("The user with its sessionToken."), **perrs("400", "403", "404")}}},
  "/parse/logout": {"post": {"tags": ["parse"], "summary": "Revoke the session token → {}.", "operationId": "parseLogOut",
      "parameters": parse_headers, "responses": {"200": pjs(), **perrs("400", "403")}}},
  "/parse/classes/{className}": {"parameters": [class_param],
     "get": {"tags": ["parse"], "summary": "Parse query → {results, count?}.", "operationId": "parseQuery",
        "parameters": parse_headers + [{"name": n, "in": "query", "schema": {"type": "string"}, "description": d} for n, d in [
            ("where", "JSON: equality, $eq $ne $gt $gte $lt $lte $in $nin $exists, $regex as \\Q…\\E (containsString), ^\\Q…\\E (hasPrefix), \\Q…\\E$ (hasSuffix)."),
            ("order", "Comma-separated or a JSON array; - for descending."), ("limit", "Default 100, at most 1000."), ("skip", "Default 0."),
            ("count", "1 or true adds the total count."), ("keys", "Comma-separated or a JSON array."), ("excludeKeys", "Comma-separated or a JSON array.")]],
        "responses": {"200": pjs(), **perrs("400", "403")}},
     "post": {"tags": ["parse"], "summary": "Create an object → 201 {objectId, createdAt}; with \"_method\":\"GET\" in the body, a query.", "operationId": "parseCreate",
        "parameters": parse_headers, "requestBody": parse_body({}),
        "responses": {"200": pjs("Query results."), "201": pjs("Created."), **perrs("400", "403")}}},
  "/parse/classes/{className}/{objectId}": {"parameters": [class_param, {"name": "objectId", "in": "path", "required": True, "schema": {"type": "string"}}],
     "get": {"tags": ["parse"], "summary": "One object.", "operationId": "parseGet", "parameters": parse_headers, "responses": {"200": pjs(), **perrs("400", "403", "404")}},
     "put": {"tags": ["parse"], "summary": "Update (whole or partial object) → {updatedAt}.", "operationId": "parseUpdate",
        "parameters": parse_headers, "requestBody": parse_body({}), "responses": {"200": pjs(), **perrs("400", "403", "404")}},
     "delete": {"tags": ["parse"], "summary": "Delete → {}.", "operationId": "parseDelete", "parameters": parse_headers, "responses": {"200": pjs(), **perrs("400", "403", "404")}},
     "post": {"tags": ["parse"], "summary": "The JS SDK's form of GET, PUT and DELETE: the method in the body's _method.", "operationId": "parseObjectMethod",
        "parameters": parse_headers, "requestBody": parse_body({"_method": {"type": "string", "enum": ["GET", "PUT", "DELETE"]}}),
        "responses": {"200": pjs(), **perrs("400", "403", "404")}}},
  "/parse/files/{name}": {"post": {"tags": ["parse"], "summary": "Upload a photo as a Parse file (logged in) → 201 {name, url}.", "operationId": "parseUploadFile",
      "parameters": parse_headers + [{"name": "name", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[_a-zA-Z0-9][a-zA-Z0-9@. ~_-]*$"}}],
      "requestBody": {"required": True, "content": {t: {"schema": {"type": "string", "contentEncoding": "binary"}} for t in ["image/png", "image/jpeg", "image/webp", "image/gif"]}},
      "responses": {"201": pjs("Stored."), **perrs("400", "403")}}},
  "/parse/files/{appId}/{name}": {"get": {"tags": ["parse"], "summary": "A Parse file's bytes (the url of a File object).", "operationId": "parseGetFile",
      "parameters": [{"name": "appId", "in": "path", "required": True, "schema": {"type": "string"}}, {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
      "responses": {"200": {"description": "The bytes with their Content-Type.", "content": {"image/*": {"schema": {"type": "string", "contentEncoding": "binary"}}}},
                    "304": {"description": "Not modified."}, **errs("404", "503")}}},
 }}
# Answers every operation can give, added here once: rate limits on writes, idempotency-key reuse
# on POSTs, and 503 (database unavailable, too many connections, shutting down).
for path, item in doc["paths"].items():
    for method, op in item.items():
        if method == "parameters":
            continue
        parse = path.startswith("/parse/")
        def answer(desc):
            return {"description": desc, "content": {"application/json": {"schema": ref("ParseError")}}} if parse else problem(desc)
        responses = op["responses"]
        if method in ("post", "put", "patch", "delete"):
            responses.setdefault("429", answer("`rate_limited` (Parse code 155): too many writes or log-ins from this address; see `Retry-After`."))
        if method == "post":
            responses.setdefault("400", answer("Bad input, e.g. `invalid_idempotency_key` (empty or longer than 255 characters)."))
            responses.setdefault("422", answer("`idempotency_key_reused` (Parse code 159): the Idempotency-Key (X-Parse-Request-Id) was used for a different request."))
            op.setdefault("parameters", [])
            op["parameters"] = op["parameters"] + [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                "description": "Makes a logged-in POST safe to retry: within 24 h the same key answers the first answer without redoing the work."}]
        responses.setdefault("503", answer("`database_unavailable`, `too_many_connections` or `shutting_down`: retry after `Retry-After` seconds."))

text = json.dumps(doc, ensure_ascii=False, indent=1)
assert '"""#' not in text
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Sources/CafeApp/Controllers/OpenAPIDocument.swift'), 'w').write(
 "// The OpenAPI 3.1 description of the HTTP API, served at GET /openapi.json.\n// Generated by tools/openapi.py: edit that file, not this one.\n"
 "// A test checks that every route in the router is documented here and vice versa.\n\n"
 "enum OpenAPIDocument {\n    static let json = #\"\"\"\n" + text + "\n\"\"\"#\n}\n")
