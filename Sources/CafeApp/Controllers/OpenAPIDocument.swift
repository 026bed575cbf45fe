// The OpenAPI 3.1 description of the HTTP API, served at GET /openapi.json.
// A test checks that every route in the router is documented here and vice versa.

enum OpenAPIDocument {
    static let json = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "CafeReview API",
  "version": "1.0.0",
  "description": "Browse and search cafes, read comments, and after logging in post comments with a 1–3 star rating and a photo. A Cafe is *CafeMaster* and a Comment is *CafeTransactionComment* in the original app. JSON bodies use camelCase; unknown request fields are rejected (400). Every error is application/problem+json with a stable `code`. A 2xx answer means the change is committed. `commentSum`, `commentAmount` and `averageStar` are maintained by the aggregation worker and lag writes by about a second."
 },
 "components": {
  "securitySchemes": {
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "description": "The `sessionToken` from sign-up or log-in."
   }
  },
  "schemas": {
   "Problem": {
    "type": "object",
    "required": [
     "type",
     "title",
     "status",
     "code"
    ],
    "properties": {
     "type": {
      "type": "string"
     },
     "title": {
      "type": "string"
     },
     "status": {
      "type": "integer"
     },
     "detail": {
      "type": [
       "string",
       "null"
      ]
     },
     "code": {
      "type": "string",
      "description": "Stable machine-readable error code."
     },
     "errors": {
      "type": "array",
      "items": {
       "type": "object",
       "required": [
        "field",
        "message"
       ],
       "properties": {
        "field": {
         "type": "string"
        },
        "message": {
         "type": "string"
        }
       }
      }
     }
    }
   },
   "User": {
    "type": "object",
    "required": [
     "id",
     "username",
     "email",
     "emailVerified",
     "age",
     "createdAt",
     "updatedAt"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "username": {
      "type": "string"
     },
     "email": {
      "type": [
       "string",
       "null"
      ],
      "description": "Shown to its owner only."
     },
     "emailVerified": {
      "type": "boolean"
     },
     "age": {
      "type": [
       "integer",
       "null"
      ]
     },
     "createdAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     },
     "updatedAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     }
    }
   },
   "Session": {
    "type": "object",
    "required": [
     "user",
     "sessionToken"
    ],
    "properties": {
     "user": {
      "$ref": "#/components/schemas/User"
     },
     "sessionToken": {
      "type": "string"
     }
    }
   },
   "Cafe": {
    "type": "object",
    "required": [
     "id",
     "name",
     "catchCopy",
     "introduction",
     "imageUrl",
     "publishDate",
     "commentSum",
     "commentAmount",
     "averageStar",
     "createdAt",
     "updatedAt"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "name": {
      "type": "string"
     },
     "catchCopy": {
      "type": "string"
     },
     "introduction": {
      "type": "string"
     },
     "imageUrl": {
      "type": [
       "string",
       "null"
      ]
     },
     "publishDate": {
      "type": [
       "string",
       "null"
      ]
     },
     "commentSum": {
      "type": "integer",
      "description": "Number of comments."
     },
     "commentAmount": {
      "type": "integer",
      "description": "Sum of the comments' stars."
     },
     "averageStar": {
      "type": [
       "number",
       "null"
      ],
      "description": "commentAmount / commentSum rounded to 2 decimals; null without comments."
     },
     "createdAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     },
     "updatedAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     }
    }
   },
   "Comment": {
    "type": "object",
    "required": [
     "id",
     "cafeId",
     "userId",
     "username",
     "detail",
     "star",
     "imageUrl",
     "createdAt",
     "updatedAt"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "cafeId": {
      "type": "string"
     },
     "userId": {
      "type": "string"
     },
     "username": {
      "type": "string"
     },
     "detail": {
      "type": "string"
     },
     "star": {
      "type": "integer",
      "minimum": 1,
      "maximum": 3
     },
     "imageUrl": {
      "type": [
       "string",
       "null"
      ]
     },
     "createdAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     },
     "updatedAt": {
      "type": "string",
      "format": "date-time",
      "description": "ISO-8601 UTC with milliseconds, e.g. 2026-11-29T16:34:33.123Z"
     }
    }
   },
   "CafePage": {
    "type": "object",
    "required": [
     "items",
     "nextCursor"
    ],
    "properties": {
     "items": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Cafe"
      }
     },
     "nextCursor": {
      "type": [
       "string",
       "null"
      ]
     }
    }
   },
   "CommentPage": {
    "type": "object",
    "required": [
     "items",
     "nextCursor"
    ],
    "properties": {
     "items": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Comment"
      }
     },
     "nextCursor": {
      "type": [
       "string",
       "null"
      ]
     }
    }
   },
   "File": {
    "type": "object",
    "required": [
     "id",
     "url",
     "contentType",
     "size"
    ],
    "properties": {
     "id": {
      "type": "string"
     },
     "url": {
      "type": "string"
     },
     "contentType": {
      "type": "string"
     },
     "size": {
      "type": "integer"
     }
    }
   },
   "Health": {
    "type": "object",
    "required": [
     "status"
    ],
    "properties": {
     "status": {
      "type": "string"
     }
    }
   }
  }
 },
 "paths": {
  "/healthz": {
   "get": {
    "summary": "The process is up.",
    "operationId": "health",
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     }
    }
   }
  },
  "/readyz": {
   "get": {
    "summary": "The database answers and no migration is pending.",
    "operationId": "ready",
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable` or `migrations_pending`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/openapi.json": {
   "get": {
    "summary": "This document.",
    "operationId": "openapi",
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/v1/users": {
   "post": {
    "summary": "Sign up.",
    "operationId": "signUp",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "required": [
         "username",
         "password"
        ],
        "properties": {
         "username": {
          "type": "string",
          "minLength": 3,
          "maxLength": 40,
          "description": "Letters of any script, digits, _ . -; unique regardless of case."
         },
         "password": {
          "type": "string",
          "minLength": 8,
          "maxLength": 200
         },
         "email": {
          "type": "string",
          "format": "email"
         },
         "age": {
          "type": "integer",
          "minimum": 0,
          "maximum": 150
         }
        }
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Created; logged in.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "409": {
      "description": "`username_taken`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/users/me": {
   "get": {
    "summary": "The logged-in user.",
    "operationId": "me",
    "security": [
     {
      "bearer": []
     }
    ],
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/User"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/sessions": {
   "post": {
    "summary": "Log in.",
    "operationId": "logIn",
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "required": [
         "username",
         "password"
        ],
        "properties": {
         "username": {
          "type": "string"
         },
         "password": {
          "type": "string"
         }
        }
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Logged in.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`invalid_credentials` (unknown user and wrong password look the same).",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "429": {
      "description": "`too_many_attempts`: 5 failures for this username in 15 minutes; see `Retry-After`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/sessions/current": {
   "delete": {
    "summary": "Log out: the token is revoked everywhere.",
    "operationId": "logOut",
    "security": [
     {
      "bearer": []
     }
    ],
    "responses": {
     "204": {
      "description": "Logged out."
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/cafes": {
   "get": {
    "summary": "Cafes, newest first, optionally searched.",
    "operationId": "listCafes",
    "parameters": [
     {
      "name": "q",
      "in": "query",
      "schema": {
       "type": "string",
       "maxLength": 200
      },
      "description": "Case-insensitive substring of the name, catch copy or introduction."
     },
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 100,
       "default": 20
      }
     },
     {
      "name": "cursor",
      "in": "query",
      "schema": {
       "type": "string"
      },
      "description": "`nextCursor` of the previous page."
     }
    ],
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/CafePage"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "post": {
    "summary": "Add a cafe (admin).",
    "operationId": "createCafe",
    "security": [
     {
      "bearer": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "required": [
         "name",
         "catchCopy",
         "introduction"
        ],
        "properties": {
         "name": {
          "type": "string",
          "minLength": 1,
          "maxLength": 100
         },
         "catchCopy": {
          "type": "string",
          "maxLength": 200
         },
         "introduction": {
          "type": "string",
          "maxLength": 5000
         },
         "imageId": {
          "type": [
           "string",
           "null"
          ]
         },
         "publishDate": {
          "type": [
           "string",
           "null"
          ],
          "maxLength": 40
         }
        }
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Created.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Cafe"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "`forbidden`: logged in but not allowed.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/cafes/{id}": {
   "parameters": [
    {
     "name": "id",
     "in": "path",
     "required": true,
     "schema": {
      "type": "string"
     },
     "description": "Opaque id."
    }
   ],
   "get": {
    "summary": "One cafe.",
    "operationId": "getCafe",
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Cafe"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "patch": {
    "summary": "Change a cafe (admin); absent fields stay, null clears imageId/publishDate.",
    "operationId": "updateCafe",
    "security": [
     {
      "bearer": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "properties": {
         "name": {
          "type": "string",
          "minLength": 1,
          "maxLength": 100
         },
         "catchCopy": {
          "type": "string",
          "maxLength": 200
         },
         "introduction": {
          "type": "string",
          "maxLength": 5000
         },
         "imageId": {
          "type": [
           "string",
           "null"
          ]
         },
         "publishDate": {
          "type": [
           "string",
           "null"
          ]
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Cafe"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "`forbidden`: logged in but not allowed.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "delete": {
    "summary": "Delete a cafe and its comments (admin).",
    "operationId": "deleteCafe",
    "security": [
     {
      "bearer": []
     }
    ],
    "responses": {
     "204": {
      "description": "Deleted."
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "`forbidden`: logged in but not allowed.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/cafes/{id}/comments": {
   "parameters": [
    {
     "name": "id",
     "in": "path",
     "required": true,
     "schema": {
      "type": "string"
     },
     "description": "Opaque id."
    }
   ],
   "get": {
    "summary": "A cafe's comments, newest first.",
    "operationId": "listComments",
    "parameters": [
     {
      "name": "limit",
      "in": "query",
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 100,
       "default": 100
      }
     },
     {
      "name": "cursor",
      "in": "query",
      "schema": {
       "type": "string"
      },
      "description": "`nextCursor` of the previous page."
     }
    ],
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/CommentPage"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "post": {
    "summary": "Comment on a cafe (logged in). The author is the session's user.",
    "operationId": "createComment",
    "security": [
     {
      "bearer": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "required": [
         "detail",
         "star"
        ],
        "properties": {
         "detail": {
          "type": "string",
          "minLength": 1,
          "maxLength": 2000
         },
         "star": {
          "type": "integer",
          "minimum": 1,
          "maximum": 3
         },
         "imageId": {
          "type": [
           "string",
           "null"
          ],
          "description": "A file you uploaded."
         }
        }
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Created.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Comment"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/comments/{id}": {
   "parameters": [
    {
     "name": "id",
     "in": "path",
     "required": true,
     "schema": {
      "type": "string"
     },
     "description": "Opaque id."
    }
   ],
   "patch": {
    "summary": "Edit your own comment (author only; admins may not edit others' words).",
    "operationId": "updateComment",
    "security": [
     {
      "bearer": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "additionalProperties": false,
        "properties": {
         "detail": {
          "type": "string",
          "minLength": 1,
          "maxLength": 2000
         },
         "star": {
          "type": "integer",
          "minimum": 1,
          "maximum": 3
         },
         "imageId": {
          "type": [
           "string",
           "null"
          ]
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "OK",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Comment"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "`forbidden`: logged in but not allowed.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   },
   "delete": {
    "summary": "Delete a comment (author or admin).",
    "operationId": "deleteComment",
    "security": [
     {
      "bearer": []
     }
    ],
    "responses": {
     "204": {
      "description": "Deleted."
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "403": {
      "description": "`forbidden`: logged in but not allowed.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/files": {
   "post": {
    "summary": "Upload a photo (logged in): raw bytes, at most 5 MiB; the bytes must be the declared format.",
    "operationId": "uploadFile",
    "security": [
     {
      "bearer": []
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "image/png": {
       "schema": {
        "type": "string",
        "contentEncoding": "binary"
       }
      },
      "image/jpeg": {
       "schema": {
        "type": "string",
        "contentEncoding": "binary"
       }
      },
      "image/webp": {
       "schema": {
        "type": "string",
        "contentEncoding": "binary"
       }
      },
      "image/gif": {
       "schema": {
        "type": "string",
        "contentEncoding": "binary"
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Stored.",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/File"
        }
       }
      }
     },
     "400": {
      "description": "Bad input: `invalid_json`, `validation_failed` (with `errors`), `invalid_cursor`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "401": {
      "description": "`unauthorized`: no, invalid, revoked or expired session token.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "413": {
      "description": "`payload_too_large`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "415": {
      "description": "`unsupported_media_type`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  },
  "/v1/files/{id}": {
   "parameters": [
    {
     "name": "id",
     "in": "path",
     "required": true,
     "schema": {
      "type": "string"
     },
     "description": "Opaque id."
    }
   ],
   "get": {
    "summary": "A photo's bytes (immutable; ETag / If-None-Match).",
    "operationId": "getFile",
    "responses": {
     "200": {
      "description": "The bytes with their Content-Type.",
      "content": {
       "image/*": {
        "schema": {
         "type": "string",
         "contentEncoding": "binary"
        }
       }
      }
     },
     "304": {
      "description": "Not modified."
     },
     "404": {
      "description": "`not_found`.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     },
     "503": {
      "description": "`database_unavailable`: retry after `Retry-After` seconds.",
      "content": {
       "application/problem+json": {
        "schema": {
         "$ref": "#/components/schemas/Problem"
        }
       }
      }
     }
    }
   }
  }
 }
}
"""#
}
