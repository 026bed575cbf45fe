#ifndef CAFE_OBJECT_REQUEST_H
#define CAFE_OBJECT_REQUEST_H

#include <stddef.h>

// One HTTP request through libcurl (Debian libcurl4-openssl-dev), signed with AWS Signature Version 4
// by libcurl itself (CURLOPT_AWS_SIGV4), behind a header with no curl types: curl_easy_setopt is variadic.

/// A reusable libcurl handle: it keeps its connections open between requests. One thread at a time.
typedef struct cafe_object_client cafe_object_client;

cafe_object_client *cafe_object_client_new(void);
void cafe_object_client_free(cafe_object_client *client);

typedef struct {
    long status;                 // the HTTP status, 0 when no answer came
    unsigned char *body;         // the answer's body (malloc'd; free with cafe_object_result_free)
    size_t body_length;
    int truncated;               // the body was longer than `max_body` and was cut off
    char error[256];             // libcurl's message when no answer came
} cafe_object_result;

/// `sigv4` is curl's provider string ("aws:amz:REGION:s3"), `credentials` "KEY:SECRET"; `headers` are
/// whole "Name: value" lines; `ca_file` (or NULL: the system's) the certificates a TLS store is checked against. Returns 0 when an answer came (any status), else libcurl's error code.
int cafe_object_request(cafe_object_client *client, const char *method, const char *url,
                        const char *const *headers, size_t header_count, const void *body, size_t body_length,
                        const char *sigv4, const char *credentials, const char *ca_file, long timeout_ms, size_t max_body,
                        cafe_object_result *result);

void cafe_object_result_free(cafe_object_result *result);

#endif
