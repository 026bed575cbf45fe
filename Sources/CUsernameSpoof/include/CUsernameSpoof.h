#ifndef CAFE_USERNAME_SPOOF_H
#define CAFE_USERNAME_SPOOF_H

#include <stdint.h>

// ICU's Unicode security mechanisms (UTS 39, `uspoof`) behind a header with no ICU types: Swift's
// Foundation carries an ICU of its own, whose module clashes with the system's headers, and ICU
// renames its functions by version through macros Swift cannot call.

/// Whether `text` (UTF-8) keeps to UTS 39's "moderately restrictive" profile with no invisible
/// characters and one system of digits: 1 yes, 0 no, -1 when ICU cannot tell.
int cafe_username_allowed(const char *text, int32_t length);

/// The confusable skeleton of `text` (UTF-8) into `out`: its length, or -1 (also when it does not fit).
int32_t cafe_username_skeleton(const char *text, int32_t length, char *out, int32_t capacity);

#endif
