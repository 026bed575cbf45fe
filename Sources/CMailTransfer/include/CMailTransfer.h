#ifndef CAFE_MAIL_TRANSFER_H
#define CAFE_MAIL_TRANSFER_H

#include <stddef.h>

// One message over SMTP through libcurl (Debian libcurl4-openssl-dev), behind a header with no curl
// types: curl_easy_setopt is variadic. smtp:// upgrades with STARTTLS whenever the server offers it
// (and fails without it when `require_tls`); smtps:// is TLS from the start. Certificates are checked
// against the system's authorities, or `ca_file` when given. Credentials come from the URL's userinfo.

typedef struct {
    long smtp_code;      // the server's last reply code, 0 when none came
    char error[256];     // libcurl's message when it failed
} cafe_mail_result;

/// `from` and `to` are bare addresses; `message` the whole RFC 5322 text with CRLF line ends.
/// Returns 0 when the server accepted the message, else libcurl's error code.
int cafe_mail_send(const char *url, const char *from, const char *to, const char *message, size_t length,
                   int require_tls, const char *ca_file, long timeout_ms, cafe_mail_result *result);

#endif
