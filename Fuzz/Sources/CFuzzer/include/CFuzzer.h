// libFuzzer's driver, called from each target's main (SwiftPM names an executable's entry
// point itself, so libFuzzer's own `main` cannot be the program's).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
