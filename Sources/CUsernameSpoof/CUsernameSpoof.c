#include "CUsernameSpoof.h"

#include <pthread.h>
#include <unicode/uspoof.h>

// One checker, configured once and then only read: ICU allows concurrent checks on it.
static USpoofChecker *checker;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_checker(void) {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker *made = uspoof_open(&status);
    if (U_FAILURE(status)) return;
    uspoof_setRestrictionLevel(made, USPOOF_MODERATELY_RESTRICTIVE);
    uspoof_setChecks(made, USPOOF_RESTRICTION_LEVEL | USPOOF_INVISIBLE | USPOOF_MIXED_NUMBERS, &status);
    if (U_FAILURE(status)) { uspoof_close(made); return; }
    checker = made;
}

int cafe_username_allowed(const char *text, int32_t length) {
    pthread_once(&once, open_checker);
    if (checker == NULL) return -1;
    UErrorCode status = U_ZERO_ERROR;
    int32_t failed = uspoof_checkUTF8(checker, text, length, NULL, &status);
    if (U_FAILURE(status)) return -1;
    return failed == 0 ? 1 : 0;
}

int32_t cafe_username_skeleton(const char *text, int32_t length, char *out, int32_t capacity) {
    pthread_once(&once, open_checker);
    if (checker == NULL) return -1;
    UErrorCode status = U_ZERO_ERROR;
    int32_t written = uspoof_getSkeletonUTF8(checker, 0, text, length, out, capacity, &status);
    return U_FAILURE(status) || written >= capacity ? -1 : written;
}
