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
   "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
  }},
 "paths": {
  "/healthz": {"get": {"summary": "The process is up.", "operationId": "health", "responses": {"200": js(ref("Health"))}}},
  "/readyz": {"get": {"summary": "The database answers and no migration is pending.", "operationId": "ready",
      "responses": {"200": js(ref("Health")), "503": problem("`database_unavailable` or `migrations_pending`.")}}},
  "/openapi.json": {"get": {"summary": "This document.", "operationId": "openapi", "responses": {"200": js({"type": "object"})}}},
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
 }}
text = json.dumps(doc, ensure_ascii=False, indent=1)
assert '"""#' not in text
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Sources/CafeApp/Controllers/OpenAPIDocument.swift'), 'w').write(
 "// The OpenAPI 3.1 description of the HTTP API, served at GET /openapi.json.\n// Generated by tools/openapi.py: edit that file, not this one.\n"
 "// A test checks that every route in the router is documented here and vice versa.\n\n"
 "enum OpenAPIDocument {\n    static let json = #\"\"\"\n" + text + "\n\"\"\"#\n}\n")
