// The same program built as C++ (public_api.c says what it checks).
#include "public_api.c"
