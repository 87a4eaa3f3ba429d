// Empty: the module is the header's declaration of LLVMFuzzerRunDriver (libclang_rt.fuzzer).
#include "CFuzzer.h"
