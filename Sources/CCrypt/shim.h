// libxcrypt: verifies the bcrypt hashes ($2a$/$2b$/$2y$) Parse Server stored, for imported accounts.
#include <crypt.h>
