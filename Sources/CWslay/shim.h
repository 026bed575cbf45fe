// wslay (Debian libwslay-dev): RFC 6455 WebSocket framing that does no network I/O of its own.
#include <sys/types.h>
#include <wslay/wslay.h>
