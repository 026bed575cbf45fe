#include "CObjectRequest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

struct cafe_object_client {
    CURL *curl;
};

static pthread_once_t started = PTHREAD_ONCE_INIT;
static void start(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

cafe_object_client *cafe_object_client_new(void) {
    pthread_once(&started, start);
    cafe_object_client *client = calloc(1, sizeof *client);
    if (client == NULL) return NULL;
    client->curl = curl_easy_init();
    if (client->curl == NULL) { free(client); return NULL; }
    return client;
}

void cafe_object_client_free(cafe_object_client *client) {
    if (client == NULL) return;
    curl_easy_cleanup(client->curl);
    free(client);
}

typedef struct {
    const unsigned char *data;
    size_t length, offset;
} upload;

static size_t read_body(char *buffer, size_t size, size_t count, void *context) {
    upload *u = context;
    size_t n = size * count, left = u->length - u->offset;
    if (n > left) n = left;
    memcpy(buffer, u->data + u->offset, n);
    u->offset += n;
    return n;
}

typedef struct {
    cafe_object_result *result;
    size_t capacity, max;
} download;

static size_t write_body(char *data, size_t size, size_t count, void *context) {
    download *d = context;
    cafe_object_result *r = d->result;
    size_t n = size * count;
    if (r->body_length + n > d->max) { r->truncated = 1; return 0; }   // stops the transfer
    if (r->body_length + n > d->capacity) {
        size_t capacity = d->capacity ? d->capacity : 16384;
        while (capacity < r->body_length + n) capacity *= 2;
        if (capacity > d->max) capacity = d->max;
        unsigned char *grown = realloc(r->body, capacity);
        if (grown == NULL) return 0;
        r->body = grown;
        d->capacity = capacity;
    }
    memcpy(r->body + r->body_length, data, n);
    r->body_length += n;
    return n;
}

int cafe_object_request(cafe_object_client *client, const char *method, const char *url,
                        const char *const *headers, size_t header_count, const void *body, size_t body_length,
                        const char *sigv4, const char *credentials, const char *ca_file, long timeout_ms, size_t max_body,
                        cafe_object_result *result) {
    memset(result, 0, sizeof *result);
    CURL *curl = client->curl;
    curl_easy_reset(curl);
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) list = curl_slist_append(list, headers[i]);
    // (An `Expect:` header removed here would be signed by curl's SigV4 but not sent: S3 then refuses the signature.)

    upload up = {body, body_length, 0};
    download down = {result, 0, max_body};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(curl, CURLOPT_USERPWD, credentials);
    if (ca_file != NULL) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &down);
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(curl, CURLOPT_READDATA, &up);
        curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body_length);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    }
    CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(list);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && result->truncated)) {
        strncpy(result->error, curl_easy_strerror(code), sizeof result->error - 1);
        free(result->body);
        result->body = NULL;
        result->body_length = 0;
        return (int)code;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    return 0;
}

void cafe_object_result_free(cafe_object_result *result) {
    free(result->body);
    result->body = NULL;
    result->body_length = 0;
}
