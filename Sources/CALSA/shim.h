// alsa-lib for Swift. Most of the API imports directly; the shims below cover
// the macros and the few calls whose C signature Swift cannot use as is.
#ifndef CALLAUDIO_CALSA_SHIM_H
#define CALLAUDIO_CALSA_SHIM_H

#include <alsa/asoundlib.h>

// snd_lib_error_set_handler takes a variadic callback type Swift cannot express:
// install a handler that drops alsa-lib's stderr chatter (errors reach Swift as return codes).
static void callaudio_snd_silent_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline int callaudio_snd_lib_silence_errors(void) {
    return snd_lib_error_set_handler(callaudio_snd_silent_error_handler);
}

#endif
