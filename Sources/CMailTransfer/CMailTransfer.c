#include "CMailTransfer.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <curl/curl.h>

static pthread_once_t started = PTHREAD_ONCE_INIT;
static void start(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct {
    const char *data;
    size_t length, offset;
} message;

static size_t read_message(char *buffer, size_t size, size_t count, void *context) {
    message *m = context;
    size_t n = size * count, left = m->length - m->offset;
    if (n > left) n = left;
    memcpy(buffer, m->data + m->offset, n);
    m->offset += n;
    return n;
}

int cafe_mail_send(const char *url, const char *from, const char *to, const char *text, size_t length,
                   int require_tls, const char *ca_file, long timeout_ms, cafe_mail_result *result) {
    pthread_once(&started, start);
    memset(result, 0, sizeof *result);
    CURL *curl = curl_easy_init();
    if (curl == NULL) { snprintf(result->error, sizeof result->error, "curl_easy_init failed"); return CURLE_FAILED_INIT; }
    char sender[300], recipient[300];
    snprintf(sender, sizeof sender, "<%s>", from);
    snprintf(recipient, sizeof recipient, "<%s>", to);
    struct curl_slist *recipients = curl_slist_append(NULL, recipient);
    message m = { text, length, 0 };
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)(require_tls ? CURLUSESSL_ALL : CURLUSESSL_TRY));
    if (ca_file != NULL) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(curl, CURLOPT_MAIL_FROM, sender);
    curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, recipients);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_message);
    curl_easy_setopt(curl, CURLOPT_READDATA, &m);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)length);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    char error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->smtp_code);
    if (code != CURLE_OK) {
        snprintf(result->error, sizeof result->error, "%s", error[0] ? error : curl_easy_strerror(code));
    }
    curl_slist_free_all(recipients);
    curl_easy_cleanup(curl);
    return (int)code;
}
